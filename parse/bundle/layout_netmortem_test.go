package bundle_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/bundle"
)

// A bundle written by netmortem's collector: its manifest is listed as
// the collector's, the node's directory gives the node, the cluster's
// directory none, and each file gets the command the manifest records; a
// value the collector redacted is dropped without a warning.
func TestNetmortemCollectLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "netmortem-node-7-20260101T000000Z")
	files := map[string]string{
		collect.ManifestFile: "format\tnetmortem-collect\nscript-version\t1\nnode\tnode-7\n" +
			"ran\tsysctl-net\t0\tnode-7/sysctl.txt\tsysctl -a 2>/dev/null | grep '^net\\.'\n" +
			"ran\tiptables-nat\t0\tnode-7/iptables-nat.txt\tiptables -t nat -nvxL --line-numbers\n" +
			"ran\tkubectl-objects\t0\tcluster/objects.json\tkubectl get services -A -o json\n",
		"node-7/sysctl.txt": "net.ipv4.ip_local_port_range = 32768\t60999\n",
		"node-7/iptables-nat.txt": "Chain KUBE-SERVICES (2 references)\n" +
			"num      pkts      bytes target     prot opt in     out     source               destination\n",
		"cluster/objects.json": `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Service",
 "metadata": {"name": "web", "namespace": "default", "annotations": {"token": "***HIDDEN***"}},
 "spec": {"clusterIP": "10.96.0.10", "ports": [{"port": 80, "protocol": "TCP"}]}}]}
`,
	}
	testutil.WriteTree(t, dir, files)
	snap, warns := open(t, filepath.Dir(dir), nil)
	for _, w := range warns {
		t.Errorf("warning: %v", w)
	}
	type got struct{ node, command, layout, skipped, format string }
	inputs := map[string]got{}
	for _, in := range snap.Inputs {
		rel, _ := filepath.Rel(dir, in.Path)
		inputs[filepath.ToSlash(rel)] = got{in.Node, in.Command, in.Layout, in.Skipped, strings.TrimPrefix(in.Format, "test-")}
	}
	want := map[string]got{
		collect.ManifestFile:      {"", "", bundle.LayoutNetmortem, bundle.ManifestSkipped, ""},
		"node-7/sysctl.txt":       {"node-7", "sysctl -a 2>/dev/null | grep '^net\\.'", bundle.LayoutNetmortem, "", "sysctl"},
		"node-7/iptables-nat.txt": {"node-7", "iptables -t nat -nvxL --line-numbers", bundle.LayoutNetmortem, "", "iptables-list"},
		"cluster/objects.json":    {"", "kubectl get services -A -o json", bundle.LayoutNetmortem, "", "kube-json"},
	}
	for name, w := range want {
		if inputs[name] != w {
			t.Errorf("%s: %+v, want %+v", name, inputs[name], w)
		}
	}
	if len(inputs) != len(want) {
		t.Errorf("inputs %+v, want %d", inputs, len(want))
	}
	if len(snap.Kube.Services) != 1 || snap.Kube.Services[0].Annotations["token"] != "" {
		t.Errorf("services %+v: want web, its hidden annotation dropped", snap.Kube.Services)
	}
}

// The manifest of a collected bundle is kept as the node's Collection:
// the commands run, with their status and file, and those skipped, with
// why. A manifest that does not parse is a warning at its line and gives
// no Collection.
func TestNetmortemCollection(t *testing.T) {
	write := func(t *testing.T, manifest string) string {
		dir := filepath.Join(t.TempDir(), "netmortem-node-7-20260101T000000Z")
		testutil.WriteTree(t, dir, map[string]string{
			collect.ManifestFile: manifest,
			"node-7/sysctl.txt":  "net.ipv4.ip_forward = 1\n",
		})
		return dir
	}
	dir := write(t, "format\tnetmortem-collect\nscript-version\t3\nnode\tnode-7\n"+
		"ran\tsysctl-net\t0\tnode-7/sysctl.txt\tsysctl -a\n"+
		"ran\tip-neigh\t0\t-\tip neigh\n"+
		"ran\tconntrack-stats\t1\t-\tconntrack -S\n"+
		"skipped\tipvsadm\tip_vs not loaded\n")
	snap, warns := open(t, filepath.Dir(dir), nil)
	for _, w := range warns {
		t.Errorf("warning: %v", w)
	}
	if len(snap.Collections) != 1 {
		t.Fatalf("collections %+v, want 1", snap.Collections)
	}
	c := snap.Collections[0]
	wantRan := []model.CollectedRun{{Name: "sysctl-net", File: "node-7/sysctl.txt"}, {Name: "ip-neigh"}, {Name: "conntrack-stats", Status: 1}}
	wantSkipped := []model.CollectedSkip{{Name: "ipvsadm", Why: "ip_vs not loaded"}}
	if c.Node != "node-7" || c.ScriptVersion != "3" || !slices.Equal(c.Ran, wantRan) || !slices.Equal(c.Skipped, wantSkipped) ||
		c.Pos.File != filepath.Join(dir, collect.ManifestFile) {
		t.Errorf("collection %+v, want node-7, version 3, ran %+v, skipped %+v, at the manifest", c, wantRan, wantSkipped)
	}

	dir = write(t, "format\tnetmortem-collect\nnode\tnode-7\nran\tip-neigh\tok\t-\tip neigh\n")
	snap, warns = open(t, filepath.Dir(dir), nil)
	if len(snap.Collections) != 0 {
		t.Errorf("collections %+v from a bad manifest, want none", snap.Collections)
	}
	want := filepath.Join(dir, collect.ManifestFile) + ":3: ran line: expected an exit status"
	if len(warns) != 1 || !strings.HasPrefix(warns[0].Error(), want) {
		t.Errorf("warnings %v, want one %q", warns, want)
	}
}
