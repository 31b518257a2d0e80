// Package analyzertest runs a rule on scenario directories of real
// evidence and compares its findings with each scenario's want.yaml, as
// golang.org/x/tools/go/analysis/analysistest does for Go analyzers:
//
//	func TestStaleDNAT(t *testing.T) { analyzertest.Run(t, rules.StaleDNAT, "testdata/stale-dnat") }
//
// Each subdirectory of the directory is a scenario, named hit-* when the
// rule must report something there and miss-* when it must not. It holds
// evidence files in the formats parse.Open reads (sysctl output,
// iptables-save, kubectl JSON, ipvsadm -Ln, captures ...) and want.yaml,
// the findings expected:
//
//	# What the scenario shows (comment lines at the top are kept).
//	findings:
//	- rule: ephemeral-nodeport-overlap
//	  severity: warning
//	  certainty: likely
//	  title: ephemeral ports 1024-65000 overlap the NodePort range 30000-32767 on this node
//	  subject:
//	    setting: net.ipv4.ip_local_port_range
//	  sources: [sysctl]
//	  facts:
//	    overlap: 30000-32767
//	  evidence:
//	  - sysctl.txt:1 (net.ipv4.ip_local_port_range = 1024 65000)
//
// or, for a scenario where the rule lacks the evidence it needs,
//
//	skipped:
//	  missing: [capture]
//	findings: []
//
// Every finding must have a Subject, a different one from the other
// findings of the scenario. A finding's supports, contradicts, alternatives and decide are listed
// when the rule sets them. A finding missing from the output, one not in
// want.yaml, and any field that differs all fail the test, each named. `go test -update` rewrites
// the want files from the output.
package analyzertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
)

// WantFile is the name of a scenario's expected findings.
const WantFile = "want.yaml"

// Option changes how Run runs the rule.
type Option func(*options)

type options struct {
	facts     []func(*analyzer.Facts)
	config    *analyzer.Config
	scenarios map[string][]Option // options of one scenario
}

// WithFact gives the rule a fact made by hand instead of the one its
// evidence gives: what a scenario's files cannot show.
func WithFact[T any](f *analyzer.Fact[T], v T) Option {
	return func(o *options) { o.facts = append(o.facts, func(fs *analyzer.Facts) { f.Set(fs, v) }) }
}

// WithConfig runs the rule with a configuration (severity, parameters).
func WithConfig(cfg *analyzer.Config) Option {
	return func(o *options) { o.config = cfg }
}

// In applies opts to the scenario called name only.
func In(name string, opts ...Option) Option {
	return func(o *options) { o.scenarios[name] = append(o.scenarios[name], opts...) }
}

// Run runs rule on every scenario (subdirectory) of dir, each as a subtest,
// and compares its findings with the scenario's want.yaml.
func Run(t *testing.T, rule *analyzer.Rule, dir string, opts ...Option) {
	t.Helper()
	o := &options{scenarios: map[string][]Option{}}
	for _, opt := range opts {
		opt(o)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("scenarios of %s: %v", rule.Name, err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s holds no scenario directory", dir)
	}
	for name := range o.scenarios {
		if !slices.Contains(names, name) {
			t.Errorf("options for scenario %s, which %s does not hold", name, dir)
		}
	}
	for _, name := range names {
		so := *o
		so.facts = slices.Clip(o.facts) // a scenario's own facts are appended to a copy
		for _, opt := range o.scenarios[name] {
			opt(&so)
		}
		t.Run(name, func(t *testing.T) {
			t.Helper()
			runScenario(t, rule, filepath.Join(dir, name), &so)
		})
	}
}

func runScenario(t *testing.T, rule *analyzer.Rule, dir string, o *options) {
	t.Helper()
	name := filepath.Base(dir)
	hit := strings.HasPrefix(name, "hit-")
	if !hit && !strings.HasPrefix(name, "miss-") {
		t.Errorf("scenario %s: name it hit-* (the rule reports) or miss-* (it does not)", name)
	}
	ctx := context.Background()
	snap, warns, err := parse.Open(ctx, dir, nil)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	for _, w := range warns {
		t.Errorf("evidence warning: %v", w)
	}
	for _, in := range snap.Inputs {
		if filepath.Base(in.Path) == WantFile && in.Skipped == "" {
			t.Fatalf("%s was read as evidence (%s): keep its top level to the keys findings and skipped", in.Path, in.Format)
		}
	}
	facts := analyzer.NewFacts(snap)
	for _, set := range o.facts {
		set(facts)
	}
	res := analyzer.RunFacts(ctx, facts, []*analyzer.Rule{rule}, o.config)
	for _, e := range res.Errors {
		t.Fatalf("rule %s failed: %s", e.Rule, e.Err)
	}
	for _, e := range checkSubjects(rule, res.Findings) {
		t.Error(e)
	}
	for _, f := range res.Findings {
		if f.Certainty == analyzer.Proven && f.Decide != "" {
			t.Errorf("finding %s %q is proven, yet says what would decide it (%q): Decide is for a cause not proven", f.Rule, f.Title, f.Decide)
		}
	}
	got := fromResult(res, dir)
	switch {
	case hit && len(got.Findings) == 0:
		t.Errorf("scenario %s is a hit-* scenario, but %s reports nothing there", name, rule.Name)
	case !hit && len(got.Findings) > 0:
		t.Errorf("scenario %s is a miss-* scenario, but %s reports %d findings there", name, rule.Name, len(got.Findings))
	}
	path := filepath.Join(dir, WantFile)
	if *testutil.Update {
		if err := writeWant(path, got); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := readWant(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	for _, d := range compare(got, want) {
		t.Errorf("%s: %s", path, d)
	}
}

// checkSubjects says which findings have no Subject, one that another
// finding of the run has (their fingerprints then carry a suffix), or a
// key the rule's SubjectKeys do not list.
func checkSubjects(rule *analyzer.Rule, fs []analyzer.Finding) []string {
	var out []string
	for _, f := range fs {
		for k := range f.Subject {
			if len(rule.SubjectKeys) > 0 && !slices.Contains(rule.SubjectKeys, k) {
				out = append(out, fmt.Sprintf("finding %s %q has the subject key %q, which the rule's SubjectKeys %v do not list",
					f.Rule, f.Title, k, rule.SubjectKeys))
			}
		}
		if obj, ok := f.Subject["object"]; ok && len(rule.ObjectKinds) > 0 {
			if kind, _, _ := strings.Cut(obj, " "); !slices.Contains(rule.ObjectKinds, kind) {
				out = append(out, fmt.Sprintf("finding %s %q has an object of the kind %q, which the rule's ObjectKinds %v do not list",
					f.Rule, f.Title, kind, rule.ObjectKinds))
			}
		}
		switch {
		case len(f.Subject) == 0:
			out = append(out, fmt.Sprintf("finding %s %q has no Subject: say what it is about (see the analyzer package doc)", f.Rule, f.Title))
		case strings.Contains(f.Fingerprint, "-"):
			out = append(out, fmt.Sprintf("finding %s %q has the Subject %v of another finding of the run (fingerprint %s): "+
				"two problems need two Subjects", f.Rule, f.Title, f.Subject, f.Fingerprint))
		}
	}
	return out
}
