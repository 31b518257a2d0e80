package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/inspect"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// twoNodeBundle writes a bundle of two Rancher node collections: node1
// with sysctl and iptables-save output, node2 with iptables-save only.
func twoNodeBundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sysctl, err := os.ReadFile(fixture("incidents/ephemeral-nodeport/sysctl.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile(fixture("incidents/stale-dnat/iptables-save.txt"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteTree(t, dir, map[string]string{
		"n1/systeminfo/hostname": "node1\n", "n1/systeminfo/sysctla": string(sysctl), "n1/networking/iptablessave": string(rules),
		"n2/systeminfo/hostname": "node2\n", "n2/networking/iptablessave": string(rules),
	})
	return dir
}

// TestInspectToCollect holds that inspect lists, per node, what the node
// lacks and the catalog's command to run there: node2 lacks the sysctl
// output node1 has, both lack sockets, and the cluster its objects.
func TestInspectToCollect(t *testing.T) {
	dir := twoNodeBundle(t)
	code, out, stderr := runCLI(t, "inspect", "-o", "json", dir)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var in inspect.Inspection
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatal(err)
	}
	group := func(node string, scope collect.Scope) inspect.NodeCollect {
		t.Helper()
		for _, g := range in.ToCollect {
			if g.Node == node && g.Scope == scope {
				return g
			}
		}
		t.Fatalf("to_collect has no group for node %q (%s): %+v", node, scope, in.ToCollect)
		return inspect.NodeCollect{}
	}
	shells := func(g inspect.NodeCollect) []string {
		var out []string
		for _, c := range g.Commands {
			out = append(out, c.Shell)
		}
		return out
	}
	sysctl, _ := collect.Lookup("sysctl-net")
	ss, _ := collect.Lookup("ss-tanpi")
	kubectl, _ := collect.Lookup("kubectl-objects")
	n1, n2 := group("node1", collect.ScopeNode), group("node2", collect.ScopeNode)
	if !slices.Contains(n2.Lacks, model.KindSysctl) || !slices.Contains(shells(n2), sysctl.Shell) {
		t.Errorf("node2 lacks %v, commands %v: want sysctl and %q", n2.Lacks, shells(n2), sysctl.Shell)
	}
	if slices.Contains(n1.Lacks, model.KindSysctl) || slices.Contains(shells(n1), sysctl.Shell) {
		t.Errorf("node1, which has sysctl output, is asked for it: %v", shells(n1))
	}
	for _, g := range []inspect.NodeCollect{n1, n2} {
		if !slices.Contains(shells(g), ss.Shell) || slices.Contains(g.Lacks, model.KindNetfilter) {
			t.Errorf("node %s: lacks %v, commands %v; want sockets (%q) and not netfilter", g.Node, g.Lacks, shells(g), ss.Shell)
		}
	}
	if c := group("", collect.ScopeCluster); !slices.Contains(shells(c), kubectl.Shell) {
		t.Errorf("the cluster's commands %v lack %q", shells(c), kubectl.Shell)
	}
	for _, e := range in.NextEvidence {
		if e.Command == "sysctl-net" && !slices.Equal(e.Nodes, []string{"node2"}) {
			t.Errorf("next_evidence asks sysctl of %v, want node2", e.Nodes)
		}
	}

	t.Setenv("COLUMNS", "80")
	code, table, stderr := runCLI(t, "inspect", dir)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	_, tail, ok := strings.Cut(table, "\nTo collect:\n")
	if !ok {
		t.Fatalf("inspect's table has no To collect section:\n%s", table)
	}
	for _, want := range []string{"  node node2: lacks ", "    $ " + sysctl.Shell + "\n", "  the cluster (once, with kubectl): lacks kube"} {
		if !strings.Contains(tail, want) {
			t.Errorf("To collect lacks %q:\n%s", want, tail)
		}
	}
	// A command is printed whole on its line, however wide.
	for _, l := range tooWide(t, tail, 80) {
		t.Errorf("To collect: a line is %d columns wide at 80: %q", len([]rune(l)), l)
	}
}

// collectedBundle writes a bundle as netmortem's collector makes it, of
// node-7: its sysctl output read, ip neigh run with nothing printed, and
// ipvsadm skipped, the ip_vs module not loaded.
func collectedBundle(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "netmortem-node-7-20260101T000000Z")
	sysctl, _ := collect.Lookup("sysctl-net")
	neigh, _ := collect.Lookup("ip-neigh")
	testutil.WriteTree(t, dir, map[string]string{
		collect.ManifestFile: "format\tnetmortem-collect\nscript-version\t1\nnode\tnode-7\n" +
			"ran\tsysctl-net\t0\tnode-7/sysctl.txt\t" + sysctl.Shell + "\n" +
			"ran\tip-neigh\t0\t-\t" + neigh.Shell + "\n" +
			"skipped\tipvsadm\tabsent: /proc/net/ip_vs\n",
		"node-7/sysctl.txt": "net.ipv4.ip_forward = 1\nnet.ipv4.ip_local_port_range = 32768\t60999\n",
	})
	return dir
}

// TestCollectedNotAskedAgain holds that inspect and analyze do not ask a
// node for a command netmortem's collector ran there with nothing to
// read, nor for one it skipped there, and say what came of each.
func TestCollectedNotAskedAgain(t *testing.T) {
	dir := collectedBundle(t)
	code, out, stderr := runCLI(t, "inspect", "-o", "json", dir)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var in inspect.Inspection
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]string{}
	for _, g := range in.ToCollect {
		for _, c := range g.Commands {
			if c.Command == "ip-neigh" || c.Command == "ipvsadm" {
				t.Errorf("to_collect asks %s of %q (%s): %+v", c.Command, g.Node, g.Scope, g)
			}
		}
		if g.Node == "node-7" {
			for _, c := range g.Collected {
				outcomes[c.Command] = c.Outcome + " " + c.Why
			}
		}
	}
	for command, want := range map[string]string{"ip-neigh": "empty ", "ipvsadm": "skipped absent: /proc/net/ip_vs"} {
		if outcomes[command] != want {
			t.Errorf("to_collect of node-7 says %s %q, want %q (collected %v)", command, outcomes[command], want, outcomes)
		}
	}

	t.Setenv("COLUMNS", "100")
	code, table, stderr := runCLI(t, "inspect", dir)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if want := "    ip neigh: collected, empty\n"; !strings.Contains(table, want) {
		t.Errorf("inspect's table lacks %q:\n%s", want, table)
	}

	code, out, stderr = runCLI(t, "analyze", "-o", "json", dir)
	if code != exitOK && code != exitFindings {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var rep struct {
		Warnings     []any                 `json:"warnings"`
		NextEvidence []report.NextEvidence `json:"next_evidence"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings %v, want none", rep.Warnings)
	}
	seen := map[string]bool{}
	for _, e := range rep.NextEvidence {
		if e.Command != "ip-neigh" && e.Command != "ipvsadm" {
			continue
		}
		seen[e.Command] = true
		if len(e.Nodes) != 0 || e.Asks() || len(e.Collected) != 1 || e.Collected[0].Node != "node-7" {
			t.Errorf("next_evidence %s: nodes %v, collected %+v; want node-7 not asked, its outcome said", e.Command, e.Nodes, e.Collected)
		}
	}
	if !seen["ip-neigh"] || !seen["ipvsadm"] {
		t.Errorf("next_evidence %+v lacks ip-neigh or ipvsadm", rep.NextEvidence)
	}
}
