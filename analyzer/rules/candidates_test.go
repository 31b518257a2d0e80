package rules

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/parse"
)

// The candidates of an unanswered SYN follow the evidence of real-kernel
// captures: strict rp_filter shown (its own finding, first), the filter
// loose (read and found nothing: weakened, after every open one), and no
// routes or sysctl in the bundle (open, and first of those, since it is
// known to lead to unanswered SYNs).
func TestSynUnansweredCandidates(t *testing.T) {
	for _, c := range []struct {
		bundle   string
		standing analyzer.Standing
		first    bool
	}{
		{"rp-filter-drop", analyzer.CandidateFound, true},
		{"rp-filter-drop-loose", analyzer.CandidateWeakened, false},
		{"nat-hairpin-nomasq", analyzer.CandidateOpen, true},
	} {
		t.Run(c.bundle, func(t *testing.T) {
			ctx := context.Background()
			snap, _, err := parse.Open(ctx, filepath.Join("..", "..", "fixtures", "incidents", c.bundle), nil)
			if err != nil {
				t.Fatal(err)
			}
			res := analyzer.Run(ctx, snap, All(), nil)
			seen := 0
			for _, f := range res.Findings {
				if f.Rule != SynUnanswered.Name || f.Certainty != analyzer.Unknown {
					continue
				}
				seen++
				at := -1
				for i, cd := range f.Candidates {
					if cd.Rule == RPFilterDrop.Name {
						at = i
						if cd.Standing != c.standing {
							t.Errorf("%s: rp-filter-drop %s (%s), want %s", f.Title, cd.Standing, cd.Why, c.standing)
						}
						if cd.Decide == "" {
							t.Errorf("%s: rp-filter-drop has no command that decides it", f.Title)
						}
					}
					if i > 0 && standingRank(cd.Standing) < standingRank(f.Candidates[i-1].Standing) {
						t.Errorf("%s: %s %s after %s %s", f.Title, cd.Standing, cd.Rule, f.Candidates[i-1].Standing, f.Candidates[i-1].Rule)
					}
				}
				switch {
				case at < 0:
					t.Errorf("%s: rp-filter-drop is no candidate", f.Title)
				case c.first && at != 0:
					t.Errorf("%s: rp-filter-drop is candidate %d, want the first", f.Title, at+1)
				case !c.first && f.Candidates[len(f.Candidates)-1].Standing != analyzer.CandidateWeakened:
					t.Errorf("%s: the last candidate is not weakened", f.Title)
				}
				if c.standing == analyzer.CandidateFound && f.Decide != f.Candidates[0].Decide {
					t.Errorf("%s: decide %q, not that of the candidate found, %q", f.Title, f.Decide, f.Candidates[0].Decide)
				}
			}
			if seen == 0 {
				t.Fatal("no syn-unanswered finding of unknown cause")
			}
		})
	}
}

func standingRank(s analyzer.Standing) int {
	return map[analyzer.Standing]int{analyzer.CandidateFound: 0, analyzer.CandidateOpen: 1, analyzer.CandidateWeakened: 2}[s]
}
