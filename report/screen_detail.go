package report

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/model"
)

// ErrNoFinding is the error of WriteTable for a TableStyle.Detail that
// selects no finding.
var ErrNoFinding = errors.New("no such finding")

// fullFinding is the full account of finding i of r: its heading, what
// happened, its cause and what shows, contradicts or would decide it, its
// fix, its facts (each list at most maxFactItems long, with its length)
// and its evidence (at most maxDetailEvidence pieces, with the total).
func fullFinding(r *Report, i int) []sline {
	f := r.Findings[i]
	head := heading(i, f)
	head.most = 0 // the full account: the whole title
	out := []sline{head}
	if f.Fingerprint != "" {
		out = append(out, prose("    Fingerprint: ", escape.String(f.Fingerprint)))
	}
	if f.Summary != "" {
		out = append(out, prose("    ", escape.String(f.Summary)))
	}
	if f.Cause != "" {
		out = append(out, prose("    Cause: ", escape.String(f.Cause+certaintyNote(f.Certainty))))
	}
	for _, l := range causalLines(analyzer.Finding{ExplainedBy: f.ExplainedBy, Supports: f.Supports,
		Contradicts: f.Contradicts, Alternatives: f.Alternatives}, plain, plain) {
		label, text, _ := strings.Cut(l, ": ")
		out = append(out, prose("    "+label+": ", escape.String(text)))
	}
	out = append(out, decideLines("    ", f)...)
	out = append(out, candidateSlines(f)...)
	if f.Fix != "" {
		out = append(out, prose("    Fix: ", escape.String(f.Fix)))
	}
	if len(f.Facts) > 0 {
		out = append(out, prose("    ", "Facts:"))
		keys := make([]string, 0, len(f.Facts))
		for k := range f.Facts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, prose("      "+escape.String(k)+": ", escape.String(factValueCapped(f.Facts[k], maxFactItems))))
		}
	}
	if len(f.Evidence) > 0 {
		out = append(out, prose("    ", fmt.Sprintf("Evidence (%d):", len(f.Evidence))))
		for k, e := range f.Evidence {
			if k == maxDetailEvidence {
				out = append(out, prose("      ", fmt.Sprintf("(+%d more: evidence in -o json)", len(f.Evidence)-k)))
				break
			}
			out = append(out, hanging("      ", "        ", escape.String(e.String())))
		}
	}
	return out
}

// candidateSlines are the candidate causes of f in its full account, at
// most maxCandidates, as candidateLines says them, but with the command
// that decides each on a line of its own under its note as a comment.
func candidateSlines(f analyzer.Finding) []sline {
	var out []sline
	for i, c := range f.Candidates {
		if i == maxCandidates {
			out = append(out, prose("    ", "Candidates: "+moreCandidates(f.Candidates[i:])))
			break
		}
		out = append(out, prose(fmt.Sprintf("    Candidate %d: ", i+1), escape.String(fmt.Sprintf("%s (%s): %s", c.Rule, c.Standing, c.Why))))
		if c.Decide != "" {
			out = append(out, decideShell("      ", c.Decide)...)
		}
	}
	return out
}

// candidatesBrief names f's candidate causes on one line, at most
// maxCandidates, the names of one standing before it: "hairpin-drop
// (found); rp-filter-drop, network-policy-deny (open)"; then how many
// more, by standing, and where they are listed; "" when it has none.
func candidatesBrief(f analyzer.Finding) string {
	shown := f.Candidates[:min(len(f.Candidates), maxCandidates)]
	var parts, names []string
	for i, c := range shown {
		names = append(names, c.Rule)
		if i == len(shown)-1 || shown[i+1].Standing != c.Standing {
			parts = append(parts, fmt.Sprintf("%s (%s)", strings.Join(names, ", "), c.Standing))
			names = nil
		}
	}
	s := strings.Join(parts, "; ")
	if rest := f.Candidates[len(shown):]; len(rest) > 0 {
		s += "; " + moreCandidates(rest)
	}
	return s
}

// moreCandidates counts the candidates rest, which the table, text and
// Markdown forms leave out, by standing, and says where they are listed:
// "39 more (32 open, 7 weakened; -o json lists them)".
func moreCandidates(rest []analyzer.Candidate) string {
	var order []analyzer.Standing
	by := map[analyzer.Standing]int{}
	for _, c := range rest {
		if by[c.Standing] == 0 {
			order = append(order, c.Standing)
		}
		by[c.Standing]++
	}
	var counts []string
	for _, st := range order {
		counts = append(counts, fmt.Sprintf("%d %s", by[st], st))
	}
	return fmt.Sprintf("%d more (%s; -o json lists them)", len(rest), strings.Join(counts, ", "))
}

// factValueCapped is FactValue of v, a list of more than most items
// cut to its first most, then its length: "a, b, … (300 in all)".
func factValueCapped(v any, most int) string {
	items := factItems(v)
	if len(items) <= most {
		return FactValue(v)
	}
	return strings.Join(items[:most], ", ") + fmt.Sprintf(", … (%d in all)", len(items))
}

// factItems are the items of a list fact, one each, or nil for a value
// that is not a list.
func factItems(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []uint16, []int, []any:
		var out []string
		switch x := x.(type) {
		case []uint16:
			for _, p := range x {
				out = append(out, FactValue(p))
			}
		case []int:
			for _, p := range x {
				out = append(out, FactValue(p))
			}
		case []any:
			for _, p := range x {
				out = append(out, FactValue(p))
			}
		}
		return out
	}
	return nil
}

// undecided are the findings of r whose cause the analysis leaves open,
// by fingerprint: not proven, not explained by another finding, and not
// for information only.
func undecided(r *Report) map[string]bool {
	m := map[string]bool{}
	for _, f := range r.Findings {
		if f.Certainty != analyzer.Proven && f.ExplainedBy == "" && f.Severity > analyzer.Info && f.Fingerprint != "" {
			m[f.Fingerprint] = true
		}
	}
	return m
}

// relevantSkipped are the skipped rules of r that could explain what an
// undecided finding shows: a rule that ran and found it names a symptom
// the skipped rule names too (analyzer.Rule.Symptoms).
func relevantSkipped(r *Report, open map[string]bool) map[string]bool {
	m := map[string]bool{}
	var symptoms []*analyzer.Symptom
	for _, f := range r.Findings {
		if !open[f.Fingerprint] {
			continue
		}
		if rule := ruleNamed(r.rules, f.Rule); rule != nil {
			for _, s := range rule.Symptoms {
				symptoms = append(symptoms, s.Symptom)
			}
		}
	}
	for _, s := range r.Skipped {
		rule := ruleNamed(r.rules, s.Rule)
		if rule != nil && slices.ContainsFunc(rule.Symptoms, func(ref analyzer.SymptomRef) bool {
			return slices.Contains(symptoms, ref.Symptom)
		}) {
			m[s.Rule] = true
		}
	}
	return m
}

// collectAsked are the entries of r.NextEvidence that would change the
// answer: those deciding an undecided finding's cause or letting run a
// skipped rule that could explain it, without the commands to decide
// printed already (printed), each narrowed to those findings and rules;
// of the commands that give one kind of evidence, the first only (the
// others, which would give the same, stay in the JSON).
func collectAsked(r *Report, printed map[string]bool) []NextEvidence {
	open := undecided(r)
	if len(open) == 0 {
		return nil
	}
	relevant := relevantSkipped(r, open)
	var shown []NextEvidence
	kinds := map[model.Kind]bool{}
	for _, e := range r.NextEvidence {
		// A command printed already gives its kind.
		if printed[e.Shell] && e.Kind != "" {
			kinds[e.Kind] = true
		}
	}
	for _, e := range r.NextEvidence {
		if !e.Asks() || printed[e.Shell] || kinds[e.Kind] {
			continue
		}
		e.Decides = slices.DeleteFunc(slices.Clone(e.Decides), func(fp string) bool { return !open[fp] })
		e.Unblocks = slices.DeleteFunc(slices.Clone(e.Unblocks), func(rule string) bool { return !relevant[rule] })
		if len(e.Decides) > 0 || len(e.Unblocks) > 0 {
			e.Joins, e.Notes = nil, nil
			shown = append(shown, e)
			if e.Kind != "" {
				kinds[e.Kind] = true
			}
		}
	}
	return shown
}

// collectTitle is the heading of the list of shown of most commands at
// most: "To decide, collect", with how many there are when there are
// more.
func collectTitle(shown []NextEvidence, most int) string {
	if len(shown) > most {
		return fmt.Sprintf("%s (%d of %d; all of them: netmortem inspect, or next_evidence in -o json)",
			collectHeading(shown), most, len(shown))
	}
	return collectHeading(shown)
}

// screenCollect is the table format's list of commands to collect
// (collectAsked), at most maxScreenCollect of them, each after a comment
// saying where to run it and what it decides.
func screenCollect(r *Report, printed map[string]bool) []sline {
	shown := collectAsked(r, printed)
	if len(shown) == 0 {
		return nil
	}
	out := []sline{blank, prose("", collectTitle(shown, maxScreenCollect)+":")}
	for i, e := range shown {
		if i == maxScreenCollect {
			break
		}
		out = append(out, hanging("  # ", "  # ", escape.String(nextEvidenceWhy(r, e))),
			commandLine("  ", escape.String(e.Shell)))
	}
	return out
}
