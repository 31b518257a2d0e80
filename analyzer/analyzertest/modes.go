package analyzertest

import (
	"fmt"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/results"
)

// SummaryWeaker lets summary mode, which analyze uses, find less than
// every attempt kept in a scenario (give it with In), for the reason
// given: what the summary of the captures cannot keep in bounded memory.
// Its findings must then be weaker, never other: each one a finding of
// the same rule and subject with every attempt kept, no more severe and
// no more certain. A scenario where both modes agree must not list it.
func SummaryWeaker(reason string) Option {
	return func(o *options) { o.summaryWeaker = reason }
}

// compareModes says how sum, the findings of scenario name with the
// captures summarized (as analyze reads them), differs from all, those
// with every attempt kept. With a reason (SummaryWeaker), sum may be
// weaker than all, not other.
func compareModes(name string, sum, all want, reason string) []string {
	diffs := compare(sum, all)
	prefix := fmt.Sprintf("scenario %s: with the captures summarized, as analyze reads them, ", name)
	if reason == "" {
		var out []string
		for _, d := range diffs {
			out = append(out, prefix+"the findings differ from those with every attempt kept: "+d)
		}
		return out
	}
	if len(diffs) == 0 {
		return []string{prefix + fmt.Sprintf("the findings are those with every attempt kept, yet the scenario is listed with SummaryWeaker (%s): remove it", reason)}
	}
	var out []string
	if sum.Skipped != nil && all.Skipped == nil {
		out = append(out, prefix+"the rule was skipped, and ran with every attempt kept")
	}
	for _, s := range sum.Findings {
		var a *wantFinding
		for i := range all.Findings {
			f := &all.Findings[i]
			if f.Rule == s.Rule && subjectString(f.Subject) == subjectString(s.Subject) {
				a = f
				break
			}
		}
		switch {
		case a == nil:
			out = append(out, prefix+fmt.Sprintf("finding %s is not found with every attempt kept: summary mode must be weaker, never other", s.name()))
		case results.SeverityRank(s.Severity) > results.SeverityRank(a.Severity):
			out = append(out, prefix+fmt.Sprintf("finding %s is more severe (%s) than with every attempt kept (%s)", s.name(), s.Severity, a.Severity))
		case analyzer.Certainty(s.Certainty).Rank() > analyzer.Certainty(a.Certainty).Rank():
			out = append(out, prefix+fmt.Sprintf("finding %s is more certain (%s) than with every attempt kept (%s)", s.name(), s.Certainty, a.Certainty))
		}
	}
	return out
}
