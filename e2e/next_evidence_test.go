package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// evidencePiece is the evidence of one kind from one node of a bundle
// (node empty: the files the bundle does not attribute), and the files
// that hold it.
type evidencePiece struct {
	kind  model.Kind
	node  string
	files []string
}

// TestNextEvidenceBringsBack takes every incident and seed bundle with
// findings and, for each kind of evidence a rule that produced a finding
// needs (Needs or NeedsAny), removes that evidence, node by node, from a
// copy of the bundle: the report's next_evidence must name a command of
// the collector's catalog that gives the kind (on the node, where the
// bundle still names it), and each rule that lost it must be skipped for
// it, or, when it still runs (the kind is left on another node, or it has
// another of the kinds it needs one of), be listed as joining that
// command. On the whole bundles, every finding not proven is decided by an
// entry, and every skipped rule let run by one.
func TestNextEvidenceBringsBack(t *testing.T) {
	dirs := bundleDirs(t, 40, "the incidents and seeds", "../fixtures/incidents/*", "../fixtures/seeds/*")
	every := len(dirs)
	// Each piece removed is one more analysis of a copy of the bundle,
	// the same code as the others': under the race detector one bundle in
	// four is enough, and make test removes the pieces of every bundle
	// without it (WHOLE_PKGS).
	dirs = testutil.RaceSample(t, 4, dirs)
	all := rules.All()
	tried := 0
	for _, dir := range dirs {
		snap, res := analyzeDir(t, dir, all)
		checkUndecided(t, dir, report.NextEvidenceFor(snap, all, res), res)
		pieces := neededPieces(snap, res, all)
		tried += len(pieces)
		for _, p := range pieces {
			t.Run(filepath.Base(dir)+"/"+string(p.kind)+"@"+orAny(p.node), func(t *testing.T) {
				t.Parallel()
				checkRemoved(t, dir, p, res, all)
			})
		}
	}
	if want := max(1, 40*len(dirs)/every); tried < want {
		t.Errorf("removed %d pieces of evidence in all, want at least %d", tried, want)
	}
}

// checkUndecided holds that each finding whose cause is not proven, here
// or by the finding that explains it, is decided by an entry of next, and
// that each skipped rule is let run by one.
func checkUndecided(t *testing.T, dir string, next []report.NextEvidence, res analyzer.Result) {
	t.Helper()
	for _, f := range res.Findings {
		if f.Certainty != analyzer.Proven && f.ExplainedBy == "" && !slices.ContainsFunc(next, func(e report.NextEvidence) bool { return slices.Contains(e.Decides, f.Fingerprint) }) {
			t.Errorf("%s: %s's finding %s (%s) is decided by no next_evidence entry", dir, f.Rule, f.Fingerprint, f.Certainty)
		}
	}
	for _, s := range res.Skipped {
		if !slices.ContainsFunc(next, func(e report.NextEvidence) bool { return slices.Contains(e.Unblocks, s.Rule) }) {
			t.Errorf("%s: skipped %s is let run by no next_evidence entry", dir, s.Rule)
		}
	}
}

func orAny(node string) string {
	if node == "" {
		return "unattributed"
	}
	return node
}

func analyzeDir(t *testing.T, dir string, all []*analyzer.Rule) (*model.Snapshot, analyzer.Result) {
	t.Helper()
	if allRules(all) {
		snap, _, res := analyze(t, dir)
		return snap, res
	}
	ctx := context.Background()
	snap, _, err := parse.Open(ctx, dir, &parse.Options{Summary: parse.Summary{Enabled: true}})
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return snap, analyzer.Run(ctx, snap, all, nil)
}

// neededPieces lists, for the rules that produced findings, the pieces of
// evidence of the kinds they need that snap holds, by kind and node.
func neededPieces(snap *model.Snapshot, res analyzer.Result, all []*analyzer.Rule) []evidencePiece {
	needed := map[model.Kind]bool{}
	for _, f := range res.Findings {
		if r := ruleByName(all, f.Rule); r != nil {
			for _, k := range slices.Concat(r.Needs, r.NeedsAny) {
				needed[k] = true
			}
		}
	}
	byKey := map[[2]string]*evidencePiece{}
	var out []*evidencePiece
	for _, in := range snap.Inputs {
		if in.Skipped != "" || !needed[in.Kind] {
			continue
		}
		key := [2]string{string(in.Kind), in.Node}
		p := byKey[key]
		if p == nil {
			p = &evidencePiece{kind: in.Kind, node: in.Node}
			byKey[key] = p
			out = append(out, p)
		}
		p.files = append(p.files, fileOf(in.Path))
	}
	list := make([]evidencePiece, len(out))
	for i, p := range out {
		list[i] = *p
	}
	return list
}

// fileOf is the file an input was read from: the path without the
// member of an archive or the line of a terminal session.
func fileOf(path string) string {
	if i := strings.Index(path, "!"); i >= 0 {
		path = path[:i]
	}
	if i := strings.LastIndexByte(path, ':'); i > 0 && !strings.ContainsRune(path[i:], '/') {
		if _, err := os.Stat(path); err != nil {
			path = path[:i]
		}
	}
	return path
}

func ruleByName(all []*analyzer.Rule, name string) *analyzer.Rule {
	for _, r := range all {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func checkRemoved(t *testing.T, dir string, p evidencePiece, full analyzer.Result, all []*analyzer.Rule) {
	copyDir := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(copyDir, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	for _, f := range p.files {
		rel, err := filepath.Rel(dir, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("%s is not in %s", f, dir)
		}
		if err := os.Remove(filepath.Join(copyDir, rel)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	snap, res := analyzeDir(t, copyDir, all)
	if has(snap, p.kind, p.node) {
		t.Fatalf("removing %v left %s evidence of node %q", p.files, p.kind, p.node)
	}
	next := report.NextEvidenceFor(snap, all, res)

	// The command that brings it back: a catalog command of the kind,
	// asked of the node when the bundle still names it.
	var back []report.NextEvidence
	for _, e := range next {
		if c, ok := collect.Lookup(e.Command); ok && slices.Contains(c.Kinds, p.kind) {
			back = append(back, e)
		}
	}
	if len(collect.ForKind(p.kind)) == 0 {
		t.Logf("no catalog command gives %s", p.kind)
	} else if len(back) == 0 {
		t.Fatalf("without %v (%s), next_evidence names no command that gives %s: %+v", p.files, p.kind, p.kind, next)
	}
	nodeKnown := p.node != "" && slices.ContainsFunc(snap.Inputs, func(in model.Input) bool { return in.Node == p.node && in.Skipped == "" })
	if nodeKnown {
		for _, e := range back {
			if e.Scope == collect.ScopeNode && !slices.Contains(e.Nodes, p.node) {
				t.Errorf("%s is asked of %v, not of %s, which lost its %s evidence", e.Command, e.Nodes, p.node, p.kind)
			}
		}
	}

	// Each rule that produced a finding with it and needs it is skipped
	// for it, or still runs and is listed as joining it.
	for _, name := range rulesWithFindings(full) {
		r := ruleByName(all, name)
		if !slices.Contains(r.Needs, p.kind) && !slices.Contains(r.NeedsAny, p.kind) {
			continue
		}
		i := slices.IndexFunc(res.Skipped, func(s analyzer.Skipped) bool { return s.Rule == name })
		if i >= 0 {
			s := res.Skipped[i]
			if !slices.Contains(s.Missing, p.kind) && !slices.Contains(s.AnyOf, p.kind) {
				t.Errorf("%s is skipped for %v / any of %v, not for the %s removed", name, s.Missing, s.AnyOf, p.kind)
			}
			for _, e := range back {
				if !slices.Contains(e.Unblocks, name) {
					t.Errorf("%s: unblocks %v, not the skipped %s", e.Command, e.Unblocks, name)
				}
			}
			continue
		}
		if snap.Has(p.kind) && !nodeKnown {
			// Left on another node, and the node that lost it is
			// no longer named by the bundle: nothing says where
			// it is missing.
			t.Logf("%s still runs on the %s evidence of other nodes", name, p.kind)
			continue
		}
		for _, e := range back {
			if !slices.Contains(e.Joins, name) && !slices.ContainsFunc(e.Decides, func(fp string) bool { return ruleOf(res, fp) == name }) {
				t.Errorf("%s still runs without %s, but %s neither lists it as joining nor decides one of its findings: %+v", name, p.kind, e.Command, e)
			}
		}
	}
}

func has(snap *model.Snapshot, k model.Kind, node string) bool {
	return slices.ContainsFunc(snap.Inputs, func(in model.Input) bool { return in.Kind == k && in.Node == node && in.Skipped == "" })
}

func rulesWithFindings(res analyzer.Result) []string {
	var out []string
	for _, f := range res.Findings {
		if !slices.Contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	return out
}

func ruleOf(res analyzer.Result, fingerprint string) string {
	for _, f := range res.Findings {
		if f.Fingerprint == fingerprint {
			return f.Rule
		}
	}
	return ""
}
