package logs

import (
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// DmesgFormat reads the kernel's log as dmesg prints it.
var DmesgFormat = logFormat("dmesg", format.Format{
	Name:    "dmesg",
	Command: "dmesg with or without -T, -x, -r, --time-format iso (journalctl -k is read as syslog)",
	Doc: "the kernel's lines as log events of source `kernel`: seconds since boot in Fields " +
		"`uptime`, or -T's and iso's date as the time; -x's facility and level, -r's priority as " +
		"the level; read by the same reader as the other logs. `conntrack-drops` reads " +
		"nf_conntrack's \"table full, dropping packet\"; a line of no log shape continues a line a paste " +
		"hard-wrapped (one ending with `,`, or completed into a known kernel message). A netfilter LOG " +
		"or TRACE line cut from the kernel's log without its prefix (`PREFIX: IN=... OUT=... SRC=... " +
		"DST=...`) is the kernel's line, and so is a kernel message a ticket quotes alone, without the log's " +
		"prefix (`TCP: request_sock_TCP: Possible SYN flooding on port 11211.`, nf_conntrack's table full, the " +
		"neighbour table's overflow, a martian source)",
})

// dmesg's line shapes: an optional -x facility and level or -r priority,
// then the time in brackets (seconds since boot, or -T's date); or
// --time-format iso's time.
var (
	dmesgRe    = lazyre.New(`^(?:([a-z]+) *:([a-z]+) *: |<(\d{1,3})>)?\[ *(\d+\.\d{6}|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\] ?`)
	dmesgISORe = lazyre.New(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d),(\d{6})([+-]\d\d:\d\d) `)
)

// syslogLevels names the syslog priorities' levels (dmesg -x's names).
var syslogLevels = [...]string{"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"}

// parseDmesg reads a line of the kernel's log as dmesg prints it.
func parseDmesg(line string) (model.LogEvent, bool) {
	if m, rest := submatches(dmesgISORe, line); m != nil {
		ts, err := time.Parse("2006-01-02T15:04:05.000000-07:00", m[1]+"."+m[2]+m[3])
		if err != nil {
			return model.LogEvent{}, false
		}
		return model.LogEvent{Source: "kernel", Time: ts.UTC(), Message: rest}, true
	}
	switch c := line[0]; {
	case c == '[' || c == '<':
	case 'a' <= c && c <= 'z': // -x: "kern  :info  : [...]", the facility padded to six
		if i := strings.IndexByte(line, ':'); i < 1 || i > 6 {
			return model.LogEvent{}, false
		}
	default:
		return model.LogEvent{}, false
	}
	m, rest := submatches(dmesgRe, line)
	if m == nil {
		return model.LogEvent{}, false
	}
	ev := model.LogEvent{Source: "kernel", Message: rest, Level: m[2]}
	if m[1] != "" {
		ev.Fields = map[string]string{"facility": m[1]}
	}
	if m[3] != "" {
		pri, _ := strconv.Atoi(m[3])
		ev.Level = syslogLevels[pri&7]
	}
	if strings.Contains(m[4], ":") {
		ts, err := time.Parse("Mon Jan _2 15:04:05 2006", m[4])
		if err != nil {
			return model.LogEvent{}, false
		}
		ev.Time = ts
	} else {
		if ev.Fields == nil {
			ev.Fields = map[string]string{}
		}
		ev.Fields["uptime"] = m[4]
	}
	return ev, true
}
