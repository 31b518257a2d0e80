package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// copyIncidents copies committed incident folders (each one ticket's loose
// files) into dir.
func copyIncidents(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.CopyFS(filepath.Join(dir, n), os.DirFS(fixture("incidents/"+n))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBatchDirectoryOfTickets: folders of loose files that each hold a
// cluster's evidence (Kubernetes objects) and a host's are tickets: each is
// analyzed on its own, with the findings it has alone.
func TestBatchDirectoryOfTickets(t *testing.T) {
	tickets := []string{"stale-dnat", "ephemeral-nodeport", "probe-restart-loop", "lb-conflict"}
	dir := t.TempDir()
	copyIncidents(t, dir, tickets...)
	code, lines, stderr := batchLines(t, dir, dir)
	// Each folder alone, as the reference.
	var want []string
	for _, n := range tickets {
		_, alone, _ := batchLines(t, filepath.Dir(fixture("incidents/"+n)), "-q", fixture("incidents/"+n))
		want = append(want, alone...)
	}
	slices.Sort(want)
	if code != exitFindings || !slices.Equal(lines, want) || !strings.Contains(stderr, "4 folders, each with its own cluster's evidence") {
		t.Errorf("exit %d, lines %q, want %q\n%s", code, lines, want, stderr)
	}
	if code, lines, stderr := batchLines(t, dir, "-q", "--as-one", dir); code != exitFindings || len(lines) != 1 {
		t.Errorf("--as-one: exit %d, lines %q\n%s", code, lines, stderr)
	}
	// analyze reads them as one, and says how many bundles it merged.
	if _, _, stderr := runCLI(t, "analyze", dir); !strings.Contains(stderr, "holds 4 bundles") {
		t.Errorf("analyze does not say it merges 4 tickets:\n%s", stderr)
	}
}

// TestBatchIncidentFixtures: fixtures/incidents, folders each with a
// cluster's evidence or only a host's, gives one line per folder.
func TestBatchIncidentFixtures(t *testing.T) {
	dir := fixture("incidents")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		if e.IsDir() {
			want = append(want, e.Name())
		}
	}
	if some := sampled(t, want); len(some) < len(want) {
		// Under -race, a directory of some of them, copied.
		tmp := t.TempDir()
		for _, name := range some {
			if err := os.CopyFS(filepath.Join(tmp, name), os.DirFS(filepath.Join(dir, name))); err != nil {
				t.Fatal(err)
			}
		}
		dir, want = tmp, some
	}
	code, lines, stderr := batchLines(t, dir, "-q", dir)
	var got []string
	for _, l := range lines {
		name, _, _ := strings.Cut(l, " ")
		got = append(got, name)
	}
	if code != exitFindings || !slices.Equal(got, want) {
		t.Errorf("batch %s: exit %d, bundles %q, want one per folder %q\n%s", dir, code, got, want, stderr)
	}
}

// TestBatchDirectoryOfNodeFolders: node folders (a host's evidence only)
// beside the cluster's evidence are one bundle, without a note; tickets
// (folders with a cluster's evidence) beside folders of a host's evidence
// are each a bundle; folders of a host's evidence alone, or one ticket
// beside node folders, could be one incident or several: refused, naming
// --as-one and DIR/*.
func TestBatchDirectoryOfNodeFolders(t *testing.T) {
	src := fixture("incidents/stale-dnat")
	nodes := t.TempDir()
	place := func(dir string, files map[string]string) {
		for name, dst := range files {
			b, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(dir, filepath.Dir(dst)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	place(nodes, map[string]string{"capture.pcap": "node1/capture.pcap", "iptables-save.txt": "node1/iptables-save.txt",
		"iptables-nat-nvL.txt": "node2/iptables-nat-nvL.txt", "service-kube-dns.json": "kubectl/service-kube-dns.json",
		"endpoints-kube-dns.json": "kubectl/endpoints-kube-dns.json"})
	code, lines, stderr := batchLines(t, nodes, nodes)
	if code != exitFindings || len(lines) != 1 || !strings.HasPrefix(lines[0], ". ok") || strings.Contains(stderr, "netmortem batch: "+nodes) {
		t.Errorf("node folders and a kubectl folder: exit %d, lines %q\n%s", code, lines, stderr)
	}
	// The cluster's objects beside the node folders, as files: the same.
	beside := t.TempDir()
	place(beside, map[string]string{"capture.pcap": "node1/capture.pcap", "iptables-save.txt": "node1/iptables-save.txt",
		"iptables-nat-nvL.txt": "node2/iptables-nat-nvL.txt", "service-kube-dns.json": "service-kube-dns.json",
		"endpoints-kube-dns.json": "endpoints-kube-dns.json"})
	if code, lines, stderr := batchLines(t, beside, beside); code != exitFindings || len(lines) != 1 {
		t.Errorf("node folders and the cluster's files: exit %d, lines %q\n%s", code, lines, stderr)
	}

	hostOnly := t.TempDir()
	copyIncidents(t, hostOnly, "connection-skew", "mtu-blackhole", "nat-hairpin")
	mixed := t.TempDir()
	copyIncidents(t, mixed, "stale-dnat", "ephemeral-nodeport", "connection-skew")
	if code, lines, stderr := batchLines(t, mixed, mixed); code != exitFindings || len(lines) != 3 ||
		!strings.Contains(stderr, "3 folders, 2 with a cluster's evidence (Kubernetes objects) and 1 with a host's only") {
		t.Errorf("tickets and a host's folder: exit %d, lines %q, want 3\n%s", code, lines, stderr)
	}
	ticketAndNode := t.TempDir()
	copyIncidents(t, ticketAndNode, "stale-dnat")
	place(ticketAndNode, map[string]string{"iptables-save.txt": "node2/iptables-save.txt"})
	for _, dir := range []string{hostOnly, ticketAndNode} {
		code, _, stderr := batchLines(t, dir, dir)
		if code != exitUsage || !strings.Contains(stderr, "--as-one analyzes "+dir+" as one bundle") ||
			!strings.Contains(stderr, filepath.Join(dir, "*")+" analyzes each entry on its own") {
			t.Errorf("%s: exit %d, want %d and --as-one and DIR/* named\n%s", dir, code, exitUsage, stderr)
		}
		if code, lines, stderr := batchLines(t, dir, "-q", "--as-one", dir); code == exitUsage || len(lines) != 1 {
			t.Errorf("%s --as-one: exit %d, lines %q\n%s", dir, code, lines, stderr)
		}
	}
	// DIR/*: each folder on its own.
	if code, lines, stderr := batchLines(t, hostOnly, "-q", filepath.Join(hostOnly, "*")); code == exitUsage || len(lines) != 3 {
		t.Errorf("DIR/*: exit %d, lines %q\n%s", code, lines, stderr)
	}
}
