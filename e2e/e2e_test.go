// Package e2e runs netmortem end to end on the evidence bundles committed
// under fixtures/: the seed bundles cut from the incident write-ups, and
// the incident bundles made with the real kernel. Each test states the
// findings a reader of that evidence must get, with their facts and the
// positions they cite.
package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// want is one finding a bundle must produce.
type want struct {
	rule     string
	severity analyzer.Severity
	// facts that must be present with exactly these values (as report.FactValue prints them).
	facts map[string]string
	// evidence positions (model.Pos.String) that must be cited.
	evidence []string
}

// bundle is a fixture directory and what analyzing it must give.
type bundle struct {
	dir  string
	want []want
	// others lists the other rules that may report on this bundle at
	// warning or above; anything else at warning or above fails the test.
	others []string
	// warnings are substrings of the input warnings that must appear.
	warnings []string
}

func analyze(t *testing.T, dir string) (*model.Snapshot, model.ErrorList, analyzer.Result) {
	t.Helper()
	ctx := context.Background()
	snap, warns, err := parse.Open(ctx, dir, nil)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return snap, warns, analyzer.Run(ctx, snap, analyzer.Default(), nil)
}

func check(t *testing.T, b bundle) {
	t.Helper()
	dir := filepath.Join("..", b.dir)
	_, warns, res := analyze(t, dir)
	if len(res.Errors) > 0 {
		t.Errorf("rule errors: %+v", res.Errors)
	}
	rel := func(p model.Pos) string {
		if r, err := filepath.Rel(dir, p.File); err == nil {
			p.File = filepath.ToSlash(r)
		}
		return p.String()
	}
	used := make([]bool, len(res.Findings))
	for _, w := range b.want {
		best, bestMiss := -1, ""
		for i, f := range res.Findings {
			if used[i] || f.Rule != w.rule {
				continue
			}
			miss := mismatch(f, w, rel)
			if miss == "" {
				best = i
				break
			}
			if bestMiss == "" {
				bestMiss = miss
			}
		}
		if best < 0 {
			if bestMiss == "" {
				bestMiss = "no finding of that rule"
			}
			t.Errorf("%s: missing %s %s: %s\nfindings: %s", b.dir, w.severity, w.rule, bestMiss, summary(res.Findings, rel))
			continue
		}
		used[best] = true
	}
	for i, f := range res.Findings {
		if used[i] || f.Severity < analyzer.Warning || slices.Contains(b.others, f.Rule) {
			continue
		}
		t.Errorf("%s: unexpected %s %s: %s", b.dir, f.Severity, f.Rule, f.Title)
	}
	for _, w := range b.warnings {
		found := false
		for _, e := range warns {
			if strings.Contains(e.Error(), w) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no input warning containing %q; warnings: %v", b.dir, w, warns)
		}
	}
}

func mismatch(f analyzer.Finding, w want, rel func(model.Pos) string) string {
	if f.Severity != w.severity {
		return fmt.Sprintf("severity %s", f.Severity)
	}
	for k, v := range w.facts {
		got, ok := f.Facts[k]
		if !ok {
			return fmt.Sprintf("no fact %q (facts: %v)", k, f.Facts)
		}
		if g := report.FactValue(got); g != v {
			return fmt.Sprintf("fact %s = %q, want %q", k, g, v)
		}
	}
	var cited []string
	for _, e := range f.Evidence {
		cited = append(cited, rel(e.Pos))
	}
	for _, e := range w.evidence {
		if !slices.Contains(cited, e) {
			return fmt.Sprintf("evidence %s not cited (cited: %v)", e, cited)
		}
	}
	return ""
}

func summary(fs []analyzer.Finding, rel func(model.Pos) string) string {
	var b strings.Builder
	for _, f := range fs {
		var cited []string
		for _, e := range f.Evidence {
			cited = append(cited, rel(e.Pos))
		}
		fmt.Fprintf(&b, "\n  %s %s %q facts=%v evidence=%v", f.Severity, f.Rule, f.Title, f.Facts, cited)
	}
	return b.String()
}

func TestSeeds(t *testing.T) {
	for _, b := range []bundle{{
		dir: "fixtures/seeds/002-synack-reset",
		want: []want{{
			rule:     "ephemeral-nodeport-overlap",
			severity: analyzer.Warning,
			facts: map[string]string{
				"ip_local_port_range": "1024-65000",
				"nodeport_range":      "20000-40000",
				"overlap":             "20000-40000",
			},
			evidence: []string{"sysctl.txt:1", "kube-apiserver-flags.txt:1"},
		}},
	}} {
		t.Run(filepath.Base(b.dir), func(t *testing.T) { check(t, b) })
	}
}
