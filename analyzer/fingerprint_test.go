package analyzer

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
)

// The fingerprint depends on the rule and the Subject only, not on the
// order the Subject's keys were set in, and is 16 hex digits.
func TestFingerprint(t *testing.T) {
	a := Fingerprint("stale-dnat", map[string]string{"node": "node1", "object": "Service default/web"})
	b := Fingerprint("stale-dnat", map[string]string{"object": "Service default/web", "node": "node1"})
	if a != b {
		t.Errorf("key order changes the fingerprint: %s, %s", a, b)
	}
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(a) {
		t.Errorf("fingerprint %q is not 16 hex digits", a)
	}
	// The stability promise: the computation is pinned, so that a change
	// to it, which would change every fingerprint, cannot go unnoticed.
	if a != "c58fbec1f9e60423" {
		t.Errorf("the fingerprint of stale-dnat {node1, Service default/web} is %s, was c58fbec1f9e60423", a)
	}
	for _, other := range []string{
		Fingerprint("synack-reset", map[string]string{"node": "node1", "object": "Service default/web"}),
		Fingerprint("stale-dnat", map[string]string{"node": "node2", "object": "Service default/web"}),
		Fingerprint("stale-dnat", map[string]string{"node": "node1"}),
		// Keys and values are length-prefixed: no two subjects run together.
		Fingerprint("stale-dnat", map[string]string{"node": "node1object", "": "Service default/web"}),
	} {
		if other == a {
			t.Errorf("two subjects share the fingerprint %s", a)
		}
	}
}

// Run sets each finding's fingerprint; findings without a Subject get one
// from their title; two findings with one Subject get a suffix, in the
// order Sort gives.
func TestRunFingerprints(t *testing.T) {
	r := &Rule{Name: "twice", Doc: "t\n\nx", Severity: Warning, Run: func(p *Pass) error {
		p.Report(Finding{Title: "b", Subject: map[string]string{"node": "n1"}, Evidence: []Evidence{{Pos: model.Pos{File: "f", Line: 2}}}})
		p.Report(Finding{Title: "a", Subject: map[string]string{"node": "n1"}, Evidence: []Evidence{{Pos: model.Pos{File: "f", Line: 1}}}})
		p.Report(Finding{Title: "no subject 3 times"})
		return nil
	}}
	res := Run(context.Background(), &model.Snapshot{}, []*Rule{r}, nil)
	if len(res.Findings) != 3 {
		t.Fatalf("%d findings", len(res.Findings))
	}
	fp := Fingerprint("twice", map[string]string{"node": "n1"})
	got := map[string]string{}
	for _, f := range res.Findings {
		got[f.Title] = f.Fingerprint
	}
	if got["a"] != fp || got["b"] != fp+"-2" {
		t.Errorf("fingerprints a=%s b=%s, want %s and %s-2", got["a"], got["b"], fp, fp)
	}
	nf := got["no subject 3 times"]
	if nf == "" || strings.Contains(nf, "-") || nf == Fingerprint("twice", nil) {
		t.Errorf("fallback fingerprint %q", nf)
	}
	// Deterministic: the same run, the same fingerprints.
	again := Run(context.Background(), &model.Snapshot{}, []*Rule{r}, nil)
	for i := range again.Findings {
		if again.Findings[i].Fingerprint != res.Findings[i].Fingerprint {
			t.Errorf("run 2 finding %d: %s, run 1 %s", i, again.Findings[i].Fingerprint, res.Findings[i].Fingerprint)
		}
	}
}

// A rule reading a parameter it does not declare fails; a declared one
// reads the configured value or its default.
func TestParamDeclared(t *testing.T) {
	var got float64
	r := &Rule{Name: "p", Doc: "t\n\nx", Severity: Info,
		Params: []Param{{Name: "min", Type: Integer, Default: 3, Range: AtLeast(0), Doc: "d"}},
		Run: func(p *Pass) error {
			got = p.Param("min", 3)
			p.Param("undeclared", 1)
			return nil
		}}
	res := Run(context.Background(), &model.Snapshot{}, []*Rule{r}, &Config{Rules: map[string]RuleConfig{"p": {Params: map[string]float64{"min": 7}}}})
	if got != 7 {
		t.Errorf("min = %v, want 7 from the config", got)
	}
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Err, `reads parameter "undeclared", which its Params do not declare`) {
		t.Errorf("errors %+v", res.Errors)
	}
}

func TestValidateParams(t *testing.T) {
	run := func(*Pass) error { return nil }
	for _, tc := range []struct {
		p    Param
		want string
	}{
		{Param{Name: "MinX", Type: Integer, Default: 1, Range: AtLeast(1), Doc: "d"}, "not snake_case"},
		{Param{Name: "x", Type: "int", Default: 1, Range: AtLeast(1), Doc: "d"}, `has type "int"`},
		{Param{Name: "x", Type: Integer, Default: 1.5, Range: AtLeast(1), Doc: "d"}, "default 1.5 is not an integer >= 1"},
		{Param{Name: "x", Type: Number, Default: 1, Range: AtLeast(1)}, "has no Doc"},
		{Param{Name: "x", Type: Number, Default: 1, Doc: "d"}, "declares no Range"},
		{Param{Name: "x", Type: Number, Default: 1, Range: Between(0, 1), Doc: "d"}, "default 1 is not a number > 0 and < 1"},
		{Param{Name: "x", Type: Integer, Default: 0, Range: AtLeast(1), Doc: "d"}, "default 0 is not an integer >= 1"},
		{Param{Name: "x", Type: Number, Default: 1, Range: Between(2, 2), Doc: "d"}, "the range > 2 and < 2 is empty"},
	} {
		err := Validate([]*Rule{{Name: "r", Doc: "t\n\nx", Severity: Info, Run: run, Params: []Param{tc.p}}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.p, err, tc.want)
		}
	}
	two := []Param{{Name: "x", Type: Number, Default: 1, Range: AtLeast(0), Doc: "d"}, {Name: "x", Type: Number, Default: 1, Range: AtLeast(0), Doc: "d"}}
	if err := Validate([]*Rule{{Name: "r", Doc: "t\n\nx", Severity: Info, Run: run, Params: two}}); err == nil || !strings.Contains(err.Error(), "declared twice") {
		t.Errorf("twice: %v", err)
	}
	for keys, want := range map[string]string{"Node": "not lower-case snake_case", "node,node": `subject key "node" listed twice`} {
		err := Validate([]*Rule{{Name: "r", Doc: "t\n\nx", Severity: Info, Run: run, SubjectKeys: strings.Split(keys, ",")}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SubjectKeys %s: err = %v, want %q", keys, err, want)
		}
	}
	ok := []Param{{Name: "min_attempts", Type: Integer, Default: 1, Range: AtLeast(1), Doc: "d"}, {Name: "alpha", Type: Number, Default: 0.001, Range: Between(0, 1), Doc: "d"}}
	if err := Validate([]*Rule{{Name: "r", Doc: "t\n\nx", Severity: Info, Run: run, Params: ok}}); err != nil {
		t.Errorf("valid params: %v", err)
	}
}
