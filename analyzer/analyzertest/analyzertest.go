// Package analyzertest runs a rule on scenario directories of real
// evidence and holds its judgement to each scenario's want.yaml, as
// golang.org/x/tools/go/analysis/analysistest does for Go analyzers:
//
//	func TestStaleDNAT(t *testing.T) { analyzertest.Run(t, rules.StaleDNAT, "testdata/stale-dnat") }
//
// Each subdirectory of the directory is a scenario, named hit-* when the
// rule must report something there and miss-* when it must not. It holds
// evidence files in the formats parse.Open reads (sysctl output,
// iptables-save, kubectl JSON, ipvsadm -Ln, captures ...), possibly a
// use.txt naming evidence it shares (below), and want.yaml, the findings
// expected:
//
//	# What the scenario shows (comment lines at the top are kept).
//	findings:
//	  - rule: ephemeral-nodeport-overlap
//	    severity: warning
//	    certainty: likely
//	    subject:
//	      setting: net.ipv4.ip_local_port_range
//	    decide: kubectl -n kube-system get pod -l component=kube-apiserver -o yaml | grep service-node-port-range
//	    says:
//	      - 30000-32767
//	      - 1024-65000
//	      - net.ipv4.ip_local_reserved_ports
//	    evidence:
//	      - sysctl.txt:1 (net.ipv4.ip_local_port_range = 1024 65000)
//	      - sysctl.txt:2 (net.ipv4.ip_local_reserved_ports = )
//
// or, for a scenario where the rule lacks the evidence it needs,
//
//	skipped:
//	  missing: [capture]
//	findings: []
//
// The rule runs twice on each scenario: with every attempt of the
// captures kept (parse.Options.KeepAttempts), which want.yaml holds, and
// with the captures summarized, as analyze reads them; the findings of
// the two must be the same (rule, subject, severity, certainty, decide,
// evidence), or the test fails naming the scenario and the difference. A
// scenario where summary mode cannot keep what the rule needs lists why
// with SummaryWeaker, and its summarized findings must then be weaker.
//
// A want file holds the judgement of each finding, not its prose: the
// rule, severity, certainty, subject, the command that would decide a cause
// not proven (decide, when the rule sets one) and the evidence (positions
// and notes, in order) are compared whole; says lists phrases (addresses,
// ports, settings, counts) that the finding's words (title, summary, cause,
// fix, supports, contradicts, alternatives) must contain, each as a
// substring. How the words read is held by the rendered outputs of e2e and
// the golden files, not here; nor are facts and sources, which those
// outputs show. Findings pair by rule and subject, so every finding must have
// a Subject, a different one from the other findings of the scenario. A
// finding missing from the output, one not in want.yaml, any field that
// differs and any phrase not said all fail the test, each named.
//
// `go test -update` rewrites the want files from the output: each finding
// the file held keeps the phrases its words still say (those dropped are
// logged), and a new one gets phrases chosen from its facts and the
// values its cause and fix name; edit them by hand to say what matters.
//
// A scenario stores only the evidence that is its own. Evidence it shares
// with a fixture bundle, another scenario or a parser's testdata is named,
// one file a line, in its use.txt, by a path relative to the scenario
// directory, followed by "as NAME" when the scenario holds it under
// another name (or in a subdirectory):
//
//	# the stale-dnat incident's evidence
//	../../../../../fixtures/incidents/stale-dnat/capture.pcap
//	../../../../../fixtures/incidents/stale-dnat/iptables-save.txt
//	../../../../../fixtures/incidents/probe-restart-loop/pods-kube-system.json as kube-system/pods.json
//
// The rule then reads a copy of the scenario made in a temporary directory
// of the same name: its own files (but want.yaml and use.txt) and the files
// named, each under its name in the scenario, so that positions read
// capture.pcap#frame=38 as if the file were there. A scenario without a
// use.txt is read in place. EvidenceDir gives that directory to tests that
// read a scenario otherwise.
package analyzertest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	facts     []func(*analyzer.FactSet)
	config    *analyzer.Config
	scenarios map[string][]Option // options of one scenario
	// summaryWeaker is why summary mode may find less in a scenario.
	summaryWeaker string
}

// WithFact gives the rule a fact made by hand instead of the one its
// evidence gives: what a scenario's files cannot show.
func WithFact[T any](f *analyzer.Fact[T], v T) Option {
	return func(o *options) { o.facts = append(o.facts, func(fs *analyzer.FactSet) { f.Set(fs, v) }) }
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
	got, problems, err := runRule(rule, dir, t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	path := filepath.Join(dir, WantFile)
	if *testutil.Update {
		dropped, err := update(path, got)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dropped {
			t.Logf("%s: %s", path, d)
		}
		return
	}
	want, err := readWant(path, true)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	for _, d := range compare(got, want) {
		t.Errorf("%s: %s", path, d)
	}
}

// runRule runs rule on the evidence of the scenario at dir (gathered
// under tmp when it shares some) and returns its findings as a want file
// holds them, and what is wrong with them whatever the want file says: a
// finding in a miss-* scenario, none in a hit-* one, a subject missing or
// shared, a proven cause with a deciding command. The error says why the
// scenario could not be run.
func runRule(rule *analyzer.Rule, dir, tmp string, o *options) (want, []string, error) {
	var problems []string
	name := filepath.Base(dir)
	hit := strings.HasPrefix(name, "hit-")
	if !hit && !strings.HasPrefix(name, "miss-") {
		problems = append(problems, fmt.Sprintf("scenario %s: name it hit-* (the rule reports) or miss-* (it does not)", name))
	}
	ctx := context.Background()
	evDir, err := evidence(dir, tmp)
	if err != nil {
		return want{}, nil, err
	}
	// Every attempt of the captures, one by one, as the scenarios were
	// written for.
	got, p, captured, err := runMode(ctx, rule, dir, evDir, o, &parse.Options{KeepAttempts: true})
	if err != nil {
		return want{}, nil, err
	}
	problems = append(problems, p...)
	// The captures summarized, as analyze reads them: its findings must
	// be the same. Summary mode changes nothing but what is read of
	// captures: evidence without any reads the same.
	if captured || o.summaryWeaker != "" {
		sum, _, _, err := runMode(ctx, rule, dir, evDir, o, &parse.Options{})
		if err != nil {
			return want{}, nil, fmt.Errorf("summary mode: %w", err)
		}
		problems = append(problems, compareModes(name, sum, got, o.summaryWeaker)...)
	}
	switch {
	case hit && len(got.Findings) == 0:
		problems = append(problems, fmt.Sprintf("scenario %s is a hit-* scenario, but %s reports nothing there", name, rule.Name))
	case !hit && len(got.Findings) > 0:
		problems = append(problems, fmt.Sprintf("scenario %s is a miss-* scenario, but %s reports %d findings there", name, rule.Name, len(got.Findings)))
	}
	return got, problems, nil
}

// runMode opens the evidence at evDir with popts and runs rule on it,
// returning its findings as a want file holds them and what is wrong with
// them whatever the want file says (evidence warnings, subjects, proven
// causes with a deciding command), and whether the evidence held a
// capture.
func runMode(ctx context.Context, rule *analyzer.Rule, dir, evDir string, o *options, popts *parse.Options) (_ want, _ []string, captured bool, _ error) {
	var problems []string
	snap, warns, err := parse.Open(ctx, evDir, popts)
	if err != nil {
		return want{}, nil, false, fmt.Errorf("open %s: %w", dir, err)
	}
	captured = len(snap.Captures) > 0 || len(snap.Attempts) > 0 || len(snap.EndpointStats) > 0
	for _, w := range warns {
		problems = append(problems, fmt.Sprintf("evidence warning: %v", w))
	}
	for _, in := range snap.Inputs {
		if filepath.Base(in.Path) == WantFile && in.Skipped == "" {
			return want{}, nil, false, fmt.Errorf("%s was read as evidence (%s): keep its top level to the keys findings and skipped", in.Path, in.Format)
		}
	}
	facts := analyzer.NewFactSet(snap)
	for _, set := range o.facts {
		set(facts)
	}
	res := analyzer.RunFactSet(ctx, facts, []*analyzer.Rule{rule}, o.config)
	for _, e := range res.Errors {
		return want{}, nil, false, fmt.Errorf("rule %s failed: %s", e.Rule, e.Err)
	}
	problems = append(problems, checkSubjects(rule, res.Findings)...)
	for _, f := range res.Findings {
		if f.Certainty == analyzer.Proven && f.Decide != "" {
			problems = append(problems, fmt.Sprintf("finding %s %v is proven, yet says what would decide it (%q): Decide is for a cause not proven",
				f.Rule, f.Subject, f.Decide))
		}
	}
	return fromResult(res, evDir), problems, captured, nil
}

// update rewrites the want file at path from got, keeping the phrases of
// each finding it held (same rule and subject) that its words still say,
// and choosing phrases for the others. It returns the phrases dropped.
func update(path string, got want) ([]string, error) {
	old, err := readWant(path, false)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	pairOf, _ := pair(got.Findings, old.Findings)
	var dropped []string
	for i := range got.Findings {
		g := &got.Findings[i]
		if j := pairOf[i]; j >= 0 && subjectString(g.Subject) == subjectString(old.Findings[j].Subject) {
			var d []string
			g.Says, d = keepPhrases(*g, old.Findings[j])
			for _, p := range d {
				dropped = append(dropped, fmt.Sprintf("finding %s no longer says %q: phrase dropped", g.name(), p))
			}
			continue
		}
		g.Says = choosePhrases(*g)
	}
	return dropped, writeWant(path, got)
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
