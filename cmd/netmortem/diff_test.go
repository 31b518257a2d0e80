package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/diff"
)

// TestDiff compares two bundles of the same incident: the findings that
// appeared, the NAT backends added, the exit codes of one bundle and of a
// bundle against itself, and titles written as analyze writes them.
func TestDiff(t *testing.T) {
	code, out, stderr := runCLI(t, "diff", "-o", "json", fixture("incidents/stale-dnat-control"), fixture("incidents/stale-dnat"))
	if code != exitFindings {
		t.Fatalf("exit %d, want %d (findings appeared): %s", code, exitFindings, stderr)
	}
	var d diff.Diff
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, r := range d.Findings.Appeared {
		rules = append(rules, r.Rule)
	}
	if fmt.Sprint(rules) != "[kube-proxy-sync-errors stale-dnat syn-unanswered]" || len(d.Findings.Resolved) != 0 {
		t.Errorf("findings %+v", d.Findings)
	}
	if len(d.Dataplane) != 1 || fmt.Sprint(d.Dataplane[0].Added) != "[10.244.2.7:53]" || len(d.Dataplane[0].Removed) != 0 {
		t.Errorf("dataplane %+v", d.Dataplane)
	}
	if len(d.Endpoints) != 0 {
		t.Errorf("endpoints differ: %+v", d.Endpoints)
	}
	// A title with an arrow keeps it, as analyze -o json writes it.
	_, out, _ = runCLI(t, "diff", "-o", "json", fixture("incidents/network-policy-deny-control"), fixture("incidents/network-policy-deny"))
	if !strings.Contains(out, `) -> shop/cart-`) || strings.Contains(out, `\u003e`) {
		t.Errorf("diff -o json: the arrows of titles escaped, or missing:\n%s", out)
	}
	if code, _, _ := runCLI(t, "diff", fixture("incidents/stale-dnat")); code != exitUsage {
		t.Errorf("one bundle: exit %d", code)
	}
	if code, _, _ := runCLI(t, "diff", fixture("incidents/stale-dnat"), fixture("incidents/stale-dnat")); code != exitOK {
		t.Errorf("same bundle twice: exit %d", code)
	}
}
