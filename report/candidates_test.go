package report

import (
	"slices"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
)

// At most three candidates are shown, one line each, then how many more.
func TestCandidateLines(t *testing.T) {
	f := analyzer.Finding{}
	if l := candidateLines(f, plain, plain, decideLine); len(l) != 0 {
		t.Errorf("no candidates: %q", l)
	}
	for _, r := range []string{"a", "b", "c", "d", "e"} {
		f.Candidates = append(f.Candidates, analyzer.Candidate{Rule: r, Standing: analyzer.CandidateOpen, Why: "why " + r, Decide: "cmd " + r + " (note)"})
	}
	want := []string{
		"Candidate 1: a (open): why a; decide: cmd a  # note",
		"Candidate 2: b (open): why b; decide: cmd b  # note",
		"Candidate 3: c (open): why c; decide: cmd c  # note",
		"Candidates: 2 more (2 open; -o json lists them)",
	}
	if got := candidateLines(f, plain, plain, decideLine); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	f.Candidates = f.Candidates[:3]
	if got := candidateLines(f, plain, plain, decideLine); !slices.Equal(got, want[:3]) {
		t.Errorf("three: got %q", got)
	}
}
