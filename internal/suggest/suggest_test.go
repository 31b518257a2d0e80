package suggest

import (
	"slices"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
)

func TestClosest(t *testing.T) {
	names := []string{"synack-reset", "stale-dnat", "syn-unanswered", "ephemeral-nodeport-overlap", "snat-port-exhaustion"}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"synack-rest", []string{"synack-reset"}},
		{"synack-reset", []string{"synack-reset"}},
		{"stale-dnta", []string{"stale-dnat"}},
		{"STALE-DNAT", []string{"stale-dnat"}},
		{"ephemeral", []string{"ephemeral-nodeport-overlap"}}, // a prefix
		{"syn", []string{"synack-reset", "syn-unanswered"}},   // prefixes, none close enough
		{"dns", nil},
		{"stale-dnatwxyz", nil}, // 4 edits: one more than the most allowed
		{"snat-port-exhaustio", []string{"snat-port-exhaustion"}},
		{"", nil},
		{"x", nil},
	} {
		if got := Closest(c.name, names); !slices.Equal(got, c.want) {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"synack-rest", "synack-reset", 1}, {"héllo", "hello", 1}, {"ab", "ba", 2}} {
		if got := levenshtein(c.a, c.b); got != c.d {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

func TestUnknownRule(t *testing.T) {
	rs := []*analyzer.Rule{{Name: "stale-dnat"}, {Name: "stale-snat"}, {Name: "synack-reset"}}
	for name, want := range map[string]string{
		"synack-rest": `unknown rule "synack-rest" (see netmortem rules); did you mean "synack-reset"?`,
		"stale-xnat":  `unknown rule "stale-xnat" (see netmortem rules); did you mean "stale-dnat" or "stale-snat"?`,
		"zzzzzzzzzz":  `unknown rule "zzzzzzzzzz" (see netmortem rules)`,
	} {
		if got := UnknownRule(name, rs).Error(); got != want {
			t.Errorf("UnknownRule(%q) = %q, want %q", name, got, want)
		}
	}
}
