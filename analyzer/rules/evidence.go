package rules

import (
	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// maxGroupEvidence bounds how many attempts, lines or packets of a group a
// finding cites one by one.
const maxGroupEvidence = 5

// dedupEvidence drops evidence without a position and evidence cited twice,
// keeping the order.
func dedupEvidence(ev []analyzer.Evidence) []analyzer.Evidence {
	seen := map[analyzer.Evidence]bool{}
	out := ev[:0:0]
	for _, e := range ev {
		if e.Pos.IsZero() || seen[e] {
			continue
		}
		seen[e] = true
		out = append(out, e)
	}
	return out
}

// captureSeverity grades a finding from a capture by what its destination
// is: an error, joined with the Kubernetes objects (which the finding
// cites), when they say something should answer there (a Service address,
// a ready endpoint); a warning from the capture alone otherwise.
func captureSeverity(rs facts.Roles) analyzer.Severity {
	if rs.Live() {
		return analyzer.Error
	}
	return analyzer.Warning
}

// withFinding puts a rule's judgement c (certainty, severity, supports,
// contradicts, alternatives, the deciding command) on the finding that
// words carries (title, summary, cause, fix, evidence ...), for rules
// that build the two apart as two findings.
func withFinding(c, words analyzer.Finding) analyzer.Finding {
	words.Certainty = c.Certainty
	if c.Severity != 0 {
		words.Severity = c.Severity
	}
	words.Supports = append(words.Supports, c.Supports...)
	words.Contradicts = append(words.Contradicts, c.Contradicts...)
	words.Alternatives = append(words.Alternatives, c.Alternatives...)
	if c.Decide != "" {
		words.Decide = c.Decide
	}
	return words
}

// lineRun is the log lines of a finding that say one thing: the first,
// the last, and how many.
type lineRun struct {
	first, last *model.LogEvent
	count       int
}

// add counts le, a line after those already counted.
func (r *lineRun) add(le *model.LogEvent) {
	if r.first == nil {
		r.first = le
	}
	r.last = le
	r.count++
}

// evidence cites the run's first line with note, and its last, when it is
// another, with lastNote.
func (r *lineRun) evidence(note, lastNote string) []analyzer.Evidence {
	ev := []analyzer.Evidence{{Pos: r.first.Pos, Note: note}}
	if r.last != r.first {
		ev = append(ev, analyzer.Evidence{Pos: r.last.Pos, Note: lastNote})
	}
	return ev
}
