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
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
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
	f.Parse = func(ctx context.Context, r io.Reader, src *format.File, snap *model.Snapshot) (int, error) {
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
//     (prober.go:121) and "pid"; a line cut before its caller
//     ("cni.go:319] msg") is an entry of no time and no level.
//   - syslog / journald prefixes ("Sep 15 19:09:04 node1 kubelet[607529]: ",
//     with month names in the locales people paste from: "Dez 31", "déc.
//     31", "дек 31", "12月 31" ...; journalctl's short-precise, short-full, short-iso,
//     short-iso-precise, short-unix and short-monotonic forms; RFC 3164's
//     <PRI>, in Fields "priority"): the host is the event's node, the
//     program its source, and what follows is read as klog or logfmt when
//     it is. journalctl -o json's entries likewise (journal.go).
//   - container runtimes' records (container.go): CRI lines of containerd
//     and CRI-O, Docker's json-file records, kubectl logs --timestamps:
//     the line inside is read as any line here, with the record's stream
//     and, when the line has none, its time; namespace, pod and container
//     come from the file's path or the kubectl command.
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
//   - hubble observe's flow lines (hubble.go): source "hubble".
//   - cilium monitor's text (cilium.go): its drop lines with their reason,
//     flow, endpoint, identities, addresses and ports in Fields; a CI's
//     monitor.log with the time and node of each line. Their source is
//     "cilium-monitor".
//   - the nginx image's entrypoint lines ("/docker-entrypoint.sh: ...",
//     "10-listen-on-ipv6-by-default.sh: info: ..."): the script in Fields
//     "script", the level when it says one.
//   - weave's router lines ("FATA: 2023/07/05 05:09:36.639718 msg") and
//     its "Network A overlaps with existing route B on host" (weave.go).
//   - Go's log package ("2019/01/21 15:47:20 msg", golog.go): the caller
//     in Fields "caller"; lines of no shape after one continue it.
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
// the entry before them, and so does a line of no shape after a syslog or
// dmesg line a paste hard-wrapped (one that ends with ",", or that the line
// completes into a known kernel message), joined with a space. A line with stray characters before an nginx
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
	// container is the container whose log this is, from the pasted
	// command, the file's path or the layout's command.
	container ContainerLog
	// partial holds, by stream, the partial runtime records read so far
	// and the position of the first.
	partial map[string]*partialLine
	// verbose is the journalctl -o verbose entry being read.
	verbose *verboseEntry
	// wrap is the runtime record a physical line held when a terminal
	// hard-wrapped it: the first part, waiting for the rest.
	wrap *partialLine
	// lastKind is the shape of the last entry read, "" after a prompt.
	lastKind string
	lines    *text.Lines // the lines read, for a command pasted without a prompt
	// prettyRec is the pretty-printed JSON record being read (jsonpretty.go).
	prettyRec *prettyLines
}

// partialLine is the start of a line a container runtime wrote in more
// than one record (or a record a terminal wrapped), and where it began.
type partialLine struct {
	text string
	pos  model.Pos
	w    wrapped // the first record
}

func newLogReader(name, node, command string, errs *model.ErrorList) *logReader {
	lr := &logReader{name: name, node: node, errs: errs}
	lr.setCommand(command)
	if lr.source == "" {
		if c, ok := ContainerLogPath(name); ok {
			lr.container = c
			lr.source = c.Container
		} else {
			lr.source = knownComponent(path.Base(name))
		}
	}
	return lr
}

// setCommand takes what a pasted (or the layout's) command says of the
// lines below it: their component, and their container.
func (lr *logReader) setCommand(cmd string) {
	if s := sourceFromCommand(cmd); s != "" {
		lr.source = s
	}
	if c, ok := containerFromCommand(cmd); ok {
		lr.container = c
		if lr.source == "" && c.Container != "" {
			lr.source = c.Container
		}
	}
}

func (lr *logReader) read(ctx context.Context, r io.Reader) {
	l := lr.newLines(r)
	for l.Next() {
		if l.Line()%4096 == 0 && ctx.Err() != nil {
			*lr.errs = append(*lr.errs, model.Stopped(l.Pos(), ctx.Err()))
			return
		}
		lr.line(l)
	}
	lr.flush()
	// A line a runtime wrote in partial records is where it began, which
	// may be before the lines of another stream read in between.
	slices.SortStableFunc(lr.events, func(a, b model.LogEvent) int { return a.Pos.Line - b.Pos.Line })
}

func (lr *logReader) line(l *text.Lines) {
	line, pos := l.Text(), l.Pos()
	if p := lr.wrap; p != nil {
		// The rest of a runtime record a terminal or a writer wrapped,
		// unless the line starts a record of its own and the two make
		// none: then the first was cut short.
		lr.wrap = nil
		joined := p.text + line
		if _, ok := lr.unwrap(strings.TrimLeft(joined, " \t")); !ok && lr.startsRecord(line) {
			lr.errs.Addf(p.pos, p.text, "%w: a container runtime's record cut short", format.ErrSyntax)
		} else {
			line, pos = joined, p.pos
		}
	}
	if lr.pretty(line, pos) {
		return
	}
	trimmed := strings.TrimLeft(line, " \t")
	if len(line) < maxJoined {
		switch {
		case strings.HasPrefix(trimmed, `{"log":"`) && !strings.HasSuffix(strings.TrimRight(line, " "), "}"):
			// A Docker record a terminal hard-wrapped: the rest is on
			// the next line, joined without a separator.
			lr.wrap = &partialLine{text: line, pos: pos}
			return
		case strings.HasSuffix(line, " \\"):
			// A record wrapped with a shell-style " \\" at the end of
			// each part.
			if _, ok := lr.unwrap(trimmed); ok {
				lr.wrap = &partialLine{text: line[:len(line)-1], pos: pos}
				return
			}
		}
	}
	// A runtime's record may be indented (a pasted block in Markdown).
	if w, ok := lr.unwrap(trimmed); ok {
		lr.record(w, pos)
		return
	}
	lr.entry(line, pos, nil)
}

// maxJoined bounds the lines joined into one wrapped record.
const maxJoined = 1 << 20

// flush reads what is left at the end of the input: partial records the
// runtime never ended, a wrapped record never completed.
func (lr *logReader) flush() {
	if p := lr.prettyRec; p != nil {
		lr.prettyRec = nil
		lr.replayPretty(p)
	}
	lr.endVerbose()
	if p := lr.wrap; p != nil {
		lr.wrap = nil
		lr.errs.Addf(p.pos, p.text, "%w: a container runtime's record cut short at the end of the input", format.ErrSyntax)
	}
	for _, stream := range []string{"stdout", "stderr", ""} {
		if p := lr.partial[stream]; p != nil {
			delete(lr.partial, stream)
			w := p.w
			w.inner, w.partial = p.text, false
			lr.entry(w.inner, p.pos, &w)
		}
	}
}

// entry reads one line (or a container's line, w its runtime's record)
// at pos.
func (lr *logReader) entry(line string, pos model.Pos, w *wrapped) {
	if lr.verbose != nil {
		if k, v, ok := verboseField(line); ok && w == nil {
			lr.verbose.fields[k] = v
			return
		}
		lr.endVerbose()
	}
	if w == nil {
		if v, ok := parseVerboseHeader(line); ok {
			v.pos = pos
			lr.verbose = v
			return
		}
	}
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
		if valueLineUntabbed(line, lr.parseLine) {
			// The value's line with its tab lost, as a paste into
			// Markdown loses it: a line of no log shape, and no prompt,
			// goes on with the value until its ">"; a blank one too.
			if t := strings.TrimSpace(line); t != "" {
				ev.Fields[lr.multiKey] = strings.TrimPrefix(ev.Fields[lr.multiKey]+"\n"+t, "\n")
			}
			return
		}
		lr.multiKey = ""
	}
	t := strings.TrimSpace(line)
	if t == "" {
		return
	}
	if ev, kind, ok := lr.parseLine(line); ok {
		if kind == "syslog" && w == nil && ev.Message != "" && ev.Message[0] >= '0' && ev.Message[0] <= '9' {
			// A runtime's record forwarded by syslog (rsyslog's imfile):
			// the syslog host is the node.
			if inner, ok := lr.unwrap(ev.Message); ok && inner.kind == "cri" {
				inner.node = ev.Node
				lr.record(inner, pos)
				return
			}
		}
		if p, bad := ev.Fields[problemMarker]; bad {
			delete(ev.Fields, problemMarker)
			if len(ev.Fields) == 0 {
				ev.Fields = nil
			}
			lr.errs.Addf(pos, line, "%w: %s", format.ErrSyntax, p)
		}
		ev.Pos = pos
		lr.add(ev, kind, w)
		return
	}
	if isContinuation(line) || (goesOnUnprefixed(lr.lastKind) && !text.IsPromptOrMarker(line)) ||
		(w == nil && len(lr.events) > 0 && klogContinues(lr.lastKind, lr.events[len(lr.events)-1].Message, line)) {
		if len(lr.events) > 0 {
			ev := &lr.events[len(lr.events)-1]
			switch {
			case len(ev.Message) < maxEntryBytes:
				ev.Message += "\n" + t
			case !strings.HasSuffix(ev.Message, "\n…"):
				ev.Message += "\n…" // the rest taken in, not kept
			}
			return
		}
	}
	if w == nil && len(lr.events) > 0 && kernelWrap(lr.lastKind, lr.events[len(lr.events)-1].Message, line) {
		// The rest of a kernel or syslog line a paste hard-wrapped: the
		// entry stays where its first line is.
		ev := &lr.events[len(lr.events)-1]
		ev.Message = strings.TrimRight(ev.Message, " ") + " " + t
		return
	}
	if w != nil {
		// A container's line of no known shape is its own output as it
		// is, not an error.
		lr.add(model.LogEvent{Message: line, Pos: pos}, "plain", w)
		return
	}
	if rest, ok := strings.CutPrefix(line, "* "); ok && !strings.HasPrefix(rest, "* ") {
		// minikube logs puts "* " before every line.
		lr.entry(rest, pos, nil)
		return
	}
	if name, ok := sectionHeader(t); ok {
		lr.section(name)
		return
	}
	if node, ok := text.NodeMarker(line); ok {
		lr.node = node
		return
	}
	if host, cmd, ok := lr.shellCommand(line); ok {
		lr.lastKind = ""
		if host != "" && !text.ClusterClient(cmd) {
			// kubectl logs prints what the cluster holds, not the
			// prompt's host (often a laptop).
			lr.node = host
		}
		lr.setCommand(cmd)
		return
	}
	if fileCommand(t) {
		lr.setCommand(t)
		return
	}
	if logNoise(t) {
		return
	}
	// Stray characters before a dated line: read the line from its
	// timestamp, and say so.
	if i, ev, kind, ok := lr.recoverLine(line); ok {
		lr.errs.Addf(pos, line, "%w: %q before the timestamp (pasted or scraped text?): the entry is read from column %d", format.ErrSyntax, line[:i], i+1)
		ev.Pos = pos
		lr.add(ev, kind, nil)
		return
	}
	if m, rest := submatches(timestampsRe, line); m != nil {
		// kubectl logs --timestamps of a line of no known shape.
		if ts, err := time.Parse(time.RFC3339Nano, m[1]); err == nil && strings.TrimSpace(rest) != "" {
			lr.add(model.LogEvent{Message: rest, Pos: pos}, "plain", &wrapped{kind: "timestamps", time: ts.UTC()})
			return
		}
	}
	lr.errs.Addf(pos, line, "%w: expected a log line (klog, syslog, etcd, CoreDNS, JSON, nginx access or error log)", format.ErrSyntax)
}

func (lr *logReader) add(ev model.LogEvent, kind string, w *wrapped) {
	lr.lastKind = kind
	if ev.Node == "" && w != nil {
		ev.Node = w.node
	}
	if ev.Node == "" {
		ev.Node = lr.node
	}
	if w != nil {
		ev.Stream = w.stream
		if ev.Time.IsZero() {
			ev.Time = w.time
		}
		if w.container != nil && ev.Namespace == "" && ev.Pod == "" && ev.Container == "" {
			ev.Namespace, ev.Pod, ev.Container = w.container.Namespace, w.container.Pod, w.container.Container
			if ev.Source == "" {
				ev.Source = w.container.Container
			}
		}
	}
	if ev.Namespace == "" && ev.Pod == "" && ev.Container == "" {
		ev.Namespace, ev.Pod, ev.Container = lr.container.Namespace, lr.container.Pod, lr.container.Container
	}
	switch kind {
	case "coredns":
		lr.corednsSeen = true
		if ev.Source == "" && (lr.source == "" || lr.source == "coredns") {
			ev.Source = "coredns" // a dated line of no other program's log
		}
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
		if ev, kind, ok := parseJournalJSON(line); ok {
			return ev, kind, true
		}
		if ev, ok := parseJSONLog(line); ok {
			return ev, "json", true
		}
	case c == 'I' || c == 'W' || c == 'E' || c == 'F':
		if ev, ok := parseKlog(line); ok {
			return ev, "klog", true
		}
	}
	if ev, ok := parseCilium(line); ok {
		return ev, "cilium", true
	}
	if ev, ok := parseHubble(line); ok {
		return ev, "hubble", true
	}
	if ev, ok := parseDmesg(line); ok {
		if j, ok := journalMonotonic(ev); ok {
			return j, "syslog", true
		}
		return ev, "dmesg", true
	}
	if ev, ok := parseFelix(line); ok {
		return ev, "felix", true
	}
	if ev, ok := parseBird(line); ok {
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
	if ev, ok := parseBareMsg(line); ok {
		return ev, "logfmt", true
	}
	if ev, ok := parseBareNFLog(line); ok {
		return ev, "dmesg", true
	}
	if ev, ok := parseBareKernel(line); ok {
		return ev, "dmesg", true
	}
	if ev, ok := parseWeave(line); ok {
		return ev, "weave", true
	}
	if ev, ok := parseCutKlog(line); ok {
		return ev, "klog", true
	}
	// Last: CoreDNS, etcd and nginx put Go's log time before their own
	// prefix.
	if ev, ok := parseGoLog(line); ok {
		return ev, "golog", true
	}
	return model.LogEvent{}, "", false
}

// entrypointRe matches the lines of the nginx image's /docker-entrypoint.sh
// and of the scripts it runs from /docker-entrypoint.d ("10-listen-on-ipv6-
// by-default.sh: info: Enabled listen on IPv6 ...").
var entrypointRe = lazyre.New(`^(/docker-entrypoint\.sh|\d\d-[\w.-]+\.(?:sh|envsh)): (?:(info|warn|warning|error): )?`)

// submatches returns the submatches of re at the start of s and the rest
// of s after the match.
func submatches(re *lazyre.Regexp, s string) ([]string, string) {
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

// valueLineUntabbed reports whether line, met while a klog value (key=<)
// is open, is one of its lines whose tab a paste lost: neither a line of
// a log shape (parse reads those) nor a shell prompt or node marker, which
// end the value as its ">" does.
func valueLineUntabbed(line string, parse func(string) (model.LogEvent, string, bool)) bool {
	if strings.TrimSpace(line) == ">" || text.IsPromptOrMarker(line) {
		return false
	}
	_, _, ok := parse(line)
	return !ok
}
