package facts_test

import (
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// The default NodePort range stands for the bundle's own only when no
// input that could give the flag was cut: a cut archive, or a cut
// manifest, makes it a lost value; a cut capture does not.
func TestNodePortRangeLost(t *testing.T) {
	capture := model.Input{Path: "b/capture.pcap", Kind: model.KindCapture, Format: "pcap"}
	manifest := model.Input{Path: "b/kube-apiserver.yaml", Kind: model.KindComponents, Format: "kubectl-yaml"}
	for _, c := range []struct {
		name   string
		inputs []model.Input
		cuts   []model.Cut
		lost   bool
	}{
		{"whole", []model.Input{capture}, nil, false},
		{"capture cut", []model.Input{capture}, []model.Cut{{File: "b/capture.pcap", Where: "cut after frame 9"}}, false},
		{"manifest cut", []model.Input{capture, manifest}, []model.Cut{{File: "b/kube-apiserver.yaml", Where: "x"}}, true},
		{"archive cut", []model.Input{capture}, []model.Cut{{File: "b.tar.gz", Where: "archive ends after member b/capture.pcap"}}, true},
	} {
		snap := &model.Snapshot{Inputs: c.inputs, Cuts: c.cuts}
		np := facts.NodePortRange.Get(analyzer.NewFactSet(snap))
		if np.Range != facts.DefaultNodePortRange || (np.LostReason() != "") != c.lost {
			t.Errorf("%s: %+v, want lost %v", c.name, np, c.lost)
		}
		if c.lost && !strings.Contains(np.LostReason(), c.cuts[0].String()) {
			t.Errorf("%s: %q does not name the cut", c.name, np.LostReason())
		}
	}
}

// An unanswered SYN that a cut capture ends less than a second after (its
// retransmission not yet due) is not counted as unanswered; the same
// capture whole counts it. Read on the real sweep capture, cut after its
// last frame.
func TestNotYetDue(t *testing.T) {
	whole := open(t, "fixtures/captures/sweep.pcap")
	s := whole.Snapshot()
	if len(s.Captures) != 1 {
		t.Fatalf("%d captures", len(s.Captures))
	}
	last := s.Captures[0].Last
	late := 0
	for _, a := range s.Attempts {
		if a.Outcome == model.OutcomeUnanswered && last.Sub(a.Start) < facts.ReplyDue {
			late++
		}
	}
	count := func(fs *analyzer.FactSet) (n int) {
		for _, g := range facts.FailedAttempts.Get(fs).Of(model.OutcomeUnanswered) {
			n += g.N
		}
		return n
	}
	all := count(whole)
	cut := *s
	cut.Cuts = []model.Cut{{File: s.Captures[0].File, Where: "cut after frame 99"}}
	if got := count(analyzer.NewFactSet(&cut)); late == 0 || got != all-late {
		t.Errorf("cut: %d unanswered attempts, want %d of %d (%d late)", got, all-late, all, late)
	}
	for _, a := range s.Attempts {
		if a.Outcome != model.OutcomeUnanswered {
			continue
		}
		if got, want := facts.NotYetDue(&cut, a.Pos.File, a.Start), last.Sub(a.Start) < facts.ReplyDue; got != want {
			t.Errorf("%s at %s: not yet due %v, want %v", a.Pos, a.Start, got, want)
		}
		if facts.NotYetDue(s, a.Pos.File, a.Start) {
			t.Errorf("%s: not yet due in the whole capture", a.Pos)
		}
	}
}
