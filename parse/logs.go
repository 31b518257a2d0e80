package parse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// Log formats. They share one reader (Logs): every line is read by its own
// shape, so that a file mixing them (ingress-nginx writes its klog, nginx's
// access log and nginx's error log to one stream) is read whole whatever
// format it was sniffed as. The formats differ only in their sniffing and
// in the name an input is listed with.

func logFormat(name, command string, sniff func(string, []byte) int) *Format {
	return &Format{
		Name:    name,
		Kind:    model.KindLogs,
		Command: command,
		Sniff:   sniff,
		Parse: func(ctx context.Context, r io.Reader, src *Source, snap *model.Snapshot) (int, error) {
			var errs model.ErrorList
			lr := newLogReader(src.Name, src.Node, src.Command, &errs)
			lr.read(ctx, r)
			snap.Logs = append(snap.Logs, lr.events...)
			src.Count("events", len(lr.events))
			return len(lr.events), errs.Err()
		},
	}
}

var (
	klogFormat = logFormat("klog",
		"journalctl -u kubelet; kubectl logs (kube-proxy, ingress-nginx ...); /var/log/kube-*.log",
		func(_ string, h []byte) int { return sniffLogs(h, "klog") })
	etcdLogFormat = logFormat("etcd-log",
		"etcd's text log (etcd up to 3.4: kubectl logs etcd-NODE, journalctl -u etcd)",
		func(_ string, h []byte) int { return sniffLogs(h, "etcd") })
	jsonLogFormat = logFormat("json-log",
		"kubectl logs of JSON-lines loggers (etcd 3.4+, MetalLB, zap, logrus)",
		func(_ string, h []byte) int { return sniffLogs(h, "json") })
	logfmtFormat = logFormat("logfmt",
		"logrus/logfmt text logs: time=... level=... msg=... (containerd, traefik, kube-vip)",
		func(_ string, h []byte) int { return sniffLogs(h, "logfmt") })
	nginxAccessFormat = logFormat("nginx-access",
		"nginx access log (combined format, ingress-nginx upstreaminfo)",
		func(_ string, h []byte) int { return sniffLogs(h, "nginx-access") })
	nginxErrorFormat = logFormat("nginx-error",
		"nginx error log",
		func(_ string, h []byte) int { return sniffLogs(h, "nginx-error") })
	dmesgFormat = logFormat("dmesg",
		"dmesg (also -T, -x, -r, --time-format iso): the kernel's log",
		func(_ string, h []byte) int { return sniffLogs(h, "dmesg") })
	corednsLogFormat = logFormat("coredns-log",
		"kubectl logs -n kube-system -l k8s-app=kube-dns (CoreDNS: [INFO] plugin/NAME: msg)",
		func(_ string, h []byte) int { return sniffLogs(h, "coredns") })
)

// Logs reads log lines into events, one per line (or per multi-line
// entry), each with its position, time, level, source and message, and
// key/value Fields:
//
//   - klog: "I0915 19:09:04.534948 607529 prober.go:121] msg", with its
//     structured form ("Probe failed" probeType="Readiness" ...) read into
//     Fields, multi-line values (key=< ... >) included; Fields "caller"
//     (prober.go:121) and "pid".
//   - syslog / journald prefixes ("Sep 15 19:09:04 node1 kubelet[607529]: ",
//     also the ISO form of journalctl -o short-iso): the host is the
//     event's node, the program its source, and what follows is read as
//     klog when it is klog.
//   - etcd's text log: "2018-12-04 22:47:14.729606 I | embed: msg", the
//     package in Fields "pkg", and its raft lines ("raft2026/11/23 13:19:08
//     INFO: msg"). etcd's "[WARNING] ..." lines about its flags too.
//   - logfmt, as logrus writes it (containerd, traefik, kube-vip):
//     time="..." level=info msg="..." key=value, also after a journald
//     prefix.
//   - JSON lines (etcd 3.4+, MetalLB, any zap or logrus JSON logger): level,
//     ts/time and msg/message give the level, time and message, every other
//     key is a Field (objects and arrays as compact JSON). A line without a
//     msg has an empty Message.
//   - nginx access logs (combined format, with the extra
//     "$http_x_forwarded_for" of the nginx image and ingress-nginx's
//     upstreaminfo fields): the request line is the message, the rest
//     Fields named after nginx's variables (remote_addr, status ...).
//   - nginx error logs: "2024/06/04 23:38:19 [error] 137992#137992: *3406
//     msg, client: ..., server: ...": the context after the message in
//     Fields (client, server, request, upstream, host), the errno and its
//     text in "errno" and "strerror".
//   - CoreDNS: "[INFO] plugin/kubernetes: msg", after a time in some
//     releases (RFC 3339, or Go's log time): the level as written (INFO, WARNING, ERROR ...), the
//     plugin in Fields "plugin"; the errors plugin's rcode, qname and qtype,
//     the log plugin's query lines in Fields named after its placeholders
//     (remote, id, type, name, rcode, duration ...); the startup banner
//     (".:53", "CoreDNS-1.11.1", "linux/amd64, go1.20.7, ae2bbc2") in
//     Fields server and port, version, platform, go and commit. Their
//     source is "coredns"; a bare "[LEVEL] msg" line is CoreDNS's once the
//     log has shown CoreDNS's own lines. An invalid time is reported and
//     the entry read without it.
//   - the kernel's log as dmesg prints it: "[17398.958480] msg" (seconds
//     since boot, in Fields "uptime"), -T "[Mon Nov 23 16:59:14 2026] msg",
//     --time-format iso "2026-11-23T16:59:14,958480+00:00 msg", -x
//     "kern  :info  : [...] msg" (facility in Fields "facility", the
//     level), -r "<6>[...] msg" (the syslog priority's level). Their source
//     is "kernel".
//   - the nginx image's entrypoint lines ("/docker-entrypoint.sh: ...",
//     "10-listen-on-ipv6-by-default.sh: info: ..."): the script in Fields
//     "script", the level when it says one.
//
// Times without a zone are read as UTC. klog and syslog times have no
// year: they are in year 0, and nothing here guesses it (a rule comparing
// them with dated evidence must take the year from there). An event's
// source is the syslog program, else "etcd", "coredns" or "nginx" for their own
// formats, else the component named by a pasted command ("tail -f
// /var/log/kube-proxy.log", "journalctl -u kubelet", "kubectl logs ... -c
// controller"), else by the file's name (kube-proxy.log, kubelet.log ...).
// Prompt lines name the node of the events after them. A line of no known
// shape is reported with its position and skipped; indented lines continue
// the entry before them. A line with stray characters before an nginx
// error or etcd timestamp (a scraping artifact) is reported and read from
// the timestamp on.
func Logs(r io.Reader, name string) ([]model.LogEvent, error) {
	var errs model.ErrorList
	lr := newLogReader(name, "", "", &errs)
	lr.read(context.Background(), r)
	return lr.events, errs.Err()
}

type logReader struct {
	name   string
	node   string
	source string // from the pasted command, the layout, or the file name
	errs   *model.ErrorList
	events []model.LogEvent
	// multiKey is the klog field whose multi-line value (key=<) is being
	// read into the last event.
	multiKey string
	// corednsSeen is set once a line only CoreDNS writes was read.
	corednsSeen bool
}

func newLogReader(name, node, command string, errs *model.ErrorList) *logReader {
	lr := &logReader{name: name, node: node, errs: errs}
	if s := sourceFromCommand(command); s != "" {
		lr.source = s
	} else {
		lr.source = knownComponent(path.Base(name))
	}
	return lr
}

func (lr *logReader) read(ctx context.Context, r io.Reader) {
	l := text.NewLines(r, lr.name, lr.errs)
	for l.Next() {
		if l.Line()%4096 == 0 && ctx.Err() != nil {
			lr.errs.Add(l.Pos(), "", ctx.Err())
			return
		}
		lr.line(l)
	}
}

func (lr *logReader) line(l *text.Lines) {
	line := l.Text()
	if lr.multiKey != "" && len(lr.events) > 0 {
		ev := &lr.events[len(lr.events)-1]
		switch {
		case strings.HasPrefix(line, "\t"):
			if v := ev.Fields[lr.multiKey]; v != "" {
				ev.Fields[lr.multiKey] = v + "\n" + line[1:]
			} else {
				ev.Fields[lr.multiKey] = line[1:]
			}
			return
		case strings.TrimSpace(line) == ">":
			lr.multiKey = ""
			return
		}
		lr.multiKey = ""
	}
	t := strings.TrimSpace(line)
	if t == "" {
		return
	}
	if ev, kind, ok := lr.parseLine(line); ok {
		if p, bad := ev.Fields[problemMarker]; bad {
			delete(ev.Fields, problemMarker)
			if len(ev.Fields) == 0 {
				ev.Fields = nil
			}
			l.Errorf("%w: %s", ErrSyntax, p)
		}
		ev.Pos = l.Pos()
		lr.add(ev, kind)
		return
	}
	if isContinuation(line) {
		if len(lr.events) > 0 {
			ev := &lr.events[len(lr.events)-1]
			ev.Message += "\n" + t
			return
		}
	}
	if node, ok := text.NodeMarker(line); ok {
		lr.node = node
		return
	}
	if host, cmd, ok := text.ShellCommand(line); ok {
		if host != "" {
			lr.node = host
		}
		if s := sourceFromCommand(cmd); s != "" {
			lr.source = s
		}
		return
	}
	if logNoise(t) {
		return
	}
	// Stray characters before a dated line: read the line from its
	// timestamp, and say so.
	if i, ev, kind, ok := lr.recoverLine(line); ok {
		l.Errorf("%w: %q before the timestamp (pasted or scraped text?): the entry is read from column %d", ErrSyntax, line[:i], i+1)
		ev.Pos = l.Pos()
		lr.add(ev, kind)
		return
	}
	l.Errorf("%w: expected a log line (klog, syslog, etcd, CoreDNS, JSON, nginx access or error log)", ErrSyntax)
}

// isContinuation reports whether line continues the entry before it: a
// wrapped message, a stack trace, the steps of a klog trace
// ("Trace[1667975177]: ... END").
func isContinuation(line string) bool {
	return line[0] == ' ' || line[0] == '\t' || strings.HasPrefix(line, "Trace[")
}

// logNoise are lines journalctl and people add around logs.
func logNoise(t string) bool {
	switch {
	case strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --"): // -- Logs begin at ... --, -- Boot 1a2b... --
		return true
	case t == "..." || t == "…" || strings.HasPrefix(t, "...") || t == "[...]":
		return true
	case strings.HasPrefix(t, "░░"): // journalctl -x catalog explanations
		return true
	}
	return false
}

func (lr *logReader) add(ev model.LogEvent, kind string) {
	if ev.Node == "" {
		ev.Node = lr.node
	}
	switch kind {
	case "coredns":
		lr.corednsSeen = true
	case "clog":
		lr.corednsSource(&ev)
	}
	if ev.Source == "" {
		ev.Source = lr.source
	}
	if kind == "klog" && ev.Fields != nil {
		if k, ok := ev.Fields[multiKeyMarker]; ok {
			delete(ev.Fields, multiKeyMarker)
			lr.multiKey = k
		}
	}
	lr.events = append(lr.events, ev)
}

// recoverLine finds a dated line (nginx error log, etcd) after stray
// characters at the start of line, within the first 64 bytes.
func (lr *logReader) recoverLine(line string) (int, model.LogEvent, string, bool) {
	for i := 1; i < len(line) && i <= 64; i++ {
		if line[i] < '0' || line[i] > '9' {
			continue
		}
		rest := line[i:]
		if ev, ok := parseNginxError(rest); ok {
			return i, ev, "nginx-error", true
		}
		if ev, ok := parseEtcdText(rest); ok {
			return i, ev, "etcd", true
		}
	}
	return 0, model.LogEvent{}, "", false
}

// parseLine reads one line of any known shape; kind names the shape.
func (lr *logReader) parseLine(line string) (model.LogEvent, string, bool) {
	if line == "" {
		return model.LogEvent{}, "", false
	}
	switch c := line[0]; {
	case c == '{':
		if ev, ok := parseJSONLog(line); ok {
			return ev, "json", true
		}
	case c == 'I' || c == 'W' || c == 'E' || c == 'F':
		if ev, ok := parseKlog(line); ok {
			return ev, "klog", true
		}
	}
	if ev, ok := parseDmesg(line); ok {
		return ev, "dmesg", true
	}
	// Before syslog, whose ISO form would take a dated CoreDNS line's
	// level for a host.
	if ev, kind, ok := parseCoreDNS(line); ok {
		return ev, kind, true
	}
	if ev, inner, ok := parseSyslog(line); ok {
		return ev, inner, true
	}
	if ev, ok := parseLogfmt(line); ok {
		return ev, "logfmt", true
	}
	if ev, ok := parseEtcdText(line); ok {
		return ev, "etcd", true
	}
	if ev, ok := parseNginxError(line); ok {
		return ev, "nginx-error", true
	}
	if ev, ok := parseNginxAccess(line); ok {
		return ev, "nginx-access", true
	}
	if m, rest := submatches(entrypointRe, line); m != nil {
		// The official nginx image's entrypoint and its scripts, ahead
		// of nginx's own log in every nginx container's output.
		return model.LogEvent{Level: m[2], Message: rest, Fields: map[string]string{"script": m[1]}}, "plain", true
	}
	return model.LogEvent{}, "", false
}

// dmesg's line shapes: an optional -x facility and level or -r priority,
// then the time in brackets (seconds since boot, or -T's date); or
// --time-format iso's time.
var (
	dmesgRe    = regexp.MustCompile(`^(?:([a-z]+) *:([a-z]+) *: |<(\d{1,3})>)?\[ *(\d+\.\d{6}|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\] ?`)
	dmesgISORe = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d),(\d{6})([+-]\d\d:\d\d) `)
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

// entrypointRe matches the lines of the nginx image's /docker-entrypoint.sh
// and of the scripts it runs from /docker-entrypoint.d ("10-listen-on-ipv6-
// by-default.sh: info: Enabled listen on IPv6 ...").
var entrypointRe = regexp.MustCompile(`^(/docker-entrypoint\.sh|\d\d-[\w.-]+\.(?:sh|envsh)): (?:(info|warn|warning|error): )?`)

// --- klog

// klogRe matches klog's header; the message follows it. (Matching only the
// header keeps the regexp engine from backtracking over long messages.)
var klogRe = regexp.MustCompile(`^([IWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{1,9})\s+(\d+)\s+([^\s\]]+)\] ?`)

// submatches returns the submatches of re at the start of s and the rest
// of s after the match.
func submatches(re *regexp.Regexp, s string) ([]string, string) {
	loc := re.FindStringSubmatchIndex(s)
	if loc == nil {
		return nil, ""
	}
	m := make([]string, len(loc)/2)
	for i := range m {
		if loc[2*i] >= 0 {
			m[i] = s[loc[2*i]:loc[2*i+1]]
		}
	}
	return m, s[loc[1]:]
}

// multiKeyMarker is a Fields key parseKlog uses to say that a field's
// value continues on the next lines; add removes it.
const multiKeyMarker = "\x00multi"

func parseKlog(line string) (model.LogEvent, bool) {
	if len(line) < 6 || line[1] < '0' || line[1] > '9' {
		return model.LogEvent{}, false
	}
	m, msg := submatches(klogRe, line)
	if m == nil {
		return model.LogEvent{}, false
	}
	ts, ok := yearless(m[2], m[3], m[4], m[5], m[6], m[7])
	if !ok {
		return model.LogEvent{}, false
	}
	ev := model.LogEvent{Time: ts, Level: m[1], Fields: map[string]string{"caller": m[9], "pid": m[8]}}
	if strings.HasPrefix(msg, `"`) {
		if q, err := strconv.QuotedPrefix(msg); err == nil {
			text, _ := strconv.Unquote(q)
			ev.Message = text
			rest := readKV(strings.TrimLeft(msg[len(q):], " "), ev.Fields)
			if rest != "" {
				ev.Message += " " + rest
			}
			return ev, true
		}
	}
	ev.Message = msg
	return ev, true
}

var kvKeyRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.\-/]*=`)

// readKV reads klog's key=value pairs into fields: values quoted as Go
// strings, bare words, {...} and [...] groups, and "<" for a value on the
// next lines. It returns what it could not read.
func readKV(s string, fields map[string]string) string {
	for s != "" {
		k := kvKeyRe.FindString(s)
		if k == "" {
			return s
		}
		key := k[:len(k)-1]
		v := s[len(k):]
		var val string
		switch {
		case strings.HasPrefix(v, `"`):
			q, err := strconv.QuotedPrefix(v)
			if err != nil {
				return s
			}
			val, _ = strconv.Unquote(q)
			v = v[len(q):]
		case v == "<":
			fields[key] = ""
			fields[multiKeyMarker] = key
			return ""
		case strings.HasPrefix(v, "{") || strings.HasPrefix(v, "["):
			n := matchBrackets(v)
			if n < 0 {
				return s
			}
			val, v = v[:n], v[n:]
		default:
			n := strings.IndexByte(v, ' ')
			if n < 0 {
				n = len(v)
			}
			val, v = v[:n], v[n:]
		}
		if v != "" && v[0] != ' ' {
			return s
		}
		fields[key] = val
		s = strings.TrimLeft(v, " ")
	}
	return ""
}

// matchBrackets returns the length of the bracketed group s starts with,
// -1 when it does not close.
func matchBrackets(s string) int {
	depth := 0
	inStr := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// yearless builds a time in year 0 from klog's month, day and clock.
func yearless(mon, day, hh, mm, ss, frac string) (time.Time, bool) {
	mo, _ := strconv.Atoi(mon)
	d, _ := strconv.Atoi(day)
	h, _ := strconv.Atoi(hh)
	mi, _ := strconv.Atoi(mm)
	s, _ := strconv.Atoi(ss)
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return time.Time{}, false
	}
	ns := 0
	if frac != "" {
		f := (frac + "000000000")[:9]
		ns, _ = strconv.Atoi(f)
	}
	return time.Date(0, time.Month(mo), d, h, mi, s, ns, time.UTC), true
}

// --- syslog and journald prefixes

var (
	syslogRe    = regexp.MustCompile(`^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(\.\d+)? (\S+) ([^\s\[:]+)(?:\[(\d+)\])?: ?`)
	syslogISORe = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) (\S+) ([^\s\[:]+)(?:\[(\d+)\])?: ?`)
	months      = map[string]string{"Jan": "01", "Feb": "02", "Mar": "03", "Apr": "04", "May": "05", "Jun": "06",
		"Jul": "07", "Aug": "08", "Sep": "09", "Oct": "10", "Nov": "11", "Dec": "12"}
)

// parseSyslog reads a line with a syslog or journald prefix; inner is
// "klog" when the message is a klog line, else "syslog".
func parseSyslog(line string) (model.LogEvent, string, bool) {
	var ts time.Time
	var host, prog, pid, msg string
	if len(line) < 16 {
		return model.LogEvent{}, "", false
	}
	switch c := line[0]; {
	case c >= 'A' && c <= 'Z' && line[3] == ' ':
		m, rest := submatches(syslogRe, line)
		if m == nil {
			return model.LogEvent{}, "", false
		}
		mon, ok := months[m[1]]
		if !ok {
			return model.LogEvent{}, "", false
		}
		day := m[2]
		if len(day) == 1 {
			day = "0" + day
		}
		frac := strings.TrimPrefix(m[6], ".")
		if ts, ok = yearless(mon, day, m[3], m[4], m[5], frac); !ok {
			return model.LogEvent{}, "", false
		}
		host, prog, pid, msg = m[7], m[8], m[9], rest
	case c >= '0' && c <= '9' && line[10] == 'T':
		m, rest := submatches(syslogISORe, line)
		if m == nil {
			return model.LogEvent{}, "", false
		}
		var err error
		if ts, err = parseISOTime(m[1]); err != nil {
			return model.LogEvent{}, "", false
		}
		host, prog, pid, msg = m[2], m[3], m[4], rest
	default:
		return model.LogEvent{}, "", false
	}
	if ev, ok := parseKlog(msg); ok {
		ev.Node, ev.Source = host, prog
		return ev, "klog", true
	}
	if ev, ok := parseLogfmt(msg); ok {
		ev.Node, ev.Source = host, prog
		if ev.Time.IsZero() {
			ev.Time = ts
		}
		return ev, "logfmt", true
	}
	ev := model.LogEvent{Node: host, Source: prog, Time: ts, Message: msg}
	if pid != "" {
		ev.Fields = map[string]string{"pid": pid}
	}
	return ev, "syslog", true
}

func parseISOTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("not an ISO 8601 time")
}

// --- logfmt (logrus text: containerd, traefik, kube-vip ...)

var logfmtStartRe = regexp.MustCompile(`^(?:time|ts|level|lvl)=`)

// parseLogfmt reads `time="2022-12-20T23:40:34Z" level=info msg="..." k=v`.
func parseLogfmt(line string) (model.LogEvent, bool) {
	if !logfmtStartRe.MatchString(line) {
		return model.LogEvent{}, false
	}
	kv := map[string]string{}
	if rest := readKV(line, kv); rest != "" {
		return model.LogEvent{}, false
	}
	if _, ok := kv[multiKeyMarker]; ok {
		return model.LogEvent{}, false
	}
	var ev model.LogEvent
	level, hasLevel := kv["level"]
	if !hasLevel {
		level, hasLevel = kv["lvl"]
	}
	msg, hasMsg := kv["msg"]
	if !hasLevel || !hasMsg {
		return model.LogEvent{}, false
	}
	ev.Level, ev.Message = level, msg
	delete(kv, "level")
	delete(kv, "lvl")
	delete(kv, "msg")
	for _, k := range []string{"time", "ts"} {
		if v, ok := kv[k]; ok {
			if t, err := parseISOTime(v); err == nil {
				ev.Time = t
				delete(kv, k)
				break
			}
		}
	}
	if len(kv) > 0 {
		ev.Fields = kv
	}
	return ev, true
}

// --- etcd (capnslog, up to 3.4)

var (
	etcdTextRe = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) ([CEWNIDT]) \| `)
	etcdPkgRe  = regexp.MustCompile(`^([a-z0-9][a-z0-9_./-]*): (.*)$`)
	// etcd's raft logger: Go's log package with the prefix "raft".
	etcdRaftRe = regexp.MustCompile(`^raft(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) ([A-Z]+): (.*)$`)
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

// --- JSON lines

// etcdPackages are the packages etcd's zap logger names in "caller".
var etcdPackages = []string{"etcdserver/", "embed/", "etcdmain/", "rafthttp/", "raft/", "v3rpc/", "mvcc/",
	"wal/", "membership/", "etcdhttp/", "v3compactor/", "snap/", "backend/", "auth/", "etcdutil/", "osutil/", "fileutil/"}

// jsonLogKeys reads a JSON object's keys and values in order; ok is false
// when line is not one JSON object.
func jsonLogKeys(line string) (keys []string, vals []json.RawMessage, ok bool) {
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, false // something after the object
	}
	return keys, vals, true
}

func parseJSONLog(line string) (model.LogEvent, bool) {
	line = strings.TrimRight(line, " \t")
	if !strings.HasSuffix(line, "}") {
		return model.LogEvent{}, false
	}
	keys, vals, ok := jsonLogKeys(line)
	if !ok {
		return model.LogEvent{}, false
	}
	var ev model.LogEvent
	logLike := false
	for i, k := range keys {
		raw := vals[i]
		var s string
		isStr := json.Unmarshal(raw, &s) == nil
		if !isStr {
			var b bytes.Buffer
			if json.Compact(&b, raw) == nil {
				s = b.String()
			} else {
				s = string(raw)
			}
		}
		switch k {
		case "level", "severity", "lvl":
			if ev.Level == "" {
				ev.Level, logLike = s, true
				continue
			}
		case "msg", "message":
			if ev.Message == "" && isStr {
				ev.Message, logLike = s, true
				continue
			}
		case "ts", "time", "timestamp", "@timestamp":
			if ev.Time.IsZero() {
				if t, ok := jsonTime(raw, s, isStr); ok {
					ev.Time = t
					continue
				}
			}
		}
		if ev.Fields == nil {
			ev.Fields = map[string]string{}
		}
		ev.Fields[k] = s
	}
	if !logLike {
		return model.LogEvent{}, false
	}
	if c := ev.Fields["caller"]; c != "" {
		for _, p := range etcdPackages {
			if strings.HasPrefix(c, p) {
				ev.Source = "etcd"
			}
		}
	}
	return ev, true
}

// jsonTime reads an RFC 3339 / ISO 8601 string or epoch seconds.
func jsonTime(raw json.RawMessage, s string, isStr bool) (time.Time, bool) {
	if isStr {
		t, err := parseISOTime(s)
		return t, err == nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f < 0 || f > 1e11 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true
}

// --- nginx

var (
	nginxErrorRe  = regexp.MustCompile(`^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) \[([a-z]+)\] (\d+)#(\d+): (?:\*(\d+) )?`)
	nginxErrnoRe  = regexp.MustCompile(`\((\d+): ([^)]*)\)`)
	nginxCtxKeyRe = regexp.MustCompile(`, (client|server|request|subrequest|upstream|host|referrer|login): `)
	nginxAccessRe = regexp.MustCompile(`^(\S+) \S+ (\S+) \[([^\]]+)\] "((?:[^"\\]|\\.)*)" (\d{3}) (\d+|-)(?: "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)")?(.*)$`)
	// ingress-nginx's upstreaminfo after the user agent.
	ingressNginxRe = regexp.MustCompile(`^ (\d+) ([\d.]+) \[([^\]]*)\] \[([^\]]*)\] (\S+) (\S+) (\S+) (\S+) (\S+)\s*$`)
	nginxXFFRe     = regexp.MustCompile(`^ "((?:[^"\\]|\\.)*)"`)
)

func parseNginxError(line string) (model.LogEvent, bool) {
	if len(line) < 20 || line[4] != '/' {
		return model.LogEvent{}, false
	}
	m, msg := submatches(nginxErrorRe, line)
	if m == nil {
		return model.LogEvent{}, false
	}
	ts, err := time.Parse("2006/01/02 15:04:05", m[1])
	if err != nil {
		return model.LogEvent{}, false
	}
	ev := model.LogEvent{Source: "nginx", Time: ts, Level: m[2], Fields: map[string]string{"pid": m[3], "tid": m[4]}}
	if m[5] != "" {
		ev.Fields["connection"] = m[5]
	}
	// The context nginx appends: ", client: A, server: B, request: "...", ...".
	locs := nginxCtxKeyRe.FindAllStringSubmatchIndex(msg, -1)
	if len(locs) > 0 {
		for i, loc := range locs {
			key := msg[loc[2]:loc[3]]
			end := len(msg)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			val := msg[loc[1]:end]
			// Quoted values; a value that lost a quote in copying keeps
			// what is left.
			val = strings.TrimSuffix(strings.TrimPrefix(val, `"`), `"`)
			ev.Fields[key] = val
		}
		msg = msg[:locs[0][0]]
	}
	ev.Message = msg
	if e := nginxErrnoRe.FindStringSubmatch(msg); e != nil {
		ev.Fields["errno"], ev.Fields["strerror"] = e[1], e[2]
	}
	return ev, true
}

func parseNginxAccess(line string) (model.LogEvent, bool) {
	m := nginxAccessRe.FindStringSubmatch(line)
	if m == nil {
		return model.LogEvent{}, false
	}
	ts, err := time.Parse("02/Jan/2006:15:04:05 -0700", m[3])
	if err != nil {
		return model.LogEvent{}, false
	}
	f := map[string]string{"remote_addr": m[1], "remote_user": m[2], "request": m[4], "status": m[5], "body_bytes_sent": m[6]}
	if rf := strings.Fields(m[4]); len(rf) == 3 {
		f["method"], f["path"], f["protocol"] = rf[0], rf[1], rf[2]
	}
	if m[7] != "" || m[8] != "" {
		f["http_referer"], f["http_user_agent"] = m[7], m[8]
	}
	rest := m[9]
	if x := nginxXFFRe.FindStringSubmatch(rest); x != nil {
		f["http_x_forwarded_for"] = x[1]
		rest = rest[len(x[0]):]
	}
	if u := ingressNginxRe.FindStringSubmatch(rest); u != nil {
		for i, k := range []string{"request_length", "request_time", "proxy_upstream_name", "proxy_alternative_upstream_name",
			"upstream_addr", "upstream_response_length", "upstream_response_time", "upstream_status", "req_id"} {
			f[k] = u[i+1]
		}
	} else if r := strings.TrimSpace(rest); r != "" {
		f["rest"] = r
	}
	return model.LogEvent{Source: "nginx", Time: ts.UTC(), Message: m[4], Fields: f}, true
}

// --- sources

// knownComponents are the programs whose logs are recognized by a file or
// command name, longest first where one is a prefix of another.
var knownComponents = []string{
	"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubelet",
	"etcd", "coredns", "ingress-nginx-controller", "metallb-controller", "metallb-speaker",
	"kube-vip", "calico-node", "cilium-agent", "cilium-operator", "cilium", "flanneld", "flannel",
	"containerd", "dockerd", "nginx",
}

// knownComponent names the component a log file is named after:
// "kube-proxy.log", "kubelet.log.1", "etcd-m1.log" ... "" when none.
func knownComponent(base string) string {
	stem := strings.ToLower(base)
	for _, c := range knownComponents {
		if strings.HasPrefix(stem, c) {
			return c
		}
	}
	return ""
}

// sourceFromCommand names the component whose log a command prints:
// journalctl -u UNIT, kubectl logs POD [-c CONTAINER], or a command
// reading a log file (tail, cat, less, grep ...).
func sourceFromCommand(cmd string) string {
	if cmd == "" {
		return ""
	}
	if k, ok := text.ParseKubectl(cmd); ok {
		if k.Verb != "logs" {
			return ""
		}
		f := strings.Fields(strings.Split(cmd, "|")[0])
		for i, w := range f {
			if (w == "-c" || w == "--container") && i+1 < len(f) {
				return f[i+1]
			}
			if v, ok := strings.CutPrefix(w, "--container="); ok {
				return v
			}
		}
		if len(k.Args) > 0 {
			pod := k.Args[0]
			if i := strings.LastIndexByte(pod, '/'); i >= 0 {
				pod = pod[i+1:]
			}
			if c := knownComponent(pod); c != "" {
				return c
			}
			return pod
		}
		return ""
	}
	f := strings.Fields(strings.Split(cmd, "|")[0])
	if len(f) == 0 {
		return ""
	}
	if text.Program(cmd) == "journalctl" {
		for i, w := range f {
			unit := ""
			switch {
			case (w == "-u" || w == "--unit") && i+1 < len(f):
				unit = f[i+1]
			case strings.HasPrefix(w, "--unit="):
				unit = strings.TrimPrefix(w, "--unit=")
			case strings.HasPrefix(w, "-u") && len(w) > 2:
				unit = w[2:]
			}
			if unit != "" {
				return strings.TrimSuffix(unit, ".service")
			}
		}
		return ""
	}
	for i := len(f) - 1; i > 0; i-- {
		if strings.Contains(f[i], "/") || strings.Contains(f[i], ".log") {
			return knownComponent(path.Base(f[i]))
		}
	}
	return ""
}

// --- sniffing

// sniffLogs scores head for one log shape: the share of lines of any log
// shape, when that shape is the most common one (journald lines count as
// klog when any holds a klog line). A journal without klog lines is read as
// klog with a lower score; other formats score it 0.
func sniffLogs(head []byte, shape string) int {
	if !text.IsText(head) {
		return 0
	}
	var lr logReader
	counts := map[string]int{}
	total := 0
	for _, line := range text.HeadLines(head, 200) {
		if isContinuation(line) {
			continue
		}
		if _, kind, ok := lr.parseLine(line); ok {
			counts[kind]++
			total++
			continue
		}
		t := strings.TrimSpace(line)
		if _, ok := text.NodeMarker(line); ok || logNoise(t) {
			continue
		}
		if _, _, ok := text.ShellCommand(line); ok {
			continue
		}
		total++
	}
	// The dominant shape names the format; every recognized line counts
	// for it, since the reader reads them all.
	if counts["klog"] > 0 {
		counts["klog"] += counts["syslog"]
		counts["syslog"] = 0
	}
	recognized, dominant, best := 0, "", 0
	recognized += counts["plain"] + counts["clog"] // read by every log format, never names one
	for _, k := range []string{"klog", "logfmt", "json", "etcd", "nginx-error", "nginx-access", "coredns", "syslog", "dmesg"} {
		recognized += counts[k]
		if counts[k] > best {
			dominant, best = k, counts[k]
		}
	}
	switch {
	case dominant == "syslog" && shape == "klog":
		// A journal without klog lines is still read, as the klog format.
		return text.RatioScore(recognized, total, 60)
	case dominant != shape:
		return 0
	}
	return text.RatioScore(recognized, total, 90)
}
