package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// findingFacts runs analyze -o json and returns its findings' rules and
// facts (the counts a file read twice would double) and its inputs.
func findingFacts(t *testing.T, args ...string) (facts map[string]string, inputs []string) {
	t.Helper()
	code, out, stderr := runCLI(t, append([]string{"analyze", "-o", "json"}, args...)...)
	if code != exitFindings {
		t.Fatalf("analyze %q: exit %d\n%s", args, code, stderr)
	}
	var rep struct {
		Findings []struct {
			Rule  string         `json:"rule"`
			Facts map[string]any `json:"facts"`
		} `json:"findings"`
		Inputs []struct {
			Path string `json:"path"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	facts = map[string]string{}
	for _, f := range rep.Findings {
		b, _ := json.Marshal(f.Facts)
		facts[f.Rule] += string(b)
	}
	for _, in := range rep.Inputs {
		inputs = append(inputs, in.Path)
	}
	return facts, inputs
}

// TestOperandsInsideOthers: an operand inside a directory operand, or
// matched by a pattern that matches its directory too, is read once: the
// attempts of the capture are counted once, not two or three times.
func TestOperandsInsideOthers(t *testing.T) {
	q := t.TempDir()
	dir := filepath.Join(q, "X")
	if err := os.CopyFS(dir, os.DirFS(fixture("incidents/stale-dnat"))); err != nil {
		t.Fatal(err)
	}
	want, inputs := findingFacts(t, dir)
	if want["stale-dnat"] == "" || want["syn-unanswered"] == "" {
		t.Fatalf("the incident's findings: %v", want)
	}
	for _, args := range [][]string{
		{filepath.Join(q, "**")},                                                          // q, q/X and q/X/*
		{dir, filepath.Join(dir, "capture.pcap")},                                         // the capture twice
		{filepath.Join(dir, "capture.pcap"), dir},                                         // in either order
		{dir, dir + string(filepath.Separator) + ".." + string(filepath.Separator) + "X"}, // the same directory by another name
		{filepath.Join(q, "*"), filepath.Join(q, "*", "*.pcap")},                          // patterns
	} {
		got, gotInputs := findingFacts(t, args...)
		for rule, f := range want {
			if got[rule] != f {
				t.Errorf("%q: %s facts %s, want %s (as the directory alone gives)", args, rule, got[rule], f)
			}
		}
		if len(got) != len(want) || len(gotInputs) != len(inputs) {
			t.Errorf("%q: %d findings, %d inputs; the directory alone: %d, %d", args, len(got), len(gotInputs), len(want), len(inputs))
		}
	}
	// batch: the files under q are parts of q, not bundles of their own.
	code, lines, stderr := batchLines(t, q, "-q", filepath.Join(q, "**"))
	if want := []string{". ok 3 findings"}; code != exitFindings || !slices.Equal(lines, want) {
		t.Errorf("batch 'q/**': exit %d, lines %q, want %q\n%s", code, lines, want, stderr)
	}
}
