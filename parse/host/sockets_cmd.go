package host

import (
	"path"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
)

// awkPrintRe finds the column an awk program prints: {print $4}.
var awkPrintRe = lazyre.New(`print\s*\(?\s*\$(\d+)`)

// parseSockCmd reads a command line that runs ss or netstat, possibly in a
// pipeline: which columns ss prints, the protocol, and for counts the column
// counted and the state kept.
func parseSockCmd(cmd string) (sockCmd, bool) {
	var c sockCmd
	segs := splitPipeline(cmd)
	if len(segs) == 0 {
		return c, false
	}
	words := shellWords(segs[0])
	at := -1
	for i, w := range words {
		if b := path.Base(w); b == "ss" || b == "netstat" {
			c.tool, at = b, i
			break
		}
	}
	if at < 0 {
		return c, false
	}
	args := words[at+1:]
	var states []string
	if c.tool == "ss" {
		states = c.ssArgs(args)
	} else {
		c.netstatArgs(args)
	}
	for _, seg := range segs[1:] {
		w := shellWords(seg)
		if len(w) == 0 {
			continue
		}
		switch path.Base(w[0]) {
		case "grep", "egrep", "fgrep", "zgrep":
			invert := false
			var pats []string
			for k := 1; k < len(w); k++ {
				a := w[k]
				if a == "-e" && k+1 < len(w) {
					pats = append(pats, w[k+1])
					k++
					continue
				}
				if strings.HasPrefix(a, "-") && len(a) > 1 {
					invert = invert || a == "--invert-match" || strings.Contains(a, "v") && !strings.HasPrefix(a, "--")
					continue
				}
				pats = append(pats, a)
			}
			if !invert {
				for _, p := range pats {
					states = append(states, stateWords(p)...)
				}
			}
		case "awk", "gawk", "mawk", "nawk":
			prog := ""
			for k := 1; k < len(w); k++ {
				a := w[k]
				if a == "-F" || a == "-v" || a == "-f" {
					k++
					continue
				}
				if strings.HasPrefix(a, "-") {
					continue
				}
				prog = a
				break
			}
			if m := awkPrintRe.FindStringSubmatch(prog); m != nil && c.column == "" && !c.count {
				n, _ := strconv.Atoi(m[1])
				c.column = c.columnName(n)
				if c.column == "" {
					c.column = "?"
				}
			}
			states = append(states, stateWords(prog)...)
		case "uniq":
			for _, a := range w[1:] {
				if a == "--count" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
					c.count = true
				}
			}
		}
	}
	if c.column == "?" {
		c.column = ""
	}
	for _, s := range states {
		if s == "" {
			continue
		}
		if c.state != "" && c.state != s {
			c.ambState = true
		}
		c.state = s
	}
	if c.ambState {
		c.state = ""
	}
	return c, true
}

// columnName names column n (1-based, as awk counts) of the tool's rows.
func (c *sockCmd) columnName(n int) string {
	var cols []string
	if c.tool == "netstat" {
		cols = []string{"proto", "recvq", "sendq", "local", "peer", "state"}
	} else {
		if c.netid {
			cols = append(cols, "netid")
		}
		if !c.noState {
			cols = append(cols, "state")
		}
		cols = append(cols, "recvq", "sendq", "local", "peer")
	}
	if n < 1 || n > len(cols) {
		return ""
	}
	switch cols[n-1] {
	case "state", "local", "peer":
		return cols[n-1]
	}
	return ""
}

// splitPipeline splits a command line at the pipes outside quotes.
func splitPipeline(cmd string) []string {
	var out []string
	var quote byte
	start := 0
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '|':
			if i+1 < len(cmd) && cmd[i+1] == '|' { // ||: not a pipe
				i++
				continue
			}
			out = append(out, cmd[start:i])
			start = i + 1
		}
	}
	return append(out, cmd[start:])
}

// shellWords splits one command into words, removing quotes.
func shellWords(s string) []string {
	var out []string
	var b strings.Builder
	var quote byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				b.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// stateWords returns the state names (ss spelling) in a grep pattern or an
// awk program: "TIME-WAIT", "ESTAB|TIME-WAIT", "/TIME_WAIT/",
// "$1==\"LISTEN\"", "-i listen".
func stateWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) {
		if st := stateWord(w); st != "" {
			out = append(out, st)
		}
	}
	return out
}

func stateWord(w string) string {
	u := strings.ToUpper(w)
	if s := sockStateName(u); s != "" {
		return s
	}
	u = strings.ReplaceAll(u, "_", "-")
	if s := sockStateName(u); s != "" {
		return s
	}
	switch u {
	case "FIN-WAIT1":
		return "FIN-WAIT-1"
	case "FIN-WAIT2":
		return "FIN-WAIT-2"
	}
	return ""
}
