package browser

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// Want is what the HTML report of one analysis must show.
type Want struct {
	// Fingerprints are the fingerprints of the report's findings.
	Fingerprints []string
	// Timelines are the fingerprints of the findings that have a timeline,
	// when TimelinesKnown; otherwise only the figures the page has are
	// checked (each inside its finding, each with an svg).
	Timelines      []string
	TimelinesKnown bool
	// MinQuotes is the least number of li.quote the appendix must have.
	MinQuotes int
}

var quoteID = regexp.MustCompile(`^q-[0-9]+$`)

// CheckReport lists where the page breaks the HTML report's layout
// contract for w: body[data-findings] is the number of findings; one
// section.finding#f-FP[data-fingerprint=FP] per finding; section#verdict
// and section#appendix present; each figure.timeline[data-fingerprint=FP]
// holds an svg, sits in the section of finding FP, and there is at most one
// per finding (exactly those of w.Timelines when known); the appendix's
// li.quote have distinct ids q-N.
func (p *Page) CheckReport(w Want) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	switch {
	case !p.HasDataFindings:
		bad("body has no data-findings attribute")
	case p.DataFindings != strconv.Itoa(len(w.Fingerprints)):
		bad("body data-findings=%q, want %d", p.DataFindings, len(w.Fingerprints))
	}
	if len(p.Findings) != len(w.Fingerprints) {
		bad("%d section.finding, want %d", len(p.Findings), len(w.Fingerprints))
	}
	shown := map[string]int{}
	for _, s := range p.Findings {
		shown[s.Fingerprint]++
		if s.ID != "f-"+s.Fingerprint {
			bad("section.finding id=%q data-fingerprint=%q: want id f-%s", s.ID, s.Fingerprint, s.Fingerprint)
		}
		if !slices.Contains(w.Fingerprints, s.Fingerprint) {
			bad("section.finding for %q, which is not a finding of the report", s.Fingerprint)
		}
	}
	for _, fp := range w.Fingerprints {
		if shown[fp] != 1 {
			bad("finding %s has %d section.finding, want 1", fp, shown[fp])
		}
	}
	if !p.Verdict {
		bad("no section#verdict")
	}
	if !p.Appendix {
		bad("no section#appendix")
	}
	drawn := map[string]int{}
	for i, f := range p.Timelines {
		drawn[f.Fingerprint]++
		if f.SVGs == 0 {
			bad("figure.timeline %d (%s) has no svg", i+1, f.Fingerprint)
		}
		if f.Section != f.Fingerprint {
			bad("figure.timeline %d (%s) is inside the section of finding %q", i+1, f.Fingerprint, f.Section)
		}
	}
	for i, f := range p.Timelines {
		if n := drawn[f.Fingerprint]; n > 1 && !slices.ContainsFunc(p.Timelines[:i], func(g Figure) bool { return g.Fingerprint == f.Fingerprint }) {
			bad("finding %s has %d figure.timeline, want at most 1", f.Fingerprint, n)
		}
	}
	if w.TimelinesKnown {
		for _, fp := range w.Timelines {
			if drawn[fp] == 0 {
				bad("finding %s has a timeline but no figure.timeline", fp)
			}
		}
		for i, f := range p.Timelines {
			if !slices.Contains(w.Timelines, f.Fingerprint) && !slices.ContainsFunc(p.Timelines[:i], func(g Figure) bool { return g.Fingerprint == f.Fingerprint }) {
				bad("figure.timeline for %s, which has no timeline", f.Fingerprint)
			}
		}
	}
	if len(p.Quotes) < w.MinQuotes {
		bad("%d li.quote in the appendix, want at least %d", len(p.Quotes), w.MinQuotes)
	}
	ids := map[string]bool{}
	for _, id := range p.Quotes {
		if !quoteID.MatchString(id) {
			bad("li.quote id=%q, want q-N", id)
		}
		if ids[id] {
			bad("two li.quote with id %q", id)
		}
		ids[id] = true
	}
	return out
}
