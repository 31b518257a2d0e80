package collect

import (
	"cmp"
	"slices"

	"github.com/netmortem/netmortem/analyzer"
)

// Symptom is what someone sees go wrong, with the rules that can explain
// it: docs/collect.md lists, for each, the evidence those rules read and
// the commands that give it.
type Symptom struct {
	*analyzer.Symptom
	// Rules are the rules that can explain it, by their rank under it.
	Rules []*analyzer.Rule
}

// Symptoms are the symptoms docs/collect.md is organized by, derived from
// rules (each rule's Symptoms), by their rank; under each, the rules that
// name it, by their rank under it, then in the order of rules.
func Symptoms(rules []*analyzer.Rule) []Symptom {
	type ranked struct {
		rule *analyzer.Rule
		rank int
	}
	var order []*analyzer.Symptom
	by := map[*analyzer.Symptom][]ranked{}
	for _, r := range rules {
		if r == nil {
			continue
		}
		for _, s := range r.Symptoms {
			if s.Symptom == nil {
				continue
			}
			if _, ok := by[s.Symptom]; !ok {
				order = append(order, s.Symptom)
			}
			by[s.Symptom] = append(by[s.Symptom], ranked{r, s.Rank})
		}
	}
	slices.SortStableFunc(order, func(a, b *analyzer.Symptom) int { return cmp.Compare(a.Rank, b.Rank) })
	out := make([]Symptom, 0, len(order))
	for _, s := range order {
		rs := by[s]
		slices.SortStableFunc(rs, func(a, b ranked) int { return cmp.Compare(a.rank, b.rank) })
		sym := Symptom{Symptom: s}
		for _, r := range rs {
			sym.Rules = append(sym.Rules, r.rule)
		}
		out = append(out, sym)
	}
	return out
}
