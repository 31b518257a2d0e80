package diff

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
)

func diffFinding(rule string, sev analyzer.Severity, subj map[string]string, facts map[string]any) analyzer.Finding {
	return analyzer.Finding{Rule: rule, Severity: sev, Title: rule + " title", Subject: subj, Certainty: analyzer.Likely,
		Fingerprint: analyzer.Fingerprint(rule, subj), Facts: facts}
}

// Findings are matched by fingerprint: in NEW only they appeared, in OLD
// only they resolved, in both with another severity, certainty or facts
// they changed, else they are unchanged.
func TestDiffFindings(t *testing.T) {
	n1 := map[string]string{"node": "n1"}
	n2 := map[string]string{"node": "n2"}
	old := []analyzer.Finding{
		diffFinding("stale-dnat", analyzer.Warning, n1, map[string]any{"targets": 3, "ports": []uint16{1, 2}}),
		diffFinding("synack-reset", analyzer.Error, n1, map[string]any{"attempts": 12}),
		diffFinding("mtu-blackhole", analyzer.Warning, n1, nil),
		diffFinding("gone", analyzer.Info, n1, nil),
	}
	changedCertainty := diffFinding("mtu-blackhole", analyzer.Warning, n1, nil)
	changedCertainty.Certainty = analyzer.Unknown
	changedCertainty.Title = "worded otherwise" // the title alone is not a change
	newer := []analyzer.Finding{
		diffFinding("stale-dnat", analyzer.Error, n1, map[string]any{"targets": 3, "ports": []uint16{1, 2}, "failed": 4}),
		diffFinding("synack-reset", analyzer.Error, n1, map[string]any{"attempts": 5}),
		changedCertainty,
		diffFinding("synack-reset", analyzer.Warning, n2, map[string]any{"attempts": 1}),
	}
	d := Findings(old, newer)
	if len(d.Appeared) != 1 || d.Appeared[0].Rule != "synack-reset" || d.Appeared[0].Subject["node"] != "n2" {
		t.Errorf("appeared %+v", d.Appeared)
	}
	if len(d.Resolved) != 1 || d.Resolved[0].Rule != "gone" {
		t.Errorf("resolved %+v", d.Resolved)
	}
	if len(d.Unchanged) != 0 || len(d.Changed) != 3 {
		t.Fatalf("changed %+v, unchanged %+v", d.Changed, d.Unchanged)
	}
	want := map[string]string{
		"stale-dnat":    "severity warning -> error; facts.failed (none) -> 4",
		"synack-reset":  "facts.attempts 12 -> 5",
		"mtu-blackhole": "certainty likely -> unknown",
	}
	for _, c := range d.Changed {
		if got := ChangeText(c.Changes); got != want[c.Rule] {
			t.Errorf("%s: %q, want %q", c.Rule, got, want[c.Rule])
		}
	}
	if d := Findings(old, old); len(d.Unchanged) != len(old) || len(d.Changed)+len(d.Appeared)+len(d.Resolved) != 0 {
		t.Errorf("same findings: %+v", d)
	}
	// --fail-on: the appeared findings at or above the level, and the
	// changed ones that got worse (stale-dnat: its severity rose) and are
	// at or above it in NEW; not synack-reset, whose facts alone changed,
	// nor mtu-blackhole, whose certainty weakened.
	for _, tc := range []struct {
		level analyzer.Severity
		n     int
	}{{analyzer.Info, 2}, {analyzer.Warning, 2}, {analyzer.Error, 1}, {analyzer.Error + 1, 0}} {
		if got := Failing(d, tc.level); got != tc.n {
			t.Errorf("fail-on %v: %d, want %d", tc.level, got, tc.n)
		}
	}
	resolvedOnly := Findings(old[3:], nil)
	if Failing(resolvedOnly, analyzer.Info) != 0 {
		t.Error("a resolved finding fails the diff")
	}
	var b bytes.Buffer
	WriteText(&b, Diff{Old: "a", New: "b", Findings: d})
	for _, line := range []string{
		"findings: 1 appeared, 1 resolved, 3 changed, 0 unchanged",
		"  + warning synack-reset: synack-reset title [" + analyzer.Fingerprint("synack-reset", n2) + "]",
		"  - info gone: gone title [",
		"  ~ error synack-reset: synack-reset title [" + analyzer.Fingerprint("synack-reset", n1) + "]\n      facts.attempts 12 -> 5",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, b.String())
		}
	}
}

// Only a change for the worse fails the gate: a severity that rose, a
// certainty that firmed; a count that changed, a severity that fell or a
// certainty that weakened are reported but pass.
func TestDiffWorse(t *testing.T) {
	n1 := map[string]string{"node": "n1"}
	base := diffFinding("stale-dnat", analyzer.Error, n1, map[string]any{"failed_attempts_to_stale": 8})
	base.Certainty = analyzer.Likely
	for _, tc := range []struct {
		name  string
		edit  func(f *analyzer.Finding)
		worse bool
	}{
		{"count only", func(f *analyzer.Finding) { f.Facts = map[string]any{"failed_attempts_to_stale": 6} }, false},
		{"severity fell", func(f *analyzer.Finding) { f.Severity = analyzer.Warning }, false},
		{"certainty weakened", func(f *analyzer.Finding) { f.Certainty = analyzer.Unknown }, false},
		{"certainty firmed", func(f *analyzer.Finding) { f.Certainty = analyzer.Proven }, true},
		{"severity rose", func(f *analyzer.Finding) { f.Severity = analyzer.Error; f.Facts = nil }, false}, // error already
	} {
		old := base
		if tc.name == "severity rose" {
			old.Severity = analyzer.Warning
			tc.worse = true
		}
		nf := base
		tc.edit(&nf)
		d := Findings([]analyzer.Finding{old}, []analyzer.Finding{nf})
		if len(d.Changed) != 1 || d.Changed[0].Worse != tc.worse {
			t.Errorf("%s: changed %+v, want worse %v", tc.name, d.Changed, tc.worse)
			continue
		}
		want := 0
		if tc.worse {
			want = 1
		}
		if got := Failing(d, analyzer.Info); got != want {
			t.Errorf("%s: %d failing, want %d", tc.name, got, want)
		}
	}
}

// A change of facts says which is the old value and which the new: strings
// quoted (an arrow inside one is not the separator), lists by the items
// added and removed (long ones that share a beginning stay apart).
func TestChangeText(t *testing.T) {
	long := func(last string) []string {
		var l []string
		for i := range 20 {
			l = append(l, fmt.Sprintf("10.0.0.%d:40000 -> 10.96.0.10:53", i))
		}
		return append(l, last)
	}
	for _, tc := range []struct {
		old, new any
		want     string
	}{
		{8, 6, "facts.x 8 -> 6"},
		{"a -> b", "c", `facts.x "a -> b" -> "c"`},
		{nil, []string{"p"}, `facts.x (none) -> 1 item: "p"`},
		{long("x"), nil, `facts.x 21 items: "10.0.0.0:40000 -> 10.96.0.10:53", "10.0.0.1:40000 -> 10.96.0.10:53", "10.0.0.2:40000 -> 10.96.0.10:53", and 18 more -> (none)`},
		{nil, map[string]any{"p": []string{"a -> b <c> & d"}}, `facts.x (none) -> {"p":["a -> b <c> & d"]}`},
		{[]string{"a", "b"}, []string{"b", "a"}, "facts.x 2 -> 2 items, the same reordered"},
		{long("10.0.0.99:1 -> x"), long("10.0.0.98:1 -> x"), `facts.x 21 -> 21 items, added "10.0.0.98:1 -> x", removed "10.0.0.99:1 -> x"`},
		{[]int{1}, []int{1, 2, 3, 4, 5}, "facts.x 1 -> 5 items, added 2, 3, 4, and 1 more"},
		{map[string]int{"a": 1, "b": 2}, map[string]int{"a": 3, "c": 4}, `facts.x {"a" 1 -> 3, added "c" 4, removed "b"}`},
		{strings.Repeat("x", 70) + "1", strings.Repeat("x", 70) + "2", `facts.x "...xxxxxxxxxx1" -> "...xxxxxxxxxx2"`},
	} {
		got := ChangeText([]FieldChange{{"facts.x", tc.old, tc.new}})
		if got != tc.want {
			t.Errorf("%v -> %v: %s, want %s", tc.old, tc.new, got, tc.want)
		}
	}
}
