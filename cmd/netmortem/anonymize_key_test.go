package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/diff"
)

// The key may come from a file or from the environment, so that it is
// not in the process list: --anonymize-key wins over
// --anonymize-key-file, which wins over NETMORTEM_ANONYMIZE_KEY; the
// variable alone does not turn anonymization on.
func TestAnonymizeKeySources(t *testing.T) {
	dir := fixture("incidents/stale-dnat")
	run := func(args ...string) string {
		t.Helper()
		code, out, stderr := runCLI(t, append(append([]string{"analyze", "-q", "-o", "json", "--fail-on", "never"}, args...), dir)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stripTool(out)
	}
	tmp := t.TempDir()
	keyFile := filepath.Join(tmp, "key")
	if err := os.WriteFile(keyFile, []byte("k1\r\nignored second line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(keyEnv, "")
	k1, k2 := run("--anonymize-key", "k1"), run("--anonymize-key", "k2")
	if k1 == k2 || strings.Contains(k1, "10.96.0.10") {
		t.Fatal("two keys gave one report, or the address was kept")
	}
	if got := run("--anonymize-key-file", keyFile); got != k1 {
		t.Error("--anonymize-key-file holding k1: not the report of --anonymize-key k1")
	}
	t.Setenv(keyEnv, "k1")
	if got := run("--anonymize"); got != k1 {
		t.Errorf("--anonymize with %s=k1: not the report of --anonymize-key k1", keyEnv)
	}
	if got := run(); !strings.Contains(got, "10.96.0.10") {
		t.Errorf("%s alone anonymized the report", keyEnv)
	}
	if got := run("--anonymize-key", "k2"); got != k2 {
		t.Errorf("--anonymize-key k2 with %s=k1: not the report of k2", keyEnv)
	}
	t.Setenv(keyEnv, "k2")
	if got := run("--anonymize-key-file", keyFile); got != k1 {
		t.Errorf("--anonymize-key-file (k1) with %s=k2: not the report of k1", keyEnv)
	}
	if got := run("--anonymize-key", "k1", "--anonymize-key-file", filepath.Join(tmp, "missing")); got != k1 {
		t.Error("--anonymize-key k1 and a key file: not the report of k1")
	}

	empty := filepath.Join(tmp, "empty")
	if err := os.WriteFile(empty, []byte("\nk1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{empty: empty + ":1: expected the anonymization key", filepath.Join(tmp, "missing"): "--anonymize-key-file: open "} {
		code, _, stderr := runCLI(t, "analyze", "-q", "--anonymize-key-file", file, dir)
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("--anonymize-key-file %s: exit %d, stderr %q; want %d and %q", file, code, stderr, exitUsage, want)
		}
	}
}

// diff --anonymize replaces the addresses of both bundles with one
// mapping: each address of the plain diff is its one token as many times
// in the anonymized diff; the fingerprints are kept.
func TestAnonymizeDiff(t *testing.T) {
	old, new := fixture("incidents/stale-dnat-control"), fixture("incidents/stale-dnat")
	_, plain, _ := runCLI(t, "diff", "-o", "json", "--fail-on", "never", old, new)
	mapPath := filepath.Join(t.TempDir(), "map.json")
	code, anon, stderr := runCLI(t, "diff", "-o", "json", "--fail-on", "never", "--anonymize-key", "k", "--anonymize-map", mapPath, old, new)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p, a diff.Diff
	if err := json.Unmarshal([]byte(plain), &p); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(anon), &a); err != nil {
		t.Fatal(err)
	}
	fps := func(d diff.Diff) (out []string) {
		for _, l := range [][]diff.FindingRef{d.Findings.Appeared, d.Findings.Resolved, d.Findings.Unchanged} {
			for _, r := range l {
				out = append(out, r.Fingerprint)
			}
		}
		return out
	}
	if got, want := fps(a), fps(p); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("fingerprints %v anonymized, %v plain", got, want)
	}
	var mapping []struct{ Kind, Original, Token string }
	b, err := os.ReadFile(mapPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &mapping); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for _, m := range mapping {
		if m.Kind == "ip" {
			tokens[m.Original] = m.Token
		}
	}
	addrs := originalAddrs(plain)
	if len(addrs) < 2 {
		t.Fatalf("only %d addresses in the plain diff", len(addrs))
	}
	for addr := range addrs {
		tok, ok := tokens[addr]
		if !ok {
			t.Errorf("%s is in the plain diff, not in the mapping", addr)
			continue
		}
		if p, a := strings.Count(plain, addr), strings.Count(anon, tok); p != a || strings.Contains(anon, addr) {
			t.Errorf("%s: %d times plain, its token %s %d times anonymized", addr, p, tok, a)
		}
	}
}

// trace --anonymize: the destination and the DNAT targets become their
// tokens, the same with the same key in another run.
func TestAnonymizeTrace(t *testing.T) {
	args := []string{"trace", "--dst", "10.96.0.10:53", fixture("incidents/stale-dnat")}
	_, plain, _ := runCLI(t, args...)
	run := func() string {
		code, out, stderr := runCLI(t, append([]string{"trace", "--anonymize-key", "k"}, args[1:]...)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return out
	}
	a, b := run(), run()
	if a != b {
		t.Error("the same key gave two traces")
	}
	if !strings.Contains(plain, "10.244.2.7:53") || strings.Contains(a, "10.244.2.7") || strings.Contains(a, "10.96.0.10") {
		t.Errorf("addresses survive:\n%s", a)
	}
	if strings.Count(a, "DNAT at ") != strings.Count(plain, "DNAT at ") || strings.Count(plain, "DNAT at ") == 0 {
		t.Errorf("the anonymized trace has other destinations:\n%s", a)
	}
}

// batch --resume --anonymize with a key writes the lines a single run
// writes: the earlier lines are not written again, even a bundle whose
// path holds one of its own names (found done only once read), and the
// lines written now have the tokens of the single run's.
func TestAnonymizeBatchResume(t *testing.T) {
	root := t.TempDir()
	for name, src := range map[string]string{"worker-1": "incidents/probe-restart-loop", "stale": "incidents/stale-dnat", "ephemeral": "incidents/ephemeral-nodeport"} {
		if err := os.CopyFS(filepath.Join(root, name), os.DirFS(fixture(src))); err != nil {
			t.Fatal(err)
		}
	}
	glob := filepath.Join(root, "*")
	t.Setenv(keyEnv, "k")
	full := filepath.Join(root, "..", "full.jsonl")
	fullMap := filepath.Join(root, "..", "full-map.json")
	if code, _, stderr := runCLI(t, "batch", "-q", "-j", "1", "--fail-on", "never", "--anonymize-map", fullMap, "--out", full, glob); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := readLines(t, full)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	all := strings.Join(lines, "\n")
	if strings.Contains(all, "worker-1") || strings.Contains(all, "10.96.0.10") {
		t.Fatalf("names or addresses survive:\n%s", all)
	}
	var kept []string
	for _, l := range lines {
		if !strings.Contains(l, `/ephemeral","status"`) { // its bundle, not a rule's name
			kept = append(kept, l)
		}
	}
	if len(kept) != 2 {
		t.Fatalf("want the lines of worker-1 and stale kept, got %d", len(kept))
	}
	part := filepath.Join(root, "..", "part.jsonl")
	if err := os.WriteFile(part, []byte(strings.Join(kept, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The mapping of the earlier run is kept, that of the lines not
	// written again (stale's) too.
	partMap := filepath.Join(root, "..", "part-map.json")
	mapping, err := os.ReadFile(fullMap)
	if err != nil || !strings.Contains(string(mapping), `"10.96.0.10"`) {
		t.Fatalf("the mapping does not hold stale-dnat's ClusterIP (%v):\n%s", err, mapping)
	}
	if err := os.WriteFile(partMap, mapping, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "batch", "-j", "1", "--fail-on", "never", "--resume", "--anonymize-key-file", writeKey(t, "k"),
		"--anonymize-map", partMap, "--out", part, glob)
	if code != exitOK || !strings.Contains(stderr, "1 analyzed now, 2 already done") {
		t.Errorf("resume: exit %d: %s", code, stderr)
	}
	if got, err := os.ReadFile(partMap); err != nil || string(got) != string(mapping) {
		t.Errorf("the mapping after --resume differs from the single run's (%v):\n%s", err, got)
	}
	got, want := comparable(t, readLines(t, part)), comparable(t, lines)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("resumed lines:\n%s\nsingle run's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// writeKey writes key to a file and returns its path.
func writeKey(t *testing.T, key string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// readLines returns the lines of a file.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// comparable returns batch lines without what differs between two runs
// of the same bundles: when and how long, and the tool's build.
func comparable(t *testing.T, lines []string) []string {
	t.Helper()
	out := make([]string, len(lines))
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		delete(m, "started")
		delete(m, "duration_ms")
		delete(m, "tool")
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}
