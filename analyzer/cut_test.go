package analyzer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// lostRange is a fact value that stands for what a cut lost when why is
// set.
type lostRange struct{ why string }

func (l lostRange) LostReason() string { return l.why }

var lostFact = &analyzer.Fact[lostRange]{Name: "lost-range", Compute: func(fs *analyzer.FactSet) lostRange {
	if len(fs.Snapshot().Cuts) > 0 {
		return lostRange{"the default, the setting was cut off"}
	}
	return lostRange{}
}}

// A rule that reads a fact standing for what a cut lost gives at most an
// info finding, not proven, that says why; a finding citing a cut input
// keeps its severity and names the cut; on whole evidence nothing changes.
func TestFindingsOnCutEvidence(t *testing.T) {
	reads := &analyzer.Rule{Name: "reads-lost", Severity: analyzer.Error, Requires: []analyzer.FactKey{lostFact},
		Run: func(p *analyzer.Pass) error {
			lostFact.Of(p)
			p.Report(analyzer.Finding{Title: "t", Certainty: analyzer.Proven,
				Evidence: []analyzer.Evidence{{Pos: model.Pos{File: "sysctl.txt", Line: 1}, Kind: model.KindSysctl},
					{Pos: model.Pos{File: "services.json", Object: "Service ns/web"}, Kind: model.KindKube}}})
			return nil
		}}
	cites := &analyzer.Rule{Name: "cites-cut", Severity: analyzer.Warning,
		Run: func(p *analyzer.Pass) error {
			p.Report(analyzer.Finding{Title: "t", Evidence: []analyzer.Evidence{{Pos: model.Pos{File: "b.tar!capture.pcap", Frame: 3}}}})
			return nil
		}}
	whole := analyzer.Run(context.Background(), &model.Snapshot{}, []*analyzer.Rule{reads, cites}, nil)
	for _, f := range whole.Findings {
		if _, ok := f.Facts[analyzer.IncompleteFact]; ok {
			t.Errorf("whole evidence: %s says %v", f.Rule, f.Facts)
		}
	}
	if whole.Max() != analyzer.Error {
		t.Errorf("whole evidence: max %v", whole.Max())
	}
	cut := analyzer.Run(context.Background(), &model.Snapshot{Cuts: []model.Cut{{File: "b.tar", Where: "archive ends after member x"}}},
		[]*analyzer.Rule{reads, cites}, nil)
	for _, f := range cut.Findings {
		note, _ := f.Facts[analyzer.IncompleteFact].(string)
		switch f.Rule {
		case "reads-lost":
			if f.Severity != analyzer.Info || f.Certainty == analyzer.Proven || !strings.Contains(note, "setting was cut off") {
				t.Errorf("reads-lost on cut evidence: %v %v %q", f.Severity, f.Certainty, note)
			}
		case "cites-cut":
			if f.Severity != analyzer.Warning || !strings.Contains(note, "b.tar: archive ends after member x") {
				t.Errorf("cites-cut on cut evidence: %v %q", f.Severity, note)
			}
		}
	}
}

// A rule that reads the lost fact with Partly caps only the findings it
// says rest on it (RestsOn): a collision between two Services stays an
// error while a port outside the defaulted range is at most info.
func TestOnlyFindingsRestingOnALostFactAreCapped(t *testing.T) {
	partly := &analyzer.Rule{Name: "reads-partly", Severity: analyzer.Error, Requires: []analyzer.FactKey{lostFact},
		Run: func(p *analyzer.Pass) error {
			lostFact.Partly(p)
			ev := []analyzer.Evidence{{Pos: model.Pos{File: "sysctl.txt", Line: 1}, Kind: model.KindSysctl},
				{Pos: model.Pos{File: "services.json", Object: "Service ns/web"}, Kind: model.KindKube}}
			p.Report(analyzer.Finding{Title: "collision", Certainty: analyzer.Proven, Evidence: ev})
			outside := analyzer.Finding{Title: "outside", Certainty: analyzer.Proven, Evidence: ev}
			lostFact.RestsOn(p, &outside)
			p.Report(outside)
			return nil
		}}
	for _, cuts := range [][]model.Cut{nil, {{File: "b.tar", Where: "archive ends after member x"}}} {
		res := analyzer.Run(context.Background(), &model.Snapshot{Cuts: cuts}, []*analyzer.Rule{partly}, nil)
		if len(res.Errors) > 0 || len(res.Findings) != 2 {
			t.Fatalf("cuts %v: %+v %+v", cuts, res.Errors, res.Findings)
		}
		for _, f := range res.Findings {
			note, capped := f.Facts[analyzer.IncompleteFact].(string)
			wantCapped := f.Title == "outside" && cuts != nil
			if capped != wantCapped || wantCapped != (f.Severity == analyzer.Info) || wantCapped == (f.Certainty == analyzer.Proven) {
				t.Errorf("cuts %v: %s: %v %v %q", cuts, f.Title, f.Severity, f.Certainty, note)
			}
			if wantCapped && !strings.Contains(note, "lost-range: the default, the setting was cut off") {
				t.Errorf("%s: note %q", f.Title, note)
			}
		}
	}
}
