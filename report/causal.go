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
// causes not ruled out, and the command that would decide, one line each.
func causalLines(f analyzer.Finding) []string {
	var out []string
	list := func(label string, l []string) {
		if len(l) > 0 {
			out = append(out, fmt.Sprintf("%s %s", label, strings.Join(l, "; ")))
		}
	}
	list("Shown by:", f.Supports)
	list("Against it:", f.Contradicts)
	if len(f.Alternatives) > 0 {
		var b strings.Builder
		for i, a := range f.Alternatives {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%d. %s", i+1, a)
		}
		out = append(out, "Not ruled out: "+b.String())
	}
	if f.Decide != "" {
		out = append(out, "To decide, run: "+f.Decide)
	}
	return out
}
