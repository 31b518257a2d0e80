// Package logs reads log files into events: klog, etcd's text log, JSON
// lines, logfmt, nginx's access and error logs, the kernel's log as dmesg
// prints it, and CoreDNS's log, each a format of its own in a file of its
// own, all read by one reader (reader.go) so that a file mixing them is
// read whole.
package logs

import (
	"context"
	"io"
	"path"
	"regexp"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// logFormat makes one of the log formats. They share one reader (Logs):
// every line is read by its own shape, so that a file mixing them
// (ingress-nginx writes its klog, nginx's access log and nginx's error log
// to one stream) is read whole whatever format it was sniffed as. The
// formats differ only in their sniffing (the shape most of the lines
// have) and in the name an input is listed with.
func logFormat(shape string, f format.Format) *format.Format {
	f.Kind = model.KindLogs
	f.Sniff = func(_ string, head []byte) int { return sniffLogs(head, shape) }
	f.Parse = func(ctx context.Context, r io.Reader, src *format.Source, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		lr := newLogReader(src.Name, src.Node, src.Command, &errs)
		lr.read(ctx, r)
		snap.Logs = append(snap.Logs, lr.events...)
		src.Count("events", len(lr.events))
		return len(lr.events), errs.Err()
	}
	return &f
}

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
	// lastKind is the shape of the last entry read, "" after a prompt.
	lastKind string
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
			l.Errorf("%w: %s", format.ErrSyntax, p)
		}
		ev.Pos = l.Pos()
		lr.add(ev, kind)
		return
	}
	if isContinuation(line) || (lr.lastKind == "felix" && !text.IsPromptOrMarker(line)) {
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
		lr.lastKind = ""
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
		l.Errorf("%w: %q before the timestamp (pasted or scraped text?): the entry is read from column %d", format.ErrSyntax, line[:i], i+1)
		ev.Pos = l.Pos()
		lr.add(ev, kind)
		return
	}
	l.Errorf("%w: expected a log line (klog, syslog, etcd, CoreDNS, JSON, nginx access or error log)", format.ErrSyntax)
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
	lr.lastKind = kind
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
	if ev, ok := parseFelix(line); ok {
		return ev, "felix", true
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

// entrypointRe matches the lines of the nginx image's /docker-entrypoint.sh
// and of the scripts it runs from /docker-entrypoint.d ("10-listen-on-ipv6-
// by-default.sh: info: Enabled listen on IPv6 ...").
var entrypointRe = regexp.MustCompile(`^(/docker-entrypoint\.sh|\d\d-[\w.-]+\.(?:sh|envsh)): (?:(info|warn|warning|error): )?`)

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
	last := ""
	for _, line := range text.HeadLines(head, 200) {
		if isContinuation(line) {
			continue
		}
		if _, kind, ok := lr.parseLine(line); ok {
			counts[kind]++
			total++
			last = kind
			continue
		}
		if last == "felix" && !text.IsPromptOrMarker(line) {
			continue // a traceback or a wrapped message
		}
		last = ""
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
	for _, k := range []string{"klog", "logfmt", "json", "etcd", "nginx-error", "nginx-access", "coredns", "syslog", "dmesg", "felix"} {
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
