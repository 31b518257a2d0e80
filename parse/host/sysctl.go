package host

import (
	"io"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
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
// The values of /proc/sys files printed one by one are read too: after
// the "==> /proc/sys/net/bridge/bridge-nf-call-iptables <==" headers of
// head and tail, after a prompt whose cat names the files, and as `grep -r
// .` prints them when run in /proc/sys/net/ipv4/conf ("all/rp_filter:1");
// the content of other files among them is skipped (sysctl_files.go).
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
var sysctlMessageRe = lazyre.New(`^sysctl: `)

// readSysctl reads sysctl lines, counting sysctl's own messages in the
// source's details.
func readSysctl(r io.Reader, src *format.File, errs *model.ErrorList) []model.Sysctl {
	var out []model.Sysctl
	messages := 0
	// files are the /proc/sys files whose values the next lines are: the
	// file of a head/tail header, those a cat names.
	var files []string
	// other is set in the content of a file that is no sysctl (head of
	// other files), skipped up to the next header.
	other := false
	header := func(p string) {
		files, other = nil, false
		if sysctlPathName(p) != "" {
			files = []string{p}
		} else {
			other = true
		}
	}
	hooks := text.Hooks{Command: func(cmd string) {
		if p, ok := fileHeader(cmd); ok {
			header(p) // a prompt run into the first header
			return
		}
		files, other = procFiles(cmd), false
	}}
	text.ReadLines(r, src, errs, hooks, func(l *text.Line) {
		line := l.Text()
		if p, ok := fileHeader(line); ok {
			header(p)
			return
		}
		if sysctlMessageRe.MatchString(line) {
			messages++
			return
		}
		if other {
			src.Count("lines of other files skipped", 1)
			return
		}
		if len(files) > 0 {
			// The value of the next file: the whole line.
			key := sysctlPathName(files[0])
			files = files[1:]
			out = append(out, model.Sysctl{Node: l.Node, Name: key, Value: text.CollapseSpace(line), Pos: l.Pos()})
			return
		}
		if bareSysctlCmd(line) {
			src.Count("command lines skipped", 1) // a command pasted without its prompt
			return
		}
		key, value, ok := sysctlLine(line)
		if !ok {
			key, value, ok = relativeConfLine(line)
		}
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

// bareSysctlCmd reports whether line is a sysctl command that reads
// parameters ("sysctl net.ipv4.tcp_keepalive_time net.ipv4.ip_forward"),
// pasted above its output without a shell prompt.
func bareSysctlCmd(line string) bool {
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "sysctl" && f[0] != "/sbin/sysctl" && f[0] != "/usr/sbin/sysctl" {
		return false
	}
	for _, a := range f[1:] {
		if strings.ContainsAny(a, "=:") || !strings.HasPrefix(a, "-") && !validSysctlName(a) {
			return false
		}
	}
	return true
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

// sysctlSniffLine reports whether line is a sysctl setting as sysctl
// prints it, or, when conf is set (the file's name says sysctl), in
// sysctl.conf's "name=value".
func sysctlSniffLine(line string, conf bool) bool {
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
	// sysctl.conf-style "name=value" and log lines out, unless the file's
	// name says it is a sysctl configuration.
	if conf {
		k, _, found := strings.Cut(s, "=")
		return found && validSysctlName(strings.TrimRight(k, " \t"))
	}
	k, _, found := strings.Cut(s, " =")
	return found && validSysctlName(k)
}

// sysctlConfName reports whether a file's name says it holds sysctl
// settings: /etc/sysctl.conf, a file of /etc/sysctl.d, "sysctl.txt".
func sysctlConfName(name string) bool {
	return strings.Contains(strings.ToLower(name), "sysctl")
}

func sniffSysctl(name string, head []byte) int {
	conf := sysctlConfName(name)
	values := 0 // lines that are the values of the files named before them
	isCmd := func(cmd string) bool {
		if p, ok := fileHeader(cmd); ok && sysctlPathName(p) != "" {
			values = 1
			return true
		}
		values = len(procFiles(cmd))
		return values > 0 || text.Program(cmd) == "sysctl"
	}
	matched, total, _ := text.SniffLines(head, 200, isCmd, func(line string) text.Match {
		if p, ok := fileHeader(line); ok {
			if sysctlPathName(p) == "" {
				values = 0
				return text.Miss
			}
			values = 1
			return text.Hit
		}
		switch {
		case sysctlMessageRe.MatchString(line):
			return text.Skip
		case values > 0:
			values--
			return text.Hit
		case sysctlSniffLine(line, conf):
			return text.Hit
		case conf && (strings.HasPrefix(strings.TrimSpace(line), ";") || strings.TrimSpace(line) == ""):
			return text.Skip // a sysctl.conf comment
		}
		if _, _, ok := relativeConfLine(line); ok {
			return text.Hit
		}
		return text.Miss
	})
	return min(text.RatioScore(matched, total, 90), 95)
}

// SysctlFormat reads sysctl -a and the forms of the same listing.
var SysctlFormat = &format.Format{
	Name: "sysctl",
	Kind: model.KindSysctl,
	Command: "sysctl -a, sysctl NAME..., grep -r . /proc/sys/net, head /proc/sys/net/bridge/*, tail -n +1 FILE..., " +
		"cat /proc/sys/..., troubleshoot's in-cluster sysctl collector, cat /etc/sysctl.conf",
	Doc: "`/proc/sys/...` paths become dotted names; `sysctl: permission denied` lines are skipped; the files of " +
		"`head`/`tail` (`==> /proc/sys/... <==` before each) and those a prompt's `cat` names give the value on the " +
		"lines after them; `grep -r .` run in /proc/sys/net/ipv4/conf (`all/rp_filter:1`) names net.ipv4.conf keys",
	Sniff: sniffSysctl,
	Parse: format.Records(readSysctl, func(s *model.Snapshot, out []model.Sysctl) { s.Sysctls = append(s.Sysctls, out...) }, ""),
}
