package logs

import (
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// KlogFormat reads klog lines, bare or after a syslog or journald prefix.
var KlogFormat = logFormat("klog", format.Format{
	Name: "klog",
	Command: "journalctl -u kubelet, kubectl logs of kube-proxy, kube-apiserver, ingress-nginx ..., " +
		"/var/log/kube-*.log",
	Doc: "klog lines (`I0915 19:09:04.534948 607529 prober.go:121] ...`), bare, after stern's `<pod> <container> ` " +
		"(the Pod and container kept), or after a syslog /" +
		" journald prefix (the host is the node, the program the source; month names in any common locale," +
		" journalctl's short, short-precise, short-iso, short-iso-precise, short-full, short-unix and short-monotonic forms," +
		" RFC 3164's `<PRI>`); structured `\"msg\" " +
		"key=\"value\"` pairs, `{...}`/`[...]` values and multi-line `key=<` values in Fields (their lines of no log shape read as the value's where a paste lost their tab, and a `key=` ending the line read as `key=<` where it lost the `<`), with" +
		" `caller` and `pid`; a line whose header a paste cut before the caller (`cni.go:319] ...`) is an" +
		" entry of no time and no level; indented lines, `Trace[...]` steps, the output a klog error quotes" +
		" inside parentheses and ingress-nginx's `NGINX configuration diff:` continue an entry, and a line of no log" +
		" shape continues a syslog line a paste hard-wrapped (one ending with `,`, or completed into a known" +
		" kernel message: `table full,` then `dropping packet`); " +
		"`journalctl -x` explanations and `-- Boot --` markers are skipped. klog and syslog times" +
		" have no year: they are read in year 0 (UTC). A journal without klog lines is read here " +
		"too",
})

// klogRe matches klog's header; the message follows it. (Matching only the
// header keeps the regexp engine from backtracking over long messages.)
var klogRe = lazyre.New(`^([IWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{1,9})\s+(\d+)\s+([^\s\]]+)\] ?`)

// cutKlogRe matches a klog line whose header a paste cut before the
// caller: "cni.go:319] Error deleting network: ...".
var cutKlogRe = lazyre.New(`^([A-Za-z0-9_.-]+\.go:\d+)\] ?`)

// parseCutKlog reads a klog line without its level, time and pid, as
// tickets quote the message of a long line: an event of no time and no
// level, its caller kept.
func parseCutKlog(line string) (model.LogEvent, bool) {
	m, msg := submatches(cutKlogRe, line)
	if m == nil || strings.TrimSpace(msg) == "" {
		return model.LogEvent{}, false
	}
	ev := model.LogEvent{Fields: map[string]string{"caller": m[1]}}
	klogMessage(&ev, msg)
	return ev, true
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
	klogMessage(&ev, msg)
	return ev, true
}

// klogMessage reads msg, what follows a klog header, into ev: the quoted
// message of a structured line and its key=value pairs into Fields, or
// the message as it is.
func klogMessage(ev *model.LogEvent, msg string) {
	if strings.HasPrefix(msg, `"`) {
		if q, err := strconv.QuotedPrefix(msg); err == nil {
			text, _ := strconv.Unquote(q)
			ev.Message = text
			rest := readKV(strings.TrimLeft(msg[len(q):], " "), ev.Fields)
			if rest != "" {
				ev.Message += " " + rest
			}
			return
		}
	}
	ev.Message = msg
}

var kvKeyRe = lazyre.New(`^[A-Za-z_][A-Za-z0-9_.\-/]*=`)

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
		case v == "<", v == "":
			// key=< opens a multi-line value; a key= that ends the line
			// is one whose "<" a paste into Markdown or HTML lost.
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
