package report

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/internal/escape"
)

// askedFor returns the entries of r.NextEvidence that decide a finding or
// let a skipped rule run (the ones the table and markdown list), and how
// many others there are (only joined by rules that ran).
func askedFor(r *Report) (shown []NextEvidence, others int) {
	for _, e := range r.NextEvidence {
		if len(e.Decides) > 0 || len(e.Unblocks) > 0 {
			shown = append(shown, e)
		} else {
			others++
		}
	}
	return shown, others
}

// nextEvidenceWhy says where a command is needed and what it would decide:
// "on node1; decides [3] syn-unanswered; lets timewait-churn run".
func nextEvidenceWhy(r *Report, e NextEvidence) string {
	var parts []string
	switch {
	case e.Scope == "cluster":
		parts = append(parts, "once, with kubectl")
	case len(e.Nodes) > 0:
		parts = append(parts, "on "+strings.Join(e.Nodes, ", "))
	default:
		parts = append(parts, "on the nodes")
	}
	if len(e.Decides) > 0 {
		var fs []string
		for _, fp := range e.Decides {
			fs = append(fs, findingRef(r, fp))
		}
		parts = append(parts, "decides "+strings.Join(fs, ", "))
	}
	for _, n := range e.Notes {
		parts = append(parts, "look for: "+n)
	}
	if len(e.Unblocks) > 0 {
		parts = append(parts, "lets "+strings.Join(e.Unblocks, ", ")+" run")
	}
	return strings.Join(parts, "; ")
}

// findingRef names the finding with fingerprint fp: "[3] syn-unanswered",
// or the fingerprint when it is not among r's findings.
func findingRef(r *Report, fp string) string {
	for i, f := range r.Findings {
		if f.Fingerprint == fp {
			return fmt.Sprintf("[%d] %s", i+1, f.Rule)
		}
	}
	return fp
}

// writeNextEvidence writes the table format's "To decide, collect:"
// section: each command, then where and why.
func writeNextEvidence(ew *errWriter, r *Report) {
	shown, others := askedFor(r)
	if len(shown) == 0 {
		return
	}
	ew.printf("\nTo decide, collect:\n")
	for _, e := range shown {
		ew.printf("  $ %s\n", escape.String(e.Shell))
		ew.printf("      %s\n", escape.String(nextEvidenceWhy(r, e)))
	}
	if others > 0 {
		ew.printf("  (and %d more %s that rules which ran would join: next_evidence in -o json)\n", others, plural(others, "command", "commands"))
	}
}

// writeNextEvidenceMarkdown writes the markdown format's "To decide,
// collect" section.
func writeNextEvidenceMarkdown(ew *errWriter, r *Report) {
	shown, others := askedFor(r)
	if len(shown) == 0 {
		return
	}
	ew.printf("\n### To decide, collect\n\n")
	for _, e := range shown {
		ew.printf("- %s: %s\n", mdCode(e.Shell), mdCell(nextEvidenceWhy(r, e)))
	}
	if others > 0 {
		ew.printf("\n_And %d more %s that rules which ran would join (`next_evidence` in `-o json`)._\n", others, plural(others, "command", "commands"))
	}
}
