package report_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// collectedCase is a bundle of three nodes with sysctl each: node1 and
// node2 made by the collector, node3 not. On node1 ip neigh ran and
// printed nothing, ipvsadm was skipped (ip_vs not loaded), iptables-save
// was covered by the legacy and nft commands that ran, and the sysctl
// command ran and was read; on node2 ip neigh failed and ipvsadm was
// not found.
func collectedCase() (*model.Snapshot, analyzer.Result) {
	snap := &model.Snapshot{
		Inputs: []model.Input{
			{Path: "node1/sysctl.txt", Kind: model.KindSysctl, Node: "node1"},
			{Path: "node2/sysctl.txt", Kind: model.KindSysctl, Node: "node2"},
			{Path: "node3/sysctl.txt", Kind: model.KindSysctl, Node: "node3"},
		},
		Collections: []model.Collection{
			{Node: "node1", Ran: []model.CollectedRun{
				{Name: "sysctl-net", File: "node1/sysctl.txt"}, {Name: "ip-neigh"},
				{Name: "iptables-legacy-save"}, {Name: "iptables-nft-save"},
			}, Skipped: []model.CollectedSkip{
				{Name: "ipvsadm", Why: "absent: /proc/net/ip_vs"},
				{Name: "iptables-save", Why: "covered by iptables-legacy-save iptables-nft-save"},
			}},
			{Node: "node2", Ran: []model.CollectedRun{{Name: "ip-neigh", Status: 2}},
				Skipped: []model.CollectedSkip{{Name: "ipvsadm", Why: "ipvsadm not found"}}},
		},
	}
	sysctl, _ := collect.Lookup("sysctl-net")
	res := analyzer.Result{
		Findings: []analyzer.Finding{
			{Rule: "forwarding", Fingerprint: "ffff", Severity: analyzer.Warning, Certainty: analyzer.Likely,
				Subject: map[string]string{"node": "node1"}, Decide: sysctl.Shell},
		},
		Skipped: []analyzer.Skipped{
			{Rule: "neigh", Missing: []model.Kind{model.KindNeighbors}},
			{Rule: "ipvs", Missing: []model.Kind{model.KindIPVS}},
			{Rule: "tables", Missing: []model.Kind{model.KindNetfilter}},
		},
		// The skipped rules could explain what forwarding shows: their
		// commands are worth listing.
		Rules: collectedRules(),
	}
	return snap, res
}

// collectedRules are the rules of collectedCase, of one symptom.
func collectedRules() []*analyzer.Rule {
	drops := &analyzer.Symptom{Name: "drops", Doc: "packets are dropped"}
	var rules []*analyzer.Rule
	for _, name := range []string{"forwarding", "neigh", "ipvs", "tables"} {
		rules = append(rules, &analyzer.Rule{Name: name, Symptoms: []analyzer.SymptomRef{drops.At(10)}})
	}
	return rules
}

// TestNextEvidenceCollected holds that a command the collector ran on a
// node with status 0 is not asked of it again (empty, or read when its
// output was), nor one it skipped there (with why), that one which failed
// is asked again, and that a node without a manifest is asked as before.
func TestNextEvidenceCollected(t *testing.T) {
	snap, res := collectedCase()
	got := map[string]report.NextEvidence{}
	for _, e := range report.NextEvidenceFor(snap, nil, res) {
		got[e.Command] = e
	}
	sysctl, _ := collect.Lookup("sysctl-net")
	for _, w := range []struct {
		command   string
		nodes     []string
		collected []report.Collected
		asks      bool
	}{
		{"ip-neigh", []string{"node2", "node3"}, []report.Collected{
			{Node: "node1", Outcome: report.CollectedEmpty}, {Node: "node2", Outcome: report.CollectedFailed, Status: 2}}, true},
		{"ipvsadm", []string{"node3"}, []report.Collected{
			{Node: "node1", Outcome: report.CollectedSkipped, Why: "absent: /proc/net/ip_vs"},
			{Node: "node2", Outcome: report.CollectedSkipped, Why: "ipvsadm not found"}}, true},
		{"iptables-save", []string{"node2", "node3"}, []report.Collected{{Node: "node1", Outcome: report.CollectedEmpty}}, true},
		{"sysctl-net", []string{}, []report.Collected{{Node: "node1", Outcome: report.CollectedRead}}, false},
	} {
		e, ok := got[w.command]
		if !ok {
			t.Errorf("%s not listed: %+v", w.command, got)
			continue
		}
		if !slices.Equal(e.Nodes, w.nodes) || !slices.Equal(e.Collected, w.collected) || e.Asks() != w.asks {
			t.Errorf("%s: nodes %v, collected %+v, asks %v; want %v, %+v, %v", w.command, e.Nodes, e.Collected, e.Asks(), w.nodes, w.collected, w.asks)
		}
	}

	r := report.New(snap, nil, res)
	r.NextEvidence = report.NextEvidenceFor(snap, nil, res)
	var table, md, js, html bytes.Buffer
	for f, b := range map[string]*bytes.Buffer{"table": &table, "markdown": &md, "json": &js, "html": &html} {
		if err := report.Write(b, f, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{
		"  To decide, run:\n    " + sysctl.Shell + "\n",
		"  # on node2, node3; collected on node1: empty; failed on node2 (exit status 2); lets neigh run\n  ip neigh\n",
		"  # on node3; not collected on node1: absent: /proc/net/ip_vs; not collected on node2: ipvsadm not found; lets ipvs run\n  ipvsadm -Ln\n",
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if want := "- `ip neigh`: on node2, node3; collected on node1: empty;"; !strings.Contains(md.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, md.String())
	}
	if want := "on node2, node3; collected on node1: empty; failed on node2 (exit status 2)"; !strings.Contains(html.String(), want) {
		t.Errorf("html lacks %q", want)
	}
	for _, want := range []string{`"outcome": "empty"`, `"outcome": "skipped"`, `"why": "ipvsadm not found"`, `"status": 2`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("json lacks %q:\n%s", want, js.String())
		}
	}
}

// TestNextEvidenceAllCollected holds that when every node has the
// command collected empty, it is not asked of "the nodes" either.
func TestNextEvidenceAllCollected(t *testing.T) {
	snap := &model.Snapshot{
		Inputs:      []model.Input{{Path: "n1/sysctl.txt", Kind: model.KindSysctl, Node: "n1"}},
		Collections: []model.Collection{{Node: "n1", Ran: []model.CollectedRun{{Name: "ip-neigh"}}}},
	}
	res := analyzer.Result{Skipped: []analyzer.Skipped{{Rule: "neigh", Missing: []model.Kind{model.KindNeighbors}}}}
	next := report.NextEvidenceFor(snap, nil, res)
	if len(next) != 1 || next[0].Command != "ip-neigh" || len(next[0].Nodes) != 0 || next[0].Asks() {
		t.Fatalf("next evidence %+v, want ip-neigh asked of no node", next)
	}
	r := report.New(snap, nil, res)
	r.NextEvidence = next
	var table bytes.Buffer
	if err := report.Write(&table, "table", r); err != nil {
		t.Fatal(err)
	}
	// Without a finding, nothing is left to decide: no command is listed.
	if strings.Contains(table.String(), "ip neigh") {
		t.Errorf("table lists a command for a report without findings:\n%s", table.String())
	}
}
