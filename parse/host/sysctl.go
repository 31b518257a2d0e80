package host

import (
	"io"
	"regexp"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// Sysctl parses kernel parameters as `sysctl -a` or `sysctl NAME...` print
// them ("net.ipv4.ip_local_port_range = 1024\t65000", with empty values
// printed as "name =" or "name = "), as troubleshoot's in-cluster sysctl
// collector writes them ("/proc/sys/net/ipv4/ip_local_port_range = 1024
// 65000"), and as `grep -r . /proc/sys/net` prints them
// ("/proc/sys/net/ipv4/ip_local_port_range:1024\t65000"). Paths are turned
// into dotted names. Values keep their text with runs of whitespace collapsed
// to one space, so "1024\t65000" reads "1024 65000".
//
// Shell prompts and comments ('#' lines), node markers (">>> node1", see
// docs/host-inputs.md) and sysctl's own complaints ("sysctl: permission
// denied on key ...") are skipped; any other line is reported as a syntax
// error and the rest is read. name is used only in positions.
func Sysctl(r io.Reader, name string) ([]model.Sysctl, error) {
	return format.ReadAll(r, name, readSysctl)
}

// sysctlMessageRe matches what sysctl writes to stderr, often captured with
// 2>&1: "sysctl: permission denied on key 'fs.protected_regular'",
// "sysctl: reading key \"net.ipv6.conf.all.stable_secret\"",
// "sysctl: cannot stat /proc/sys/net/foo: No such file or directory".
var sysctlMessageRe = regexp.MustCompile(`^sysctl: `)

// readSysctl reads sysctl lines, counting sysctl's own messages in the
// source's details.
func readSysctl(r io.Reader, src *format.Source, errs *model.ErrorList) []model.Sysctl {
	var out []model.Sysctl
	messages := 0
	pending := "" // the name of a head/tail file header, whose value comes next
	text.ReadLines(r, src, errs, text.Hooks{}, func(l *text.Line) {
		line := l.Text()
		if sysctlMessageRe.MatchString(line) {
			messages++
			return
		}
		if name, ok := sysctlFileHeader(line); ok {
			pending = name
			return
		}
		if strings.TrimSpace(line) == "" {
			return
		}
		if pending != "" {
			out = append(out, model.Sysctl{Node: l.Node, Name: pending, Value: text.CollapseSpace(line), Pos: l.Pos()})
			pending = ""
			return
		}
		key, value, ok := sysctlLine(line)
		if !ok {
			l.Errorf("%w: expected \"name = value\"", format.ErrSyntax)
			return
		}
		out = append(out, model.Sysctl{Node: l.Node, Name: key, Value: value, Pos: l.Pos()})
	})
	if messages > 0 {
		src.Count("sysctl messages skipped", messages)
	}
	return out
}

// sysctlHeaderRe matches the header `head` and `tail -n +1` print before
// each file they show: "==> /proc/sys/net/ipv4/conf/all/rp_filter <==".
var sysctlHeaderRe = regexp.MustCompile(`^==> (/proc/sys/\S+) <==\s*$`)

// sysctlFileHeader returns the dotted name of a head/tail file header.
func sysctlFileHeader(line string) (string, bool) {
	m := sysctlHeaderRe.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	name := sysctlPathName(m[1])
	return name, name != ""
}

// sysctlLine splits one line into a dotted name and its value.
func sysctlLine(line string) (key, value string, ok bool) {
	line = strings.TrimLeft(line, " \t")
	if strings.HasPrefix(line, "/proc/sys/") {
		// "/proc/sys/a/b = v" (collector) or "/proc/sys/a/b:v" (grep -r):
		// whichever separator comes first.
		eq := strings.Index(line, " =")
		colon := strings.IndexByte(line, ':')
		var path, v string
		switch {
		case colon >= 0 && (eq < 0 || colon < eq):
			path, v = line[:colon], line[colon+1:]
		case eq >= 0:
			path, v = line[:eq], line[eq+2:]
		default:
			return "", "", false
		}
		key = sysctlPathName(strings.TrimRight(path, " \t"))
		if key == "" {
			return "", "", false
		}
		return key, text.CollapseSpace(v), true
	}
	k, v, found := strings.Cut(line, "=")
	if !found {
		return "", "", false
	}
	k = strings.TrimRight(k, " \t")
	if !validSysctlName(k) {
		return "", "", false
	}
	return k, text.CollapseSpace(v), true
}

// sysctlPathName turns /proc/sys/net/ipv4/conf/eth0.100/rp_filter into
// net.ipv4.conf.eth0/100.rp_filter, the name sysctl prints: path separators
// become dots and dots inside a component become slashes.
func sysctlPathName(p string) string {
	rest := strings.TrimPrefix(p, "/proc/sys/")
	parts := strings.Split(rest, "/")
	for i, c := range parts {
		if c == "" {
			return ""
		}
		parts[i] = strings.ReplaceAll(c, ".", "/")
	}
	name := strings.Join(parts, ".")
	if !validSysctlName(name) {
		return ""
	}
	return name
}

// validSysctlName reports whether s can be a sysctl name: at least two
// dotted components, no spaces, starting with a letter.
func validSysctlName(s string) bool {
	if len(s) < 3 || strings.ContainsAny(s, " \t=\"'") || !strings.Contains(s, ".") {
		return false
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return false
	}
	return !strings.HasPrefix(s, ".") && !strings.HasSuffix(s, ".") && !strings.Contains(s, "..")
}

// sysctlTopLevel are the top-level sysctl directories, used by the sniffer
// to tell a sysctl listing from other "key = value" text.
var sysctlTopLevel = []string{"abi.", "crypto.", "debug.", "dev.", "fs.", "kernel.", "net.", "sunrpc.", "user.", "vm.", "/proc/sys/"}

func sysctlSniffLine(line string) bool {
	s := strings.TrimLeft(line, " \t")
	known := false
	for _, p := range sysctlTopLevel {
		if strings.HasPrefix(s, p) {
			known = true
			break
		}
	}
	if !known {
		return false
	}
	if strings.HasPrefix(s, "/proc/sys/") {
		_, _, ok := sysctlLine(s)
		return ok
	}
	// sysctl prints "name = value"; demand the spaces, which keeps
	// sysctl.conf-style "name=value" and log lines out.
	k, _, found := strings.Cut(s, " =")
	return found && validSysctlName(k)
}

func sniffSysctl(_ string, head []byte) int {
	afterHeader := false
	matched, total, _ := text.SniffLines(head, 200, nil, func(line string) text.Verdict {
		_, header := sysctlFileHeader(line)
		switch {
		case sysctlMessageRe.MatchString(line):
			return text.Skip
		case header:
			afterHeader = true
			return text.Hit
		case afterHeader && strings.TrimSpace(line) == "":
			return text.Skip
		case afterHeader:
			afterHeader = false
			return text.Hit
		case sysctlSniffLine(line):
			return text.Hit
		}
		return text.Miss
	})
	return text.RatioScore(matched, total, 90)
}

// SysctlFormat reads sysctl -a and the forms of the same listing.
var SysctlFormat = &format.Format{
	Name: "sysctl",
	Kind: model.KindSysctl,
	Command: "sysctl -a, sysctl NAME..., grep -r . /proc/sys/net, head /proc/sys/net/ipv4/conf/*/rp_filter, " +
		"troubleshoot's in-cluster sysctl collector",
	Doc: "`/proc/sys/...` paths become dotted names, also in the `==> path <==` headers of head and tail; " +
		"`sysctl: permission denied` lines are skipped",
	Sniff: sniffSysctl,
	Parse: format.Records(readSysctl, func(s *model.Snapshot, out []model.Sysctl) { s.Sysctls = append(s.Sysctls, out...) }, ""),
}
