package inspect

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// A rule runs when the bundle has the evidence it needs, and is skipped,
// with what it lacks, when not; the capture whose header could not be
// read is listed.
func TestInspect(t *testing.T) {
	snap := &model.Snapshot{
		Inputs: []model.Input{
			{Path: "b/n1/sysctl.txt", Format: "sysctl", Kind: model.KindSysctl, Node: "n1", Records: 1},
			{Path: "b/n1/bad.pcap", Format: "pcap", Kind: model.KindCapture, Node: "n1"},
			{Path: "b/README", Skipped: "unrecognized content"},
		},
		Sysctls: []model.Sysctl{{Node: "n1", Name: "net.ipv4.ip_forward", Value: "1", Pos: model.Pos{File: "b/n1/sysctl.txt", Line: 1}}},
	}
	noop := func(*analyzer.Pass) error { return nil }
	rs := []*analyzer.Rule{
		{Name: "needs-sysctl", Doc: "Needs sysctls.", Needs: []model.Kind{model.KindSysctl}, Run: noop},
		{Name: "needs-netfilter", Doc: "Needs rules.", Needs: []model.Kind{model.KindNetfilter}, Run: noop},
	}
	in := Inspect(context.Background(), snap, nil, rs)
	if !slices.Equal(in.Runnable, []string{"needs-sysctl"}) || len(in.Skipped) != 1 || in.Skipped[0].Rule != "needs-netfilter" {
		t.Errorf("runnable %v, skipped %+v", in.Runnable, in.Skipped)
	}
	if !slices.Equal(in.Unreadable, []string{"b/n1/bad.pcap"}) || len(in.Inputs) != 3 {
		t.Errorf("unreadable %v, %d inputs", in.Unreadable, len(in.Inputs))
	}
	if len(in.ToCollect) == 0 || !slices.Contains(in.ToCollect[0].Lacks, model.KindNetfilter) {
		t.Errorf("to collect: %+v", in.ToCollect)
	}
	var b bytes.Buffer
	if err := in.WriteTable(&b, 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"node n1, folder b/n1/", "no node, folder b/", "capture header unreadable",
		"1 file read, 1 skipped, 0 warnings.", "Rules that can run: needs-sysctl\n", "  needs-netfilter: needs netfilter\n",
		"To collect:\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// A file that concatenates several nodes' outputs has the nodes of its
// records; the Kubernetes objects' nodes are where pods run, not counted.
func TestRecordNodes(t *testing.T) {
	pos := func(f string) model.Pos { return model.Pos{File: f, Line: 1} }
	snap := &model.Snapshot{Sysctls: []model.Sysctl{
		{Node: "node1", Name: "a", Pos: pos("all.txt")}, {Node: "node2", Name: "a", Pos: pos("all.txt")},
		{Node: "node1", Name: "b", Pos: pos("all.txt")}, {Name: "a", Pos: pos("plain.txt")},
	}}
	got := RecordNodes(snap)
	if !slices.Equal(got["all.txt"], []string{"node1", "node2"}) || len(got["plain.txt"]) != 0 || len(got) != 1 {
		t.Errorf("RecordNodes = %v", got)
	}
	if c := nodeCell(model.Input{Path: "all.txt"}, got); c != "node1,node2" {
		t.Errorf("nodeCell = %q", c)
	}
}

// Next evidence is grouped by node, then every node, then the cluster;
// a command the collector ran on a node is not asked of it again.
func TestPerNode(t *testing.T) {
	next := []report.NextEvidence{
		{Command: "kubectl-get", Shell: "kubectl get svc -A -o json", Scope: collect.ScopeCluster, Kind: model.KindKube},
		{Command: "ip-neigh", Shell: "ip neigh", Scope: collect.ScopeNode, Kind: model.KindNeighbors, Unblocks: []string{"arp-rule"}},
		{Command: "iptables-save", Shell: "iptables-save", Scope: collect.ScopeNode, Kind: model.KindNetfilter, Nodes: []string{"n2"},
			Joins:     []string{"nat-rule"},
			Collected: []report.Collected{{Node: "n1", Outcome: report.CollectedEmpty}}},
	}
	g := perNode(next)
	if len(g) != 4 || g[0].Node != "n1" || g[1].Node != "n2" || g[2].Node != "" || g[2].Scope != collect.ScopeNode || g[3].Scope != collect.ScopeCluster {
		t.Fatalf("groups %+v", g)
	}
	if len(g[0].Commands) != 0 || len(g[0].Collected) != 1 || collectedLine(g[0].Collected[0]) != "iptables-save: collected, empty" {
		t.Errorf("n1: %+v", g[0])
	}
	if collectHeading(g[1]) != "node n2: lacks netfilter" || collectWhy(g[1].Commands[0]) != "used by nat-rule" {
		t.Errorf("n2: %q, %q", collectHeading(g[1]), collectWhy(g[1].Commands[0]))
	}
	if collectHeading(g[3]) != "the cluster (once, with kubectl): lacks kube" || collectWhy(g[2].Commands[0]) != "lets arp-rule run" {
		t.Errorf("cluster: %q; every node: %q", collectHeading(g[3]), collectWhy(g[2].Commands[0]))
	}
}

func TestSkippedSummary(t *testing.T) {
	snap := &model.Snapshot{Inputs: []model.Input{{Path: "a"}, {Path: "b", Skipped: "empty"}, {Path: "c", Skipped: "unrecognized content"},
		{Path: "d", Skipped: "unrecognized content"}}}
	want := "skipped 3 files (unrecognized content: 2; empty: 1): b, c, d; netmortem inspect dir 'my bundle' 'it'\\''s' lists what was read and skipped, file by file"
	if got := SkippedSummary(snap, []string{"dir", "my bundle", "it's"}); got != want {
		t.Errorf("SkippedSummary =\n%s\nwant\n%s", got, want)
	}
	if got := SkippedSummary(&model.Snapshot{Inputs: []model.Input{{Path: "a"}}}, []string{"a"}); got != "" {
		t.Errorf("nothing skipped: %q", got)
	}
}

func TestInputDir(t *testing.T) {
	for p, want := range map[string]string{
		"bundle/n1/sysctl.txt":           "bundle/n1",
		"s3://bucket/t/1.tar.gz!a/b.txt": "s3://bucket/t/1.tar.gz!a",
		"s3://bucket":                    "s3:",
		"dir/a://b/c":                    "dir/a:/b",
		"sysctl.txt":                     ".",
	} {
		if got := inputDir(p); got != want {
			t.Errorf("inputDir(%q) = %q, want %q", p, got, want)
		}
	}
}

// At 80 columns the names of files and formats are kept whole (seed 002's
// files): the EVIDENCE column, which the format implies, is left out and
// said so once; with room, it is there.
func TestWriteTableKeepsNamesWhole(t *testing.T) {
	inputs := []model.Input{
		{Path: "s/kube-apiserver-flags.txt", Format: "component-flags", Kind: model.KindComponents, Records: 1},
		{Path: "s/probe-failure.tshark.txt", Format: "tshark-text", Kind: model.KindCapture, Records: 6},
		{Path: "s/ss-timewait.txt", Format: "ss", Kind: model.KindSockets, Records: 14, Details: map[string]int{"sockets": 11, "socket counts": 3}},
		{Path: "s/ipvsadm.txt", Format: "ipvsadm", Kind: model.KindIPVS, Records: 33, Details: map[string]int{"services": 33}},
	}
	in := Inspect(context.Background(), &model.Snapshot{Inputs: inputs}, nil, nil)
	var b bytes.Buffer
	if err := in.WriteTable(&b, 80); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"│ component-flags │", "│ tshark-text     │", "services=33 ", "EVIDENCE, the kind of each format, is not shown"} {
		if !strings.Contains(out, want) {
			t.Errorf("at 80 columns, no %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "is not shown") != 1 || strings.Contains(out, "│ components") {
		t.Errorf("at 80 columns:\n%s", out)
	}
	b.Reset()
	if err := in.WriteTable(&b, 120); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "EVIDENCE") || strings.Contains(b.String(), "is not shown") {
		t.Errorf("at 120 columns:\n%s", b.String())
	}
}

// A file at the root is in folder "/", not "//", and a bundle no rule can
// run on says so.
func TestWriteTableRootNoRules(t *testing.T) {
	snap := &model.Snapshot{Inputs: []model.Input{{Path: "/nonexistent", Skipped: "no such file or directory"}}}
	noop := func(*analyzer.Pass) error { return nil }
	in := Inspect(context.Background(), snap, nil, []*analyzer.Rule{{Name: "r", Doc: "R.", Needs: []model.Kind{model.KindSysctl}, Run: noop}})
	var b bytes.Buffer
	if err := in.WriteTable(&b, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no node, folder /\n", "│ nonexistent │", "Rules that can run: none\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}

// TestSkippedSummaryDirectories checks that a directory the run did not
// reach, listed with a separator at its end, is counted as a directory.
func TestSkippedSummaryDirectories(t *testing.T) {
	const why = model.SkippedCutShort
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{[]string{"b/"}, "skipped 1 directory (" + why + "): b/"},
		{[]string{"a.txt", "b/"}, "skipped 1 file and 1 directory (" + why + "): a.txt, b/"},
		{[]string{"b/", "c/"}, "skipped 2 directories (" + why + "): b/, c/"},
		{[]string{"a.txt", "x.txt", "b/", "c/"}, "skipped 2 files and 2 directories (" + why + ")"},
	} {
		snap := &model.Snapshot{}
		for _, p := range c.paths {
			snap.Inputs = append(snap.Inputs, model.Input{Path: p, Skipped: why})
		}
		if got, _ := SkippedParts(snap, []string{"x"}); got != c.want {
			t.Errorf("%v: %q, want %q", c.paths, got, c.want)
		}
	}
}
