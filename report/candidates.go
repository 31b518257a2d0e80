package report

import (
	"fmt"

	"github.com/netmortem/netmortem/analyzer"
)

// maxCandidates is how many of a finding's candidate causes the table,
// text and Markdown forms show; JSON and YAML carry them all.
const maxCandidates = 3

// candidateLines says a finding's candidate causes (analyzer.Candidate),
// in the order the evidence ranks them, at most maxCandidates, one line
// each: the rule, its standing, why, and the command that decides it (as
// decide renders it); then how many more, by standing (moreCandidates). text renders the
// prose (the identity for the text formats, mdProse for Markdown), rule
// the rule's name.
func candidateLines(f analyzer.Finding, text, rule, decide func(string) string) []string {
	var out []string
	for i, c := range f.Candidates {
		if i == maxCandidates {
			out = append(out, "Candidates: "+text(moreCandidates(f.Candidates[i:])))
			break
		}
		l := fmt.Sprintf("Candidate %d: %s (%s): %s", i+1, rule(c.Rule), c.Standing, text(c.Why))
		if c.Decide != "" {
			l += "; decide: " + decide(c.Decide)
		}
		out = append(out, l)
	}
	return out
}
