package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// bundleDir copies committed bundles into a new directory: the three node
// collectors of parse/testdata/bundles (sosreport, Rancher, EKS) as
// directories, and an incident and its control as archives.
func bundleDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	trees := filepath.Join(testutil.Root(), "parse", "testdata", "bundles")
	for _, d := range []string{"sosreport-node-a-2026-11-22-nmbdlaa", "node-b-2026-11-22_10_11_12", "eks_i-0nmbdl0000000000a_2026-11-22_1011-UTC_0.7.3"} {
		if err := os.CopyFS(filepath.Join(dir, d), os.DirFS(filepath.Join(trees, d))); err != nil {
			t.Fatal(err)
		}
	}
	for _, inc := range []string{"ephemeral-nodeport", "ephemeral-nodeport-control"} {
		if err := os.WriteFile(filepath.Join(dir, inc+".tar.gz"), testutil.TarGzDir(t, fixture("incidents/"+inc)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// batchLines runs batch and returns its lines as "bundle status findings",
// bundles relative to dir.
func batchLines(t *testing.T, dir string, args ...string) (code int, lines []string, stderr string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, stderr = runCLI(t, append([]string{"batch", "--out", out}, args...)...)
	if code == exitUsage {
		return code, nil, stderr
	}
	for _, r := range readJSONL(t, out) {
		rel, _ := filepath.Rel(dir, r.Bundle)
		lines = append(lines, filepath.ToSlash(rel)+" "+r.Status+" "+count(len(r.Findings), "finding"))
	}
	slices.Sort(lines)
	return code, lines, stderr
}

// TestBatchDirectoryOfBundles: a directory of bundles gives a line per
// bundle, and says so; --as-one gives one line for the directory, as
// analyze reads it.
func TestBatchDirectoryOfBundles(t *testing.T) {
	dir := bundleDir(t)
	code, lines, stderr := batchLines(t, dir, dir)
	want := []string{
		"eks_i-0nmbdl0000000000a_2026-11-22_1011-UTC_0.7.3 ok 1 finding",
		"ephemeral-nodeport-control.tar.gz ok 0 findings",
		"ephemeral-nodeport.tar.gz ok 2 findings",
		"node-b-2026-11-22_10_11_12 ok 0 findings",
		"sosreport-node-a-2026-11-22-nmbdlaa ok 1 finding",
	}
	if code != exitFindings || !slices.Equal(lines, want) {
		t.Errorf("exit %d, lines %q, want %d and %q\n%s", code, lines, exitFindings, want, stderr)
	}
	if note := dir + ": 5 bundles, each analyzed on its own; --as-one to analyze " + dir + " as one bundle"; !strings.Contains(stderr, note) {
		t.Errorf("stderr does not say %q:\n%s", note, stderr)
	}
	if _, _, stderr := batchLines(t, dir, "-q", dir); strings.Contains(stderr, "each analyzed on its own") {
		t.Errorf("-q still notes the split:\n%s", stderr)
	}

	code, lines, stderr = batchLines(t, dir, "--as-one", dir)
	if code != exitFindings || len(lines) != 1 || !strings.HasPrefix(lines[0], ". ok ") {
		t.Errorf("--as-one: exit %d, lines %q, want the directory as one bundle\n%s", code, lines, stderr)
	}

	// A folder around the directory is looked into.
	outer := t.TempDir()
	inner := filepath.Join(outer, "bundles")
	if err := os.Rename(dir, inner); err != nil {
		t.Fatal(err)
	}
	if _, lines, _ = batchLines(t, inner, outer); !slices.Equal(lines, want) {
		t.Errorf("a folder around the bundles: lines %q, want %q", lines, want)
	}

	// analyze reads the directory as one bundle, and says what it holds.
	code, _, stderr = runCLI(t, "analyze", inner)
	if code != exitFindings || !strings.Contains(stderr, inner+" holds 5 bundles (") ||
		!strings.Contains(stderr, "netmortem batch analyzes each on its own") {
		t.Errorf("analyze DIR: exit %d, stderr:\n%s", code, stderr)
	}
	if _, _, stderr = runCLI(t, "analyze", "-q", inner); strings.Contains(stderr, "holds 5 bundles") {
		t.Errorf("analyze -q still notes the bundles:\n%s", stderr)
	}
}

// TestBatchDirectoryMixed: bundles with evidence beside them could be one
// incident's or several: refused until --as-one or the bundles named.
func TestBatchDirectoryMixed(t *testing.T) {
	dir := bundleDir(t)
	kubectl, err := os.ReadFile(filepath.Join(testutil.Root(), "parse", "testdata", "bundles", "kubectl-services.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "kubectl-services.json"), kubectl, 0o644)
	// Neither a file no format reads nor a hidden one counts.
	os.WriteFile(filepath.Join(dir, "README"), []byte("tickets of the week\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".netmortem.yaml"), []byte("ignore: []\n"), 0o644)
	code, _, stderr := batchLines(t, dir, dir)
	if code != exitUsage || !strings.Contains(stderr, "holds 5 bundles (") || !strings.Contains(stderr, "and 1 other input beside them (kubectl-services.json)") ||
		!strings.Contains(stderr, "--as-one analyzes "+dir+" as one bundle") {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
	}
	if code, lines, stderr := batchLines(t, dir, "--as-one", dir); code != exitFindings || len(lines) != 1 {
		t.Errorf("--as-one: exit %d, lines %q\n%s", code, lines, stderr)
	}
	os.Remove(filepath.Join(dir, "kubectl-services.json"))
	if code, lines, stderr := batchLines(t, dir, dir); code != exitFindings || len(lines) != 5 {
		t.Errorf("without the kubectl dump: exit %d, lines %q\n%s", code, lines, stderr)
	}
}

// TestBatchDirectoryOneBundle: a bundle with a layout, a ticket's folder
// (one archive and files beside it) and a directory of loose files are
// one bundle each, as before.
func TestBatchDirectoryOneBundle(t *testing.T) {
	dir := bundleDir(t)
	sos := filepath.Join(dir, "sosreport-node-a-2026-11-22-nmbdlaa")
	ticket := t.TempDir()
	os.Rename(filepath.Join(dir, "ephemeral-nodeport.tar.gz"), filepath.Join(ticket, "bundle.tar.gz"))
	sysctl, _ := os.ReadFile(filepath.Join(incident, "sysctl.txt"))
	os.WriteFile(filepath.Join(ticket, "sysctl-node2.txt"), sysctl, 0o644)
	for _, b := range []string{sos, ticket, incident} {
		code, lines, stderr := batchLines(t, b, b)
		if code == exitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], ". ok") || strings.Contains(stderr, "on its own") {
			t.Errorf("%s: exit %d, lines %q\n%s", b, code, lines, stderr)
		}
	}
}

// TestBatchOutInsideDirectory: the batch's own --out, written inside the
// directory it splits, is no evidence beside the bundles: the directory is
// still split when it is resumed.
func TestBatchOutInsideDirectory(t *testing.T) {
	dir := bundleDir(t)
	out := filepath.Join(dir, "results.jsonl")
	if code, _, stderr := runCLI(t, "batch", "-q", "--out", out, dir); code != exitFindings {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	// Resumed, with the file inside: every bundle is done already.
	if code, _, stderr := runCLI(t, "batch", "--resume", "--out", out, dir); code != exitOK || !strings.Contains(stderr, "5 bundles: 0 analyzed now, 5 already done") {
		t.Fatalf("--resume: exit %d\n%s", code, stderr)
	}
	if n := len(readJSONL(t, out)); n != 5 {
		t.Errorf("%d lines, want 5", n)
	}
}
