package analyzer

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
)

func infoRule(name string) *Rule {
	return &Rule{Name: name, Doc: "title\n\ny", Severity: Info, Run: func(*Pass) error { return nil }}
}

func TestValidateInfoRejects(t *testing.T) {
	other := infoRule("other")
	sym := &Symptom{Name: "s", Doc: "d"}
	tests := []struct {
		name string
		edit func(r *Rule)
		want string
	}{
		{"nil edge", func(r *Rule) { r.Explains = []*Rule{nil} }, "Explains[0] is nil"},
		{"self edge", func(r *Rule) { r.FollowsFrom = []*Rule{r} }, "names the rule itself"},
		{"twice", func(r *Rule) { r.Explains = []*Rule{other, other} }, `names "other" twice`},
		{"nil symptom", func(r *Rule) { r.Symptoms = []SymptomRef{{}} }, "Symptoms[0] is nil"},
		{"symptom without doc", func(r *Rule) { r.Symptoms = []SymptomRef{(&Symptom{Name: "x"}).At(1)} }, "no name or no doc"},
		{"symptom twice", func(r *Rule) { r.Symptoms = []SymptomRef{sym.At(1), sym.At(2)} }, `names "s" twice`},
		{"unknown part", func(r *Rule) { r.Plot.Parts = []PlotPart{PlotCitedLogs + 1} }, "unknown part"},
		{"unknown ICMP", func(r *Rule) { r.Plot.ICMP = ICMPTooBig + 1 }, "unknown ICMP match"},
		{"empty selector", func(r *Rule) { r.Plot.Servers = []Selector{{}} }, "want one of Subject and Fact"},
		{"both selector", func(r *Rule) { r.Plot.StaleTargets = &Selector{Subject: "a", Fact: "b"} }, "want one of Subject and Fact"},
		{"undeclared subject key", func(r *Rule) {
			r.SubjectKeys = []string{"node"}
			r.Plot.ARPAddrs = []Selector{InSubject("address")}
		}, `subject key "address"`},
	}
	for _, tt := range tests {
		r := infoRule("a")
		tt.edit(r)
		err := Validate([]*Rule{r, other})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	a, b, c := infoRule("a"), infoRule("b"), infoRule("c")
	a.Explains = []*Rule{b}
	b.Explains = []*Rule{c}
	c.FollowsFrom = nil
	if err := Validate([]*Rule{a, b, c}); err != nil {
		t.Errorf("a chain: %v", err)
	}
	c.Explains = []*Rule{a}
	if err := Validate([]*Rule{a, b, c}); err == nil || !strings.Contains(err.Error(), "lead back to the rule") {
		t.Errorf("a cycle: %v", err)
	}
}

func TestCausality(t *testing.T) {
	root, mid, leaf, other, alone := infoRule("root"), infoRule("mid"), infoRule("leaf"), infoRule("other"), infoRule("alone")
	root.Explains = []*Rule{mid}
	leaf.FollowsFrom = []*Rule{mid} // stated on the later rule
	other.Explains = []*Rule{leaf}
	// mid did not run: the chain still goes through it, and leaf, named
	// by no rule that ran, is found from other.
	c := NewCausality([]*Rule{root, other, alone})
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"root", "mid", true}, {"root", "leaf", true}, {"mid", "leaf", true}, {"other", "leaf", true},
		{"leaf", "root", false}, {"root", "other", false}, {"other", "root", false}, {"root", "root", false},
		{"alone", "root", false},
	} {
		if got := c.Leads(tt.a, tt.b); got != tt.want {
			t.Errorf("Leads(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if !c.Linked("leaf", "root") || c.Linked("root", "root") || c.Linked("root", "other") {
		t.Error("Linked is not Leads either way, between two rules")
	}
	for name, want := range map[string]bool{"root": true, "leaf": true, "other": true, "alone": false, "unknown": false} {
		if got := c.Chained(name); got != want {
			t.Errorf("Chained(%s) = %v, want %v", name, got, want)
		}
	}
	var nilc *Causality
	if nilc.Leads("a", "b") || nilc.Chained("a") {
		t.Error("a nil Causality links rules")
	}
}

func TestPlotDraws(t *testing.T) {
	var p Plot
	if got := p.Draws(); !slices.Equal(got, []PlotPart{PlotAttempts, PlotICMP, PlotARP, PlotCitedLogs}) {
		t.Errorf("zero Plot draws %v", got)
	}
	p.Parts = []PlotPart{PlotRestarts}
	if got := p.Draws(); !slices.Equal(got, []PlotPart{PlotRestarts}) {
		t.Errorf("Plot draws %v, want its Parts", got)
	}
	if InSubject("a").String() != "subject.a" || InFacts("b").String() != "facts.b" {
		t.Error("Selector.String")
	}
}

// TestResultRules: Run returns the rules it was given, without the nil
// ones and those the configuration disables.
func TestResultRules(t *testing.T) {
	a, b := infoRule("a"), infoRule("b")
	res := Run(context.Background(), &model.Snapshot{}, []*Rule{a, nil, b}, &Config{Rules: map[string]RuleConfig{"b": {Disabled: true}}})
	if !slices.Equal(res.Rules, []*Rule{a}) {
		t.Errorf("Result.Rules = %v, want [a]", res.Rules)
	}
}
