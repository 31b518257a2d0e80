// Package suggest finds the names a mistyped one may have meant, for the
// "did you mean" of an unknown command or rule.
package suggest

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
)

// UnknownRule is the error for a rule name that none of rs has, with the
// names close to it ("synack-rest": did you mean "synack-reset"?).
func UnknownRule(name string, rs []*analyzer.Rule) error {
	var names []string
	for _, r := range rs {
		names = append(names, r.Name)
	}
	if s := Closest(name, names); len(s) > 0 {
		return fmt.Errorf("unknown rule %q (see netmortem rules); did you mean %s?", name, QuoteList(s))
	}
	return fmt.Errorf("unknown rule %q (see netmortem rules)", name)
}

// Closest returns the candidates nearest to name: those at the smallest
// edit distance, when it is small for name's length (a third of it, at
// least 1, at most 3), or else those name is a prefix of (3 runes or
// more). Names are compared without case.
func Closest(name string, candidates []string) []string {
	name = strings.ToLower(name)
	limit := min(max(len([]rune(name))/3, 1), 3)
	best, bestD := []string(nil), limit
	for _, c := range candidates {
		switch d := levenshtein(name, strings.ToLower(c)); {
		case d > limit:
		case d < bestD || best == nil:
			best, bestD = []string{c}, d
		case d == bestD:
			best = append(best, c)
		}
	}
	if best != nil || len([]rune(name)) < 3 {
		return best
	}
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), name) {
			best = append(best, c)
		}
	}
	return best
}

// QuoteList quotes names and joins them with "or".
func QuoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, " or ")
}

// levenshtein is the edit distance between a and b: the fewest rune
// insertions, deletions and substitutions that turn a into b.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
