package rules_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
)

func TestConnectionSkewScenarios(t *testing.T) {
	// A capture summarized, as analyze reads it, folds the established
	// attempts into per-server counters: the finding cites those counts,
	// not the first SYNs.
	const counted = "summary mode cites the established attempts it counted per backend, not their SYN frames"
	analyzertest.Run(t, rules.ConnectionSkew, "testdata/connection-skew",
		analyzertest.In("hit-node-own-rules", analyzertest.SummaryWeaker(counted)),
		analyzertest.In("hit-stale-rules", analyzertest.SummaryWeaker(counted)))
}

// A real ticket's IPVS table alone (kubernetes#126378, ipvsadm -ln without
// a capture): 13, 2 and 12 open connections to the kubernetes Service's
// three apiservers under rr. The table names its real servers as the author
// masked them (MASTER1 ...), which the parser warns of, so it is read here
// rather than as a scenario. A chance of 1.6% is no skew at the default
// alpha (0.1%); a configuration with alpha 0.05 calls it one, unknown in
// cause, with the real server holding fewest as the first candidate.
func TestConnectionSkewIPVSTable(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "fixtures", "field", "connection-skew--k8s-126378")
	snap, warns, err := parse.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "MASTER1, MASTER2, MASTER3") {
		t.Fatalf("warnings %v, want the one of the masked names", warns)
	}
	run := func(cfg *analyzer.Config) []analyzer.Finding {
		res := analyzer.Run(context.Background(), snap, []*analyzer.Rule{rules.ConnectionSkew}, cfg)
		if len(res.Errors) > 0 || len(res.Skipped) > 0 {
			t.Fatalf("errors %v, skipped %v", res.Errors, res.Skipped)
		}
		return res.Findings
	}
	if fs := run(nil); len(fs) != 0 {
		t.Fatalf("default alpha: %d findings, want none: %s", len(fs), fs[0].Summary)
	}
	fs := run(&analyzer.Config{Rules: map[string]analyzer.RuleConfig{
		"connection-skew": {Params: map[string]float64{"alpha": 0.05}},
	}})
	if len(fs) != 1 {
		t.Fatalf("alpha 0.05: %d findings, want 1", len(fs))
	}
	f := fs[0]
	if f.Severity != analyzer.Warning || f.Certainty != analyzer.Unknown || f.Subject["virtual_service"] != "TCP 10.233.0.1:443" {
		t.Errorf("finding %s %s %v", f.Severity, f.Certainty, f.Subject)
	}
	var ev []string
	for _, e := range f.Evidence {
		ev = append(ev, filepath.Base(e.Pos.String())+" ("+e.Note+")")
	}
	want := "ipvsadm-ln.txt:2 (TCP 10.233.0.1:443 rr)|ipvsadm-ln.txt:3 (MASTER1:6443: 13 active)|" +
		"ipvsadm-ln.txt:4 (MASTER2:6443: 2 active)|ipvsadm-ln.txt:5 (MASTER3:6443: 12 active)"
	if got := strings.Join(ev, "|"); got != want {
		t.Errorf("evidence\n%s\nwant\n%s", got, want)
	}
	words := f.Title + " " + f.Summary + " " + f.Cause + " " + strings.Join(f.Alternatives, " ")
	for _, s := range []string{"27 open connections", "MASTER2:6443: 2 of 27 (expected 33.3%)", "0.016",
		"chi-square 8.2 with 2 degrees of freedom", "opened while MASTER2:6443 was away", "conn_reuse_mode"} {
		if !strings.Contains(words, s) {
			t.Errorf("the finding does not say %q:\n%s", s, words)
		}
	}
	if !strings.Contains(f.Decide, "--sort-by=.status.startTime") || len(f.Alternatives) != 3 {
		t.Errorf("decide %q, alternatives %q", f.Decide, f.Alternatives)
	}
}
