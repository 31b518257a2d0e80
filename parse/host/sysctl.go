package host

import (
	"context"
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
	var errs model.ErrorList
	out, _ := readSysctl(r, name, &errs)
	return out, errs.Err()
}

// sysctlMessageRe matches what sysctl writes to stderr, often captured with
// 2>&1: "sysctl: permission denied on key 'fs.protected_regular'",
// "sysctl: reading key \"net.ipv6.conf.all.stable_secret\"",
// "sysctl: cannot stat /proc/sys/net/foo: No such file or directory".
var sysctlMessageRe = regexp.MustCompile(`^sysctl: `)

func readSysctl(r io.Reader, name string, errs *model.ErrorList) (out []model.Sysctl, messages int) {
	node := ""
	l := text.NewLines(r, name, errs)
	for l.Next() {
		line := l.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if _, ok := text.NodeLine(line, &node); ok {
			continue
		}
		if sysctlMessageRe.MatchString(line) {
			messages++
			continue
		}
		key, value, ok := sysctlLine(line)
		if !ok {
			l.Errorf("%w: expected \"name = value\"", format.ErrSyntax)
			continue
		}
		out = append(out, model.Sysctl{Node: node, Name: key, Value: value, Pos: l.Pos()})
	}
	return out, messages
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
	if !text.IsText(head) {
		return 0
	}
	lines := text.HeadLines(head, 200)
	matched, total := 0, 0
	for _, line := range lines {
		if _, ok := text.NodeMarker(line); ok {
			continue
		}
		if _, _, ok := text.Prompt(line); ok {
			continue
		}
		if sysctlMessageRe.MatchString(line) {
			continue
		}
		total++
		if sysctlSniffLine(line) {
			matched++
		}
	}
	return text.RatioScore(matched, total, 90)
}

// SysctlFormat reads sysctl -a and the forms of the same listing.
var SysctlFormat = &format.Format{
	Name: "sysctl",
	Kind: model.KindSysctl,
	Command: "sysctl -a, sysctl NAME..., grep -r . /proc/sys/net, troubleshoot's in-cluster sysctl " +
		"collector",
	Doc:   "`/proc/sys/...` paths become dotted names; `sysctl: permission denied` lines are skipped",
	Sniff: sniffSysctl,
	Parse: func(ctx context.Context, r io.Reader, src *format.Source, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		out, messages := readSysctl(r, src.Name, &errs)
		if messages > 0 {
			src.Count("sysctl messages skipped", messages)
		}
		for i := range out {
			if out[i].Node == "" {
				out[i].Node = src.Node
			}
		}
		snap.Sysctls = append(snap.Sysctls, out...)
		return len(out), errs.Err()
	},
}
