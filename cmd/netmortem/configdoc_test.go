package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
)

func readConfigDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docs/config.md is what netmortem rules -o config writes, and names every
// key of the file and every rule's parameters.
func TestConfigDocCurrent(t *testing.T) {
	doc := readConfigDoc(t)
	var b bytes.Buffer
	if err := writeConfigDoc(&b); err != nil {
		t.Fatal(err)
	}
	if b.String() != doc {
		t.Error("docs/config.md is stale: run make docs")
	}
	for _, k := range configKeysDocumented() {
		if !strings.Contains(doc, "| `"+k+"` |") {
			t.Errorf("docs/config.md has no row for the key %s", k)
		}
	}
	for _, r := range rules.All() {
		for _, p := range r.Params {
			if !strings.Contains(doc, "[`"+r.Name+"`](rules/"+r.Name+".md) | `"+p.Name+"`") {
				t.Errorf("docs/config.md does not list parameter %s of %s", p.Name, r.Name)
			}
		}
		if !strings.Contains(doc, "| [`"+r.Name+"`](rules/"+r.Name+".md) | `"+strings.Join(r.SubjectKeys, "`, `")+"` |") {
			t.Errorf("docs/config.md does not list the subject keys of %s", r.Name)
		}
		if _, err := os.Stat(filepath.Join(testutil.Root(), "docs", "rules", r.Name+".md")); len(r.Params) > 0 && err != nil {
			t.Errorf("docs/config.md links to %v", err)
		}
	}
}

// The complete example of docs/config.md loads, and its entries do what
// the comments say.
func TestConfigDocExample(t *testing.T) {
	doc := readConfigDoc(t)
	_, rest, ok := strings.Cut(doc, "## A complete example\n\n```yaml\n")
	if !ok {
		t.Fatal("docs/config.md has no complete example")
	}
	example, _, ok := strings.Cut(rest, "```")
	if !ok || example != configExample {
		t.Fatal("the example in docs/config.md is not configExample")
	}
	cfg, err := analyzer.LoadConfig(strings.NewReader(example), "example.yaml", rules.All())
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Rules["version-skew"].Disabled || cfg.Rules["connection-skew"].Params["min_attempts"] != 30 ||
		cfg.Rules["timewait-churn"].Severity != analyzer.Info || len(cfg.Ignore) != 5 {
		t.Errorf("example read as %+v", cfg)
	}
	f := analyzer.Finding{Rule: "ephemeral-nodeport-overlap", Subject: map[string]string{"node": "node1", "setting": "net.ipv4.ip_local_port_range"}}
	f.Fingerprint = analyzer.Fingerprint(f.Rule, f.Subject)
	// syn-unanswered on batch-1 to a ClusterIP, and a restart loop in the
	// batch namespace, are suppressed; the same on another node is not.
	g := analyzer.Finding{Rule: "syn-unanswered", Subject: map[string]string{"node": "batch-1", "address": "10.96.0.10:53", "proto": "tcp"}}
	h := analyzer.Finding{Rule: "syn-unanswered", Subject: map[string]string{"node": "node2", "address": "10.96.0.10:53", "proto": "tcp"}}
	p := analyzer.Finding{Rule: "probe-restart-loop", Subject: map[string]string{"object": "Pod batch/job-1", "container": "main"}}
	kept, sup, warns := cfg.Suppress([]analyzer.Finding{f, g, h, p}, time.Date(2026, 12, 31, 12, 0, 0, 0, time.UTC))
	if len(kept) != 1 || kept[0].Subject["node"] != "node2" || len(sup) != 3 || sup[0].By != "example.yaml:14" ||
		sup[1].By != "example.yaml:20" || sup[2].By != "example.yaml:24" || len(warns) != 0 {
		t.Errorf("kept %+v, suppressed %+v, warnings %v", kept, sup, warns)
	}
	_, sup, warns = cfg.Suppress([]analyzer.Finding{f}, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	if len(sup) != 0 || len(warns) != 1 || !strings.HasPrefix(warns[0].String(), "example.yaml:14: ignore entry expired on 2026-12-31") {
		t.Errorf("after expiry: suppressed %+v, warnings %v", sup, warns)
	}
}

// explain and rules -o json name a rule's parameters.
func TestRuleParamsShown(t *testing.T) {
	code, out, _ := runCLI(t, "explain", "connection-skew")
	if code != exitOK || !strings.Contains(out, "alpha (number > 0 and < 1, default 0.001): the significance level") ||
		!strings.Contains(out, "min_attempts (integer >= 1, default 1)") {
		t.Errorf("explain: exit %d:\n%s", code, out)
	}
	if _, out, _ := runCLI(t, "explain", "stale-dnat"); strings.Contains(out, "Parameters") {
		t.Errorf("explain of a rule without parameters lists some:\n%s", out)
	}
	code, out, _ = runCLI(t, "rules", "-o", "json")
	if code != exitOK || !strings.Contains(out, `"params": [`) || !strings.Contains(out, `"name": "min_timewait"`) ||
		!strings.Contains(out, `"range": "> 0 and < 1"`) {
		t.Errorf("rules -o json: exit %d, no params", code)
	}
}
