package logs

import (
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// EtcdLogFormat reads etcd's text log (capnslog, up to etcd 3.4).
var EtcdLogFormat = logFormat("etcd", format.Format{
	Name:    "etcd-log",
	Command: "etcd's text log (etcd up to 3.4): kubectl logs etcd-NODE, journalctl -u etcd",
	Doc: "`2018-12-04 22:47:14.729606 I | embed: msg` (package in Fields `pkg`), raft's " +
		"`raft2026/11/23 13:19:08 INFO: ...` lines and etcd's `[WARNING]` lines",
})

var (
	etcdTextRe = lazyre.New(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) ([CEWNIDT]) \| `)
	etcdPkgRe  = lazyre.New(`^([a-z0-9][a-z0-9_./-]*): (.*)$`)
	// etcd's raft logger: Go's log package with the prefix "raft".
	etcdRaftRe = lazyre.New(`^raft(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) ([A-Z]+): (.*)$`)
)

func parseEtcdText(line string) (model.LogEvent, bool) {
	// "2018-12-04 ..." or "raft2026/11/23 ...".
	if len(line) < 10 || (line[4] != '-' && !strings.HasPrefix(line, "raft")) {
		return model.LogEvent{}, false
	}
	m, msg := submatches(etcdTextRe, line)
	if m == nil {
		if r := etcdRaftRe.FindStringSubmatch(line); r != nil {
			if ts, err := time.Parse("2006/01/02 15:04:05", r[1]); err == nil {
				return model.LogEvent{Source: "etcd", Time: ts, Level: r[2], Message: r[3], Fields: map[string]string{"pkg": "raft"}}, true
			}
		}
		return model.LogEvent{}, false
	}
	ts, err := time.Parse("2006-01-02 15:04:05.999999999", m[1])
	if err != nil {
		return model.LogEvent{}, false
	}
	ev := model.LogEvent{Source: "etcd", Time: ts, Level: m[2], Message: msg}
	if p := etcdPkgRe.FindStringSubmatch(msg); p != nil {
		ev.Message = p[2]
		ev.Fields = map[string]string{"pkg": p[1]}
	}
	return ev, true
}
