package analyzer

import (
	"context"
	"fmt"
	"testing"

	"github.com/netmortem/netmortem/model"
)

// The kind of a position is that of the input its file was read as; in a
// terminal session, that of the command whose output holds the line.
func TestKindsOf(t *testing.T) {
	snap := &model.Snapshot{Inputs: []model.Input{
		{Path: "b/sysctl.txt", Kind: model.KindSysctl},
		{Path: "b/node1.pcap", Kind: model.KindCapture},
		{Path: "b/skipped.txt", Kind: model.KindLogs, Skipped: "too large"},
		{Path: "b/session.txt", Kind: model.KindSession},
		{Path: "b/session.txt:1", Kind: model.KindNetfilter},
		{Path: "b/session.txt:40", Kind: model.KindKube},
		{Path: "b/session.txt:12", Kind: model.KindSockets},
	}}
	k := NewKinds(snap)
	for _, tt := range []struct {
		pos  model.Pos
		want model.Kind
	}{
		{model.Pos{File: "b/sysctl.txt", Line: 3}, model.KindSysctl},
		{model.Pos{File: "b/node1.pcap", Frame: 9}, model.KindCapture},
		{model.Pos{File: "b/session.txt", Line: 1}, model.KindNetfilter},
		{model.Pos{File: "b/session.txt", Line: 11}, model.KindNetfilter},
		{model.Pos{File: "b/session.txt", Line: 12}, model.KindSockets},
		{model.Pos{File: "b/session.txt", Line: 39}, model.KindSockets},
		{model.Pos{File: "b/session.txt", Line: 90}, model.KindKube},
		{model.Pos{File: "b/session.txt"}, ""}, // the session as a whole is of no one kind
		{model.Pos{File: "b/skipped.txt", Line: 1}, ""},
		{model.Pos{File: "other.pcap", Frame: 2}, model.KindCapture},
		{model.Pos{Object: "Service default/web"}, model.KindKube},
		{model.Pos{File: "notes.txt", Line: 2}, ""},
	} {
		if got := k.Of(tt.pos); got != tt.want {
			t.Errorf("Of(%v) = %q, want %q", tt.pos, got, tt.want)
		}
	}
	if got := (*Kinds)(nil).Of(model.Pos{File: "x.pcap", Frame: 1}); got != model.KindCapture {
		t.Errorf("nil Kinds: Of(frame) = %q", got)
	}
}

// Run derives a finding's Sources from its evidence: what the rule set is
// replaced, a kind the rule gives a piece of evidence is kept, and a
// Proven finding whose evidence is of one kind is Likely, a warning.
func TestRunDerivesSources(t *testing.T) {
	snap := snapWith(model.KindSysctl, model.KindKube)
	var joins []bool
	rule := &Rule{Name: "r", Doc: "t\n\nx", Severity: Error, Run: func(p *Pass) error {
		one := []Evidence{{Pos: model.Pos{File: "sysctl", Line: 1}}}
		two := append(one, Evidence{Pos: model.Pos{File: "manifest.yaml", Line: 9}, Kind: model.KindComponents})
		joins = append(joins, p.Joins(one), p.Joins(two))
		p.Report(Finding{Title: "claimed", Certainty: Proven, Subject: map[string]string{"n": "1"},
			Sources: []model.Kind{model.KindSysctl, model.KindCapture}, Evidence: one})
		p.Report(Finding{Title: "joined", Certainty: Proven, Subject: map[string]string{"n": "2"}, Evidence: two})
		return nil
	}}
	got := map[string]string{}
	for _, f := range Run(context.Background(), snap, []*Rule{rule}, nil).Findings {
		got[f.Title] = fmt.Sprintf("%v %s %s", f.Sources, f.Certainty, f.Severity)
	}
	want := map[string]string{"claimed": "[sysctl] likely warning", "joined": "[components sysctl] proven error"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	if fmt.Sprint(joins) != "[false true]" {
		t.Errorf("Pass.Joins = %v, want [false true]", joins)
	}
}
