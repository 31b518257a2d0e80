package ruledoc

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

// docs/config.md is what WriteConfig writes, and names every key of the
// file and every rule's parameters.
func TestConfigDocCurrent(t *testing.T) {
	doc := readConfigDoc(t)
	var b bytes.Buffer
	if err := WriteConfig(&b, rules.All()); err != nil {
		t.Fatal(err)
	}
	if b.String() != doc {
		t.Error("docs/config.md is stale: run make docs")
	}
	for _, k := range ConfigKeys() {
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

// The errors the reference shows are the loader's, one per mistake of
// config_errors.yaml, the misspelt name corrected to the first rule's.
func TestConfigDocErrors(t *testing.T) {
	all := rules.All()
	got, err := exampleErrors(all)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(got, "\n")
	want := []string{
		"    netmortem analyze: the configuration has 3 errors:",
		"    .netmortem.yaml:3: rules: unknown rule \"" + misspell(all[0].Name) + "\" (did you mean \"" + all[0].Name + "\"?)",
		"    .netmortem.yaml:7: rules.timewait-churn.params.min_timewait: expected an integer",
		"    .netmortem.yaml:12: ignore entry has no reason",
	}
	if len(lines) != len(want) {
		t.Fatalf("errors:\n%s", got)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want it to start %q", i+1, lines[i], w)
		}
	}
	if _, err := exampleErrors(nil); err == nil {
		t.Error("the errors of no rule: no error")
	}
	// The rules' section says a node selector of an entry for version-skew
	// is an error: its subjects have no node.
	_, err = analyzer.LoadConfig(strings.NewReader("ignore:\n  - rule: version-skew\n    node: node1\n    reason: r\n"), "c.yaml", all)
	if err == nil || !strings.Contains(err.Error(), "c.yaml:3:") {
		t.Errorf("a node for version-skew: %v", err)
	}
}

func TestMisspell(t *testing.T) {
	for name, want := range map[string]string{"synack-reset": "synack-rest", "stale-dnat": "stale-dnt", "ab": "b", "é": "éé"} {
		if got := misspell(name); got != want {
			t.Errorf("misspell(%q) = %q, want %q", name, got, want)
		}
	}
}
