package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
