package report

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
)

// certaintyNote is what follows a finding's cause: nothing for a proven
// cause, a caveat otherwise.
func certaintyNote(c analyzer.Certainty) string {
	switch c {
	case analyzer.Likely:
		return " (likely: not shown by two sources)"
	case analyzer.Unknown:
		return " (not established by the evidence)"
	}
	return ""
}

// causalLines says what supports and contradicts a finding's cause, the
// causes not ruled out, and the command that would decide (as decide
// renders it), one line each; text renders the prose (the identity for
// the text formats, mdProse for Markdown).
func causalLines(f analyzer.Finding, text, decide func(string) string) []string {
	var out []string
	if f.ExplainedBy != "" {
		out = append(out, "Explained by: "+text(f.ExplainedBy))
	}
	list := func(label string, l []string) {
		if len(l) > 0 {
			out = append(out, fmt.Sprintf("%s %s", label, text(strings.Join(l, "; "))))
		}
	}
	list("Shown by:", f.Supports)
	list("Would contradict it:", f.Contradicts)
	if len(f.Alternatives) > 0 {
		var b strings.Builder
		for i, a := range f.Alternatives {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%d. %s", i+1, text(a))
		}
		out = append(out, "Not ruled out: "+b.String())
	}
	if f.Decide != "" {
		out = append(out, "To decide, run: "+decide(f.Decide))
	}
	return out
}

// certaintyTag is what a finding's heading adds after its severity for a
// cause that is not proven.
func certaintyTag(c analyzer.Certainty) string {
	switch c {
	case analyzer.Likely:
		return " (cause likely)"
	case analyzer.Unknown:
		return " (cause unknown)"
	}
	return ""
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
