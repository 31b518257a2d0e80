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
