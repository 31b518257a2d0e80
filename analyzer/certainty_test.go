package analyzer

import "testing"

func TestCertaintyRank(t *testing.T) {
	order := []Certainty{"", Unknown, Likely, Proven}
	for i, c := range order {
		if got := c.Rank(); got != i {
			t.Errorf("%q.Rank() = %d, want %d", c, got, i)
		}
	}
	if got := Certainty("sure").Rank(); got != 0 {
		t.Errorf(`"sure".Rank() = %d, want 0`, got)
	}
}
