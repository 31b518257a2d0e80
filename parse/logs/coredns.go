package logs

import (
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// CoreDNSLogFormat reads CoreDNS's log.
var CoreDNSLogFormat = logFormat("coredns", format.Format{
	Name:    "coredns-log",
	Command: "kubectl logs -n kube-system -l k8s-app=kube-dns, kubectl logs coredns-XXXX (CoreDNS)",
	Doc: "`[INFO] plugin/kubernetes: msg` lines, after a time in some releases (RFC 3339 with " +
		"milliseconds, or Go's log time `2018/05/04 06:09:56`): the level as written (`INFO`, " +
		"`WARNING`, `ERROR`, `DEBUG`, `FATAL`), the plugin in Fields `plugin`; the errors " +
		"plugin's `rcode`, `qname`, `qtype`; the log plugin's query lines in Fields named after " +
		"its placeholders (`remote`, `id`, `type`, `class`, `name`, `proto`, `rcode`, `rflags`, " +
		"`rsize`, `duration` ...); the startup banner (`.:53`, `CoreDNS-1.11.1`, `linux/amd64, " +
		"go1.20.7, ae2bbc2`) in `server`/`port`/`bind`, `version`, `platform`/`go`/`commit`; " +
		"client-go's `Trace[...]` steps continue their entry. The source is `coredns`; a bare " +
		"`[WARNING] msg` line is CoreDNS's once the log has shown CoreDNS's own lines. An invalid" +
		" time is a warning and the entry is read without it",
})

//
// CoreDNS logs through its own small package (plugin/pkg/log): a level in
// brackets, then the plugin that speaks ("[INFO] plugin/kubernetes: msg").
// Some releases put a time before it: RFC 3339 with milliseconds
// ("2021-08-12T05:09:08.093Z [ERROR] ...", 1.6), or Go's log time
// ("2018/05/04 06:09:56 [INFO] ...", 1.1); even then some lines ("[INFO]
// Reloading") come without one. At
// start it prints its server addresses (".:53"), its version
// ("CoreDNS-1.11.1") and its build ("linux/amd64, go1.20.7, ae2bbc2") as
// bare lines. The log plugin writes one line per query after "[INFO] ",
// and client-go's klog output (reflector errors, traces) reaches the log
// through the kubernetes plugin.

var (
	// corednsRe matches the time and level before a CoreDNS message.
	corednsRe = lazyre.New(`^(?:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)|\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) )?\[(INFO|WARNING|ERROR|DEBUG|FATAL)\] `)
	// corednsTimeRe finds a time that corednsRe refused (an invalid date
	// or clock) before a level, to report it.
	corednsTimeRe   = lazyre.New(`^(\d{4}-\d\d-\d\dT\S*|\d{4}/\d\d/\d\d \S+) \[(INFO|WARNING|ERROR|DEBUG|FATAL)\] `)
	corednsPluginRe = lazyre.New(`^plugin/([a-z0-9_]+): `)
	// The log plugin's default format: {remote}:{port} - {>id} "{type}
	// {class} {name} {proto} {size} {>do} {>bufsize}" {rcode} {>rflags}
	// {rsize} {duration}.
	corednsQueryRe = lazyre.New(`^(\S+) - (\d+) "(\S+) (\S+) (\S+) (\S+) (\d+) (\S+) (\d+)" (\S+) (\S*) (\d+) ([\d.]+(?:[nµu]?s|ms)?)$`)
	// The errors plugin: "RCODE NAME TYPE: error".
	corednsErrorsRe = lazyre.New(`^(\d+) (\S+) (\S+): `)
	// The startup banner: the servers (".:53", "cluster.local.:53",
	// "tls://.:853", ".:53 on 127.0.0.1"), the version and the build.
	corednsServerRe  = lazyre.New(`^(?:[a-z]+://)?(?:\.|(?:[A-Za-z0-9_*-]+\.)+):(\d{1,5})(?: on (\S+))?$`)
	corednsVersionRe = lazyre.New(`^CoreDNS-(\d+\.\d+\.\d+\S*)$`)
	corednsBuildRe   = lazyre.New(`^([a-z0-9]+/[a-z0-9_]+), (go\d[\w.]*), (\S*)$`)
)

// corednsQueryFields names the submatches of corednsQueryRe.
var corednsQueryFields = []string{"remote", "id", "type", "class", "name", "proto", "size", "do", "bufsize", "rcode", "rflags", "rsize", "duration"}

// problemMarker is a Fields key a line parser uses to report a problem
// with a line it still read; line() reports it with the line's position.
const problemMarker = "\x00problem"

// parseCoreDNS reads a CoreDNS log line. kind is "coredns" for the shapes
// only CoreDNS writes (a plugin's line, a query log line, a dated line, the
// banner), "clog" for a bare "[LEVEL] msg" line that other programs write
// too (etcd's warnings about its flags).
func parseCoreDNS(line string) (model.LogEvent, string, bool) {
	if ev, ok := parseCoreDNSBanner(line); ok {
		return ev, "coredns", true
	}
	if line[0] != '[' && !corednsDated(line) {
		return model.LogEvent{}, "", false
	}
	m, msg := submatches(corednsRe, line)
	problem := ""
	if m == nil {
		// A time of the right shape that does not parse: read the
		// entry without it, and say so.
		if m, msg = submatches(corednsTimeRe, line); m == nil {
			return model.LogEvent{}, "", false
		}
		problem = "invalid time " + m[1] + " in a CoreDNS line: the entry is read without it"
	}
	ev := model.LogEvent{Level: m[2], Message: msg}
	kind := "clog"
	if m[1] != "" && problem == "" {
		t, err := parseISOTime(m[1])
		if m[1][4] == '/' {
			t, err = time.Parse("2006/01/02 15:04:05", m[1])
		}
		if err != nil {
			problem = "invalid time " + m[1] + " in a CoreDNS line: the entry is read without it"
		} else {
			ev.Time = t.UTC()
		}
	}
	if m[1] != "" {
		kind = "coredns" // a dated "[LEVEL]" line is CoreDNS's own
	}
	if p, rest := submatches(corednsPluginRe, msg); p != nil {
		kind = "coredns"
		ev.Message = rest
		ev.Fields = map[string]string{"plugin": p[1]}
		if e := corednsErrorsRe.FindStringSubmatch(rest); e != nil && p[1] == "errors" {
			ev.Fields["rcode"], ev.Fields["qname"], ev.Fields["qtype"] = e[1], e[2], e[3]
		}
	} else if q := corednsQueryRe.FindStringSubmatch(msg); q != nil {
		kind = "coredns"
		ev.Fields = map[string]string{"plugin": "log"}
		for i, k := range corednsQueryFields {
			ev.Fields[k] = q[i+1]
		}
	}
	if kind == "coredns" && (ev.Fields != nil || m[1] == "") {
		// A plugin's line or a query's is CoreDNS's own; a dated
		// "[LEVEL]" line alone is its shape, which other programs
		// (ipamd) write too: the reader names its source.
		ev.Source = "coredns"
	}
	if problem != "" {
		if ev.Fields == nil {
			ev.Fields = map[string]string{}
		}
		ev.Fields[problemMarker] = problem
	}
	return ev, kind, true
}

// parseCoreDNSBanner reads the lines CoreDNS prints at start: a server
// address, the version, the build.
func parseCoreDNSBanner(line string) (model.LogEvent, bool) {
	ev := model.LogEvent{Source: "coredns", Message: line}
	if strings.HasPrefix(line, "CoreDNS-") {
		if m := corednsVersionRe.FindStringSubmatch(line); m != nil {
			ev.Fields = map[string]string{"version": m[1]}
			return ev, true
		}
	}
	if c := line[0]; c != '.' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
		return model.LogEvent{}, false
	}
	// Cheap tests first: most lines reaching here are other logs' lines.
	if len(line) < 256 && strings.Count(line, " ") <= 2 && strings.IndexByte(line, ':') > 0 {
		if m := corednsServerRe.FindStringSubmatch(line); m != nil {
			ev.Fields = map[string]string{"server": strings.TrimSuffix(line, " on "+m[2]), "port": m[1]}
			if m[2] != "" {
				ev.Fields["bind"] = m[2]
			}
			return ev, true
		}
	}
	if !strings.Contains(line, ", go") {
		return model.LogEvent{}, false
	}
	if m := corednsBuildRe.FindStringSubmatch(line); m != nil {
		ev.Fields = map[string]string{"platform": m[1], "go": m[2], "commit": m[3]}
		return ev, true
	}
	return model.LogEvent{}, false
}

// corednsDated reports whether line may be a dated CoreDNS line: a digit,
// then " [" and an upper-case level within the first 40 bytes (nginx's
// error log has lower-case levels).
func corednsDated(line string) bool {
	if line[0] < '0' || line[0] > '9' {
		return false
	}
	i := strings.Index(line[:min(len(line), 40)], " [")
	return i > 0 && i+2 < len(line) && line[i+2] >= 'A' && line[i+2] <= 'Z'
}

// corednsSource is the source of a bare "[LEVEL] msg" line: CoreDNS's when
// the log has shown CoreDNS's own lines, the reader's otherwise.
func (lr *logReader) corednsSource(ev *model.LogEvent) {
	if ev.Source == "" && lr.corednsSeen && (lr.source == "" || lr.source == "coredns") {
		ev.Source = "coredns"
	}
}
