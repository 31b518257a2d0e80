package report

import (
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/shq"
)

// Markdown output is pasted into tickets and chats that render it, and
// the names and messages in it come from the bundle: a Pod named
// "<img src=x onerror=...>" or an Event message "[docs](javascript:...)"
// must show as text. mdProse keeps the code spans a rule wrote (fenced
// anew by mdCode, so that no backtick inside can close them) and, in the
// prose around them, mdText escapes what would start HTML, an autolink,
// an entity, a link or a link definition, and backticks. Control and
// bidirectional characters are escaped by the writer (package escape).

// mdProse returns s, prose with code spans, as inert Markdown. atoms are
// names in s that neither open nor close a code span (see splitSpans).
func mdProse(s string, atoms []string) string {
	if !strings.ContainsAny(s, "`<&[]") {
		return s
	}
	var b strings.Builder
	for _, sp := range splitSpans(s, atoms) {
		if sp.code {
			b.WriteString(mdCode(sp.text))
		} else {
			b.WriteString(mdText(sp.text))
		}
	}
	return b.String()
}

// mdText escapes s, prose without code spans, for Markdown: "<" as an
// entity (no HTML, no autolink), a "&" that would start an entity or
// character reference ("&lt;", "&#x6A;") as an entity, a backtick, a "]" that would end a link's
// text ("](", "][") and a "[" that would open a link definition at the
// start of s, with a backslash. Other text is left as it is.
func mdText(s string) string {
	if !strings.ContainsAny(s, "`<&[]") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '<':
			b.WriteString("&lt;")
		case c == '&' && isEntity(s[i+1:]):
			b.WriteString("&amp;")
		case c == '`':
			b.WriteString("\\`")
		case c == ']' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '['):
			b.WriteString(`\]`)
		case c == '[' && strings.TrimLeft(s[:i], " ") == "":
			b.WriteString(`\[`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isEntity reports whether s, after a "&", makes an entity or character
// reference of CommonMark: a name or "#" and digits, or "#x" and hex
// digits, then ";".
func isEntity(s string) bool {
	n := 0
	for n < len(s) && n < 40 && (isAlnum(s[n]) || n == 0 && s[n] == '#') {
		n++
	}
	return n > 0 && n < len(s) && s[n] == ';'
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// mdAtoms are the names of f and extra, as they are and as pasteSafe
// quotes them, longest first: the atoms of mdProse for f's text.
func mdAtoms(f analyzer.Finding, extra ...string) []string {
	names := hostileNames(f, extra...)
	if len(names) == 0 {
		return nil
	}
	atoms := slices.Clone(names)
	for _, n := range names {
		atoms = append(atoms, shq.Quote(n))
	}
	slices.SortStableFunc(atoms, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(atoms)
}
