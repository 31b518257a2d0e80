package analyzer

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// Standing says how a bundle's evidence bears on a candidate cause.
type Standing string

// The standings, from the best supported.
const (
	// CandidateFound: the candidate's rule has a finding of its own on
	// the same node or subject.
	CandidateFound Standing = "found"
	// CandidateOpen: evidence the candidate's rule reads (Needs,
	// NeedsAny, Uses) is not in the bundle for the finding's node: it
	// cannot be ruled out, and its Decide brings that evidence.
	CandidateOpen Standing = "open"
	// CandidateWeakened: the candidate's rule read all it reads and
	// found nothing: the cause is weakened, if not ruled out (the failure
	// may have passed before the evidence was taken).
	CandidateWeakened Standing = "weakened"
)

// Candidate is a cause a finding of unknown cause leaves open: another
// rule that explains one of the symptoms of the finding's rule (Symptoms),
// how the bundle's evidence bears on it, and the command that decides it.
type Candidate struct {
	// Rule is the candidate's rule.
	Rule string `json:"rule" yaml:"rule"`
	// Standing says how the evidence bears on it.
	Standing Standing `json:"standing" yaml:"standing"`
	// Why says what in the bundle gives it its standing: the rule's own
	// finding, the evidence missing, or the evidence read in vain.
	Why string `json:"why" yaml:"why"`
	// Decide is the one command whose output would decide it: the
	// Decide of the rule's own finding when it has one, else the rule's
	// Decide.
	Decide string `json:"decide,omitempty" yaml:"decide,omitempty"`
}

// rankCandidates gives each finding of unknown cause, at warning or above,
// the candidates of its symptoms (see Candidate) in the order the evidence
// supports them: those with a finding of their own on the same node or
// subject first (the firmest first), then those whose evidence is missing,
// then those whose evidence was read and found nothing; within each, a rule
// known to lead to the finding's rule (Causality) first, then the rule
// sharing more of its symptoms, those few rules explain counting most
// (sharedSymptoms), then the one ranked first under them, then the order
// of the rules. A rule the finding's rule is known to lead
// to is an effect, not a candidate. The finding's Alternatives gain the
// candidates found, first; its Decide becomes that of the first candidate
// when that one is found, or when the rule gave none: the command that
// tells the first candidate from the next.
func rankCandidates(res *Result, snap *model.Snapshot) {
	if snap == nil || len(res.Rules) < 2 {
		return
	}
	skipped := map[string]Skipped{}
	for _, s := range res.Skipped {
		skipped[s.Rule] = s
	}
	byRule := map[string][]int{}
	for i, f := range res.Findings {
		byRule[f.Rule] = append(byRule[f.Rule], i)
	}
	causes := NewCausality(res.Rules)
	explainers := map[*Symptom]int{} // how many rules explain each symptom
	for _, r := range res.Rules {
		for _, s := range r.Symptoms {
			explainers[s.Symptom]++
		}
	}
	for i := range res.Findings {
		f := &res.Findings[i]
		if f.Certainty != Unknown || f.Severity < Warning {
			continue
		}
		r := ruleOf(res.Rules, f.Rule)
		if r == nil || len(r.Symptoms) == 0 {
			continue
		}
		var ranked []rankedCandidate
		for order, c := range res.Rules {
			weight, rank := sharedSymptoms(r, c, explainers)
			if c == r || weight == 0 || causes.Leads(r.Name, c.Name) {
				continue
			}
			rc := rankedCandidate{Candidate: Candidate{Rule: c.Name, Decide: c.Decide}, weight: weight, rank: rank,
				order: order, leads: causes.Leads(c.Name, r.Name)}
			node := f.Subject["node"]
			if j, ok := bestFinding(res.Findings, byRule[c.Name], f); ok {
				g := res.Findings[j]
				rc.Standing, rc.firmness = CandidateFound, firmness(g)
				rc.Why = fmt.Sprintf("its own finding%s (%s, cause %s): %s", onNode(g.Subject["node"]), g.Severity, g.Certainty, g.Title)
				if g.Certainty != Proven && g.Decide != "" {
					rc.Decide = g.Decide
				}
			} else if s, ok := skipped[c.Name]; ok {
				rc.Standing = CandidateOpen
				rc.Why = "not run: the bundle has " + missingText(s.Missing, s.AnyOf) + ", so it cannot be ruled out"
			} else if miss, anyOf := missingOn(snap, c, node); len(miss) > 0 || len(anyOf) > 0 {
				rc.Standing = CandidateOpen
				rc.Why = "the bundle has " + missingText(miss, anyOf) + onNode(node) + ", so it cannot be ruled out there"
			} else {
				rc.Standing = CandidateWeakened
				read := "it ran"
				if ks := readKinds(snap, c, node); len(ks) > 0 {
					read = "its evidence (" + kindsText(ks) + ") was read"
				}
				rc.Why = read + onNode(node) + " and shows no sign of it: weakened, not ruled out"
			}
			ranked = append(ranked, rc)
		}
		if len(ranked) == 0 {
			continue
		}
		slices.SortStableFunc(ranked, compareCandidates)
		f.Candidates = make([]Candidate, len(ranked))
		for j, rc := range ranked {
			f.Candidates[j] = rc.Candidate
		}
		cohere(f, res.Findings, byRule)
	}
}

// rankedCandidate is a Candidate with what orders it.
type rankedCandidate struct {
	Candidate
	firmness int     // of its finding, when found: higher first
	leads    bool    // its rule is known to lead to the finding's
	weight   float64 // the symptoms shared, each weighing 1/(the rules that explain it)
	rank     int     // its best rank under them
	order    int     // its place in the rules
}

var standingOrder = map[Standing]int{CandidateFound: 0, CandidateOpen: 1, CandidateWeakened: 2}

func compareCandidates(a, b rankedCandidate) int {
	if c := cmp.Compare(standingOrder[a.Standing], standingOrder[b.Standing]); c != 0 {
		return c
	}
	if c := cmp.Compare(b.firmness, a.firmness); c != 0 {
		return c
	}
	if a.leads != b.leads {
		if a.leads {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(b.weight, a.weight); c != 0 {
		return c
	}
	if c := cmp.Compare(a.rank, b.rank); c != 0 {
		return c
	}
	return cmp.Compare(a.order, b.order)
}

// cohere keeps f's Alternatives and Decide in line with its Candidates:
// the causes the evidence found come first among the alternatives, and
// the command that decides the first candidate (which tells it from the
// next) is the Decide when that candidate is found or the rule gave none.
func cohere(f *Finding, all []Finding, byRule map[string][]int) {
	var found []string
	for _, c := range f.Candidates {
		if c.Standing != CandidateFound {
			break
		}
		j, _ := bestFinding(all, byRule[c.Rule], f)
		alt := all[j].Title + " (" + c.Rule + ")"
		if !slices.Contains(f.Alternatives, alt) {
			found = append(found, alt)
		}
	}
	if len(found) > 0 {
		f.Alternatives = append(found, f.Alternatives...)
	}
	if top := f.Candidates[0]; top.Decide != "" && (top.Standing == CandidateFound || f.Decide == "") {
		f.Decide = top.Decide
	}
}

// sharedSymptoms weighs the symptoms of r that c names too: each weighs
// 1/n, n the rules that explain it (explainers), so that a symptom few
// rules explain says more than one most do. It returns c's best (lowest)
// rank under them too; 0, 0 when they share none.
func sharedSymptoms(r, c *Rule, explainers map[*Symptom]int) (weight float64, rank int) {
	shared := false
	for _, s := range r.Symptoms {
		for _, o := range c.Symptoms {
			if o.Symptom == s.Symptom && s.Symptom != nil {
				if !shared || o.Rank < rank {
					rank = o.Rank
				}
				shared = true
				weight += 1 / float64(max(explainers[s.Symptom], 1))
			}
		}
	}
	return weight, rank
}

// bestFinding returns, among the findings at idx at warning or above (an
// info finding is normal behaviour, no sign of a cause), the firmest on
// the same node as f (either without one counts as the same) or sharing a value of
// its subject other than the node.
func bestFinding(all []Finding, idx []int, f *Finding) (int, bool) {
	best := -1
	for _, j := range idx {
		g := &all[j]
		if g == f || g.Severity < Warning || !sameScope(f, g) {
			continue
		}
		if best < 0 || firmness(*g) > firmness(all[best]) {
			best = j
		}
	}
	return best, best >= 0
}

func sameScope(f, g *Finding) bool {
	a, b := f.Subject["node"], g.Subject["node"]
	if a == b || a == "" || b == "" {
		return true
	}
	for k, v := range f.Subject {
		if k != "node" && v != "" && slices.Contains(mapValues(g.Subject), v) {
			return true
		}
	}
	return false
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		if k != "node" {
			out = append(out, v)
		}
	}
	return out
}

// firmness orders findings: by certainty, then severity.
func firmness(f Finding) int {
	c := map[Certainty]int{Proven: 3, Likely: 2, Unknown: 1}[f.Certainty]
	return c*10 + int(f.Severity)
}

// missingOn returns the kinds c reads that the bundle lacks for node (an
// input of no node counts for every node): its Needs and Uses absent, and
// its NeedsAny when none is there. node "" looks at the whole bundle.
func missingOn(snap *model.Snapshot, c *Rule, node string) (miss, anyOf []model.Kind) {
	for _, k := range slices.Concat(c.Needs, c.Uses) {
		if !hasOn(snap, k, node) && !slices.Contains(miss, k) {
			miss = append(miss, k)
		}
	}
	if len(c.NeedsAny) > 0 && !slices.ContainsFunc(c.NeedsAny, func(k model.Kind) bool { return hasOn(snap, k, node) }) {
		anyOf = c.NeedsAny
	}
	return miss, anyOf
}

// readKinds returns the kinds of c's Needs, NeedsAny and Uses the bundle
// has for node.
func readKinds(snap *model.Snapshot, c *Rule, node string) []model.Kind {
	var out []model.Kind
	for _, k := range slices.Concat(c.Needs, c.NeedsAny, c.Uses) {
		if !slices.Contains(out, k) && hasOn(snap, k, node) {
			out = append(out, k)
		}
	}
	return out
}

func hasOn(snap *model.Snapshot, k model.Kind, node string) bool {
	for _, in := range snap.Inputs {
		if in.Kind == k && in.Skipped == "" && (node == "" || in.Node == "" || in.Node == node) {
			return true
		}
	}
	return false
}

// missingText says what is missing: "no sysctl", "no netfilter and none
// of capture, logs".
func missingText(miss, anyOf []model.Kind) string {
	var parts []string
	if len(miss) > 0 {
		parts = append(parts, "no "+kindsText(miss))
	}
	if len(anyOf) > 0 {
		parts = append(parts, "none of "+kindsText(anyOf))
	}
	return strings.Join(parts, " and ")
}

func kindsText(ks []model.Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func onNode(node string) string {
	if node == "" {
		return ""
	}
	return " on " + node
}

func ruleOf(rules []*Rule, name string) *Rule {
	for _, r := range rules {
		if r.Name == name {
			return r
		}
	}
	return nil
}
