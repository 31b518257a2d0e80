package report

import "strconv"

// verdictLines are the lines a human-readable format starts with: one per
// cause, then "and N other findings, below" when the verdict leaves some
// out. None for a report without findings.
func verdictLines(v Verdict) []string {
	var out []string
	for _, c := range v.Causes {
		out = append(out, c.Line)
	}
	if v.Others > 0 {
		out = append(out, "and "+plural(v.Others, "1 other finding", strconv.Itoa(v.Others)+" other findings")+", below")
	}
	return out
}

// writeVerdict prints the verdict's lines as the head of format "table"
// (the lines, then a blank line) or "markdown" (a "Verdict" paragraph and
// a list); nothing when there are no lines. The text format has none: each
// of its lines is a finding's, for problem matchers.
func writeVerdict(ew *errWriter, v Verdict, format string) {
	lines := verdictLines(v)
	if len(lines) == 0 {
		return
	}
	if format == "markdown" {
		ew.printf("**Verdict**\n\n")
	}
	for _, l := range lines {
		switch format {
		case "markdown":
			ew.printf("- %s\n", mdCell(mdProse(l, nil)))
		default:
			ew.printf("%s\n", l)
		}
	}
	ew.printf("\n")
}
