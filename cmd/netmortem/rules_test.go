package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer/ruledoc"
	"github.com/netmortem/netmortem/analyzer/rules"
)

// netmortem rules and explain say which derived facts each rule requires.
func TestRulesShowFacts(t *testing.T) {
	code, out, stderr := runCLI(t, "rules", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var docs []ruledoc.Rule
	if err := json.Unmarshal([]byte(out), &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(rules.All()) {
		t.Fatalf("%d rules listed, want %d", len(docs), len(rules.All()))
	}
	for i, r := range rules.All() {
		if !slices.Equal(docs[i].Requires, r.FactNames()) {
			t.Errorf("%s requires %v, want %v", r.Name, docs[i].Requires, r.FactNames())
		}
	}
	if got := rules.StaleDNAT.FactNames(); !slices.Equal(got, []string{"dataplanes", "service-endpoints", "attempts", "kube-proxy-logs"}) {
		t.Errorf("stale-dnat requires %v", got)
	}
	_, out, _ = runCLI(t, "explain", "stale-dnat")
	if !strings.Contains(out, "\nRequires the facts: dataplanes, service-endpoints, attempts, kube-proxy-logs\n") {
		t.Errorf("explain:\n%s", out)
	}
	_, out, _ = runCLI(t, "rules", "-o", "markdown")
	if !strings.Contains(out, "## Derived facts") || !strings.Contains(out, "[dataplanes](#fact-dataplanes)") ||
		!strings.Contains(out, `<a id="fact-dataplanes"></a>`) {
		t.Errorf("markdown lacks the facts and their links")
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
