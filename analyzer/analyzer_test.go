package analyzer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
)

func TestValidateRejects(t *testing.T) {
	run := func(*Pass) error { return nil }
	tests := []struct {
		rule *Rule
		want string
	}{
		{&Rule{Name: "Bad_Name", Doc: "x\n\ny", Severity: Info, Run: run}, "not kebab-case"},
		{&Rule{Name: "a", Doc: "", Severity: Info, Run: run}, "empty Doc"},
		{&Rule{Name: "a", Doc: "Title\n\ny", Severity: Info, Run: run}, "not lower case"},
		{&Rule{Name: "a", Doc: "title.\n\ny", Severity: Info, Run: run}, "ends with a period"},
		{&Rule{Name: "a", Doc: "title", Severity: Info, Run: run}, "no explanation"},
		{&Rule{Name: "a", Doc: "title\n\ny", Run: run}, "invalid severity"},
		{&Rule{Name: "a", Doc: "title\n\ny", Severity: Info}, "Run is nil"},
	}
	for _, tt := range tests {
		err := Validate([]*Rule{tt.rule})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%q) = %v, want error containing %q", tt.rule.Name, err, tt.want)
		}
	}
	ok := &Rule{Name: "a", Doc: "title\n\ny", Severity: Info, Run: run}
	if err := Validate([]*Rule{ok, ok}); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate names: got %v", err)
	}
}

func TestSeverityText(t *testing.T) {
	for _, s := range []Severity{Info, Warning, Error} {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Severity
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("round trip of %v: got %v, %v", s, back, err)
		}
	}
	if _, err := ParseSeverity("fatal"); err == nil {
		t.Error("ParseSeverity(fatal) succeeded")
	}
}

func snapWith(kinds ...model.Kind) *model.Snapshot {
	s := &model.Snapshot{}
	for _, k := range kinds {
		s.Inputs = append(s.Inputs, model.Input{Path: string(k), Kind: k})
	}
	return s
}

func TestRunSkipsErrorsAndCaps(t *testing.T) {
	// Each kind's evidence is a line of the input of that kind.
	report := func(sev Severity, kinds ...model.Kind) func(*Pass) error {
		return func(p *Pass) error {
			ev := []Evidence{{Pos: model.Pos{File: p.Rule.Name, Line: 1}}}
			for _, k := range kinds {
				ev = append(ev, Evidence{Pos: model.Pos{File: string(k), Line: 1}})
			}
			p.Report(Finding{Title: p.Rule.Name, Severity: sev, Evidence: ev})
			return nil
		}
	}
	rules := []*Rule{
		{Name: "needs-ipvs", Doc: "t\n\nx", Severity: Error, Needs: []model.Kind{model.KindIPVS}, Run: report(Error)},
		{Name: "one-source", Doc: "t\n\nx", Severity: Error, Run: report(Error, model.KindSysctl)},
		{Name: "two-sources", Doc: "t\n\nx", Severity: Error, Run: report(Error, model.KindSysctl, model.KindKube)},
		{Name: "fails", Doc: "t\n\nx", Severity: Info, Run: func(*Pass) error { return errors.New("boom") }},
		{Name: "panics", Doc: "t\n\nx", Severity: Info, Run: func(*Pass) error { panic("oops") }},
		{Name: "disabled", Doc: "t\n\nx", Severity: Info, Run: report(Info)},
		{Name: "overridden", Doc: "t\n\nx", Severity: Info, Run: report(Info)},
	}
	cfg := &Config{Rules: map[string]RuleConfig{"overridden": {Severity: Error}}}
	cfg.Disable("disabled")
	res := Run(context.Background(), snapWith(model.KindSysctl, model.KindKube), rules, cfg)

	if len(res.Skipped) != 1 || res.Skipped[0].Rule != "needs-ipvs" || res.Skipped[0].Missing[0] != model.KindIPVS {
		t.Errorf("Skipped = %+v, want needs-ipvs missing ipvs", res.Skipped)
	}
	if len(res.Errors) != 2 || res.Errors[0].Rule != "fails" || res.Errors[1].Rule != "panics" ||
		!strings.Contains(res.Errors[1].Err, "oops") {
		t.Errorf("Errors = %+v", res.Errors)
	}
	got := map[string]Severity{}
	for _, f := range res.Findings {
		got[f.Rule] = f.Severity
	}
	want := map[string]Severity{"one-source": Warning, "two-sources": Error, "overridden": Error}
	if len(got) != len(want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: severity %v, want %v", k, got[k], v)
		}
	}
	// Highest severity first, then by rule name.
	if res.Findings[0].Rule != "overridden" || res.Findings[1].Rule != "two-sources" || res.Findings[2].Rule != "one-source" {
		t.Errorf("order: %s, %s, %s", res.Findings[0].Rule, res.Findings[1].Rule, res.Findings[2].Rule)
	}
}

func TestLoadConfig(t *testing.T) {
	run := func(*Pass) error { return nil }
	known := []*Rule{{Name: "synack-reset", Run: run}, {Name: "ephemeral-nodeport-overlap", Run: run}}
	in := "rules:\n  synack-reset:\n    severity: warning\n  ephemeral-nodeport-overlap:\n    disabled: true\n"
	cfg, err := LoadConfig(strings.NewReader(in), "c.yaml", known)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Rules["synack-reset"].Severity != Warning || !cfg.Rules["ephemeral-nodeport-overlap"].Disabled {
		t.Errorf("config = %+v", cfg)
	}
	_, err = LoadConfig(strings.NewReader("rules:\n  no-such-rule: {}\n"), "c.yaml", known)
	if err == nil || err.Error() != `c.yaml:2: rules: unknown rule "no-such-rule" (netmortem rules lists them)` {
		t.Errorf("unknown rule: err = %v", err)
	}
	_, err = LoadConfig(strings.NewReader("rulez: {}\n"), "c.yaml", known)
	if err == nil || !strings.HasPrefix(err.Error(), "c.yaml:1: ") {
		t.Errorf("unknown field: err = %v", err)
	}
}

// A rule that needs any one of several kinds is skipped, naming them all,
// when none was read, and runs when one was.
func TestNeedsAny(t *testing.T) {
	r := &Rule{Name: "any", Doc: "t\n\nx", Severity: Info, Run: func(*Pass) error { return nil },
		NeedsAny: []model.Kind{model.KindKube, model.KindLogs, model.KindSettings}}
	res := Run(context.Background(), &model.Snapshot{}, []*Rule{r}, nil)
	if len(res.Skipped) != 1 || fmt.Sprint(res.Skipped[0].AnyOf) != "[kube logs settings]" || len(res.Skipped[0].Missing) != 0 {
		t.Errorf("skipped %+v", res.Skipped)
	}
	snap := &model.Snapshot{Inputs: []model.Input{{Path: "k8s-cluster.yml", Kind: model.KindSettings}}}
	if res := Run(context.Background(), snap, []*Rule{r}, nil); len(res.Skipped) != 0 {
		t.Errorf("skipped with settings read: %+v", res.Skipped)
	}
	for _, tt := range []struct {
		needs, anyOf []model.Kind
		want         string
	}{
		{nil, []model.Kind{model.KindKube, model.KindLogs, model.KindSettings}, "one of kube, logs, settings"},
		{[]model.Kind{model.KindNetfilter, model.KindKube}, nil, "netfilter, kube"},
		{[]model.Kind{model.KindCapture}, []model.Kind{model.KindKube, model.KindLogs}, "capture and one of kube, logs"},
		{nil, nil, "nothing"},
	} {
		if got := (&Rule{Needs: tt.needs, NeedsAny: tt.anyOf}).NeedsText(); got != tt.want {
			t.Errorf("NeedsText %q, want %q", got, tt.want)
		}
	}
}

// A symptom whose cause is not proven is linked to the proven finding of
// another rule that cites the same frame; a proven finding, or one that
// shares nothing, is not.
func TestRunExplainsSymptoms(t *testing.T) {
	frame := model.Pos{File: "c.pcap", Frame: 7}
	report := func(c Certainty, ev ...model.Pos) func(*Pass) error {
		return func(p *Pass) error {
			f := Finding{Title: p.Rule.Name + " title", Certainty: c}
			for _, pos := range ev {
				f.Evidence = append(f.Evidence, Evidence{Pos: pos})
			}
			p.Report(f)
			return nil
		}
	}
	sysctl := model.Pos{File: string(model.KindSysctl), Line: 3}
	rules := []*Rule{
		{Name: "cause", Doc: "t\n\nx", Severity: Error, Run: report(Proven, frame, sysctl)},
		{Name: "symptom", Doc: "t\n\nx", Severity: Warning, Run: report(Unknown, frame)},
		{Name: "elsewhere", Doc: "t\n\nx", Severity: Warning, Run: report(Unknown, model.Pos{File: "c.pcap", Frame: 8})},
	}
	got := map[string]string{}
	for _, f := range Run(context.Background(), snapWith(model.KindSysctl), rules, nil).Findings {
		got[f.Rule] = f.ExplainedBy
	}
	want := map[string]string{"cause": "", "symptom": "cause: cause title", "elsewhere": ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("explained by %v, want %v", got, want)
	}
}
