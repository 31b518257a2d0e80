package report

import (
	"slices"

	"github.com/netmortem/netmortem/analyzer"
)

// SetSuppressed records the findings that a configuration's ignore entries
// or a baseline left out of r: their number always (SuppressedCount, in
// every format's summary) and their fingerprints (SuppressedFingerprints),
// the findings themselves, with why, when show is set (--show-suppressed).
func (r *Report) SetSuppressed(sup []analyzer.Suppressed, show bool) {
	r.SuppressedCount = len(sup)
	r.SuppressedFingerprints = SuppressedFingerprints(sup)
	r.Suppressed = nil
	if show {
		r.Suppressed = slices.Clone(sup)
		if r.Suppressed == nil {
			r.Suppressed = []analyzer.Suppressed{}
		}
		for i := range r.Suppressed {
			r.Suppressed[i].Finding = pasteSafe(r.Suppressed[i].Finding, r.names...)
		}
	}
}

// SuppressedFingerprints returns the fingerprints of sup, sorted, each
// once; nil for none.
func SuppressedFingerprints(sup []analyzer.Suppressed) []string {
	var fps []string
	for _, s := range sup {
		fps = append(fps, s.Fingerprint)
	}
	slices.Sort(fps)
	return slices.Compact(fps)
}

// suppressedNote is the summary line of the suppressed findings: "2
// findings suppressed (--show-suppressed lists them)", or "" for none.
func suppressedNote(r *Report) string {
	if r.SuppressedCount == 0 {
		return ""
	}
	s := plural(r.SuppressedCount, "1 finding", itoa(r.SuppressedCount)+" findings") + " suppressed"
	if r.Suppressed == nil {
		s += " (--show-suppressed lists them)"
	}
	return s
}

// why says why a finding was suppressed: "by .netmortem.yaml:12: reason"
// or "by the baseline (in the baseline old.json)".
func why(s analyzer.Suppressed) string {
	if s.By == "baseline" {
		return "baseline: " + s.Reason
	}
	return "by " + s.By + ": " + s.Reason
}

// writeSuppressedText ends the text format: one line per suppressed
// finding shown, in the findings' shape but with "suppressed" where they
// have the severity (so that a problem matcher looking for error, warning
// or info passes over it), then the count.
func writeSuppressedText(ew *errWriter, r *Report) {
	for _, s := range r.Suppressed {
		var first analyzer.Evidence
		if len(s.Evidence) > 0 {
			first = s.Evidence[0]
		}
		ew.printf("%s: suppressed: %s: %s (%s, %s)\n", textPos(first.Pos), s.Rule, textMessage(s.Finding, first), s.Severity, why(s))
	}
	if n := suppressedNote(r); n != "" {
		ew.printf("%s\n", n)
	}
}

// writeSuppressedMarkdown ends the markdown format.
func writeSuppressedMarkdown(ew *errWriter, r *Report) {
	if len(r.Suppressed) > 0 {
		ew.printf("\n### Suppressed findings\n\n")
		for _, s := range r.Suppressed {
			ew.printf("- %s `%s`: %s (%s)\n", s.Severity, s.Rule, mdCell(mdProse(s.Title, nil)), mdCell(mdProse(why(s), nil)))
		}
	}
	if n := suppressedNote(r); n != "" {
		ew.printf("\n_%s._\n", n)
	}
}

// suppressedForJSON returns r, or a copy whose suppressed findings' facts
// encoding/json can write, as forJSON makes the findings' ones (with its
// warning).
func (r *Report) suppressedForJSON() *Report {
	if len(r.Suppressed) == 0 {
		return r
	}
	tmp := &Report{Findings: make([]analyzer.Finding, len(r.Suppressed))}
	for i, s := range r.Suppressed {
		tmp.Findings[i] = s.Finding
	}
	safe := tmp.forJSON()
	if safe == tmp {
		return r
	}
	c := *r
	c.Suppressed = slices.Clone(r.Suppressed)
	for i := range c.Suppressed {
		c.Suppressed[i].Finding = safe.Findings[i]
	}
	c.Warnings = append(slices.Clone(r.Warnings), safe.Warnings...)
	return &c
}
