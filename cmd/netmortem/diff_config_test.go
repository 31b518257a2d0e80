package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/diff"
)

func diffJSON(t *testing.T, wantCode int, args ...string) (diff.Diff, string) {
	t.Helper()
	code, out, stderr := runCLI(t, append([]string{"diff", "-o", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("diff %v: exit %d, want %d: %s", args, code, wantCode, stderr)
	}
	var d diff.Diff
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	return d, stderr
}

func refRules(l []diff.FindingRef) string {
	var out []string
	for _, r := range l {
		out = append(out, r.Rule)
	}
	return strings.Join(out, ",")
}

// diff -o json says which netmortem wrote it and the version of its shape.
func TestDiffJSONVersion(t *testing.T) {
	d, _ := diffJSON(t, exitOK, incident, incident)
	if d.SchemaVersion != "1" || d.Tool.Name != "netmortem" || d.Tool.Version == "" {
		t.Errorf("schema_version %q, tool %+v", d.SchemaVersion, d.Tool)
	}
	if refRules(d.Findings.Unchanged) != "ephemeral-nodeport-overlap,synack-reset" || d.Suppressed != (diff.SuppressedCounts{}) {
		t.Errorf("same bundle: unchanged %s, suppressed %+v", refRules(d.Findings.Unchanged), d.Suppressed)
	}
}

// The configuration next to NEW (or --config) applies to both bundles:
// the findings its ignore entries select are left out on either side and
// counted; so are a --baseline's.
func TestDiffConfig(t *testing.T) {
	newer := bundleWithConfig(t, "ignore:\n  - rule: synack-reset\n    reason: r\n")
	d, stderr := diffJSON(t, exitOK, incident, newer)
	if refRules(d.Findings.Unchanged) != "ephemeral-nodeport-overlap" || len(d.Findings.Resolved)+len(d.Findings.Appeared) != 0 ||
		d.Suppressed != (diff.SuppressedCounts{Old: 1, New: 1}) {
		t.Errorf("config next to NEW: %+v, suppressed %+v", d.Findings, d.Suppressed)
	}
	if !strings.Contains(stderr, "configuration "+filepath.Join(newer, configFile)+" (found next to the bundle)") {
		t.Errorf("diff does not say which configuration: %s", stderr)
	}
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(cfg, []byte("ignore:\n  - rule: ephemeral-nodeport-overlap\n    reason: r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, _ = diffJSON(t, exitFindings, "--config", cfg, incident+"-control", incident)
	if refRules(d.Findings.Appeared) != "synack-reset" || d.Suppressed != (diff.SuppressedCounts{Old: 0, New: 1}) {
		t.Errorf("--config: appeared %s, suppressed %+v", refRules(d.Findings.Appeared), d.Suppressed)
	}
	code, out, _ := runCLI(t, "diff", "--config", cfg, incident+"-control", incident)
	if code != exitFindings || !strings.Contains(out, "suppressed (left out): 0 in old, 1 in new\n") {
		t.Errorf("text: exit %d:\n%s", code, out)
	}
	// A baseline of the incident: nothing new in it.
	_, full, _ := runCLI(t, "analyze", "-q", "-o", "json", incident)
	base := filepath.Join(t.TempDir(), "base.json")
	if err := os.WriteFile(base, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	d, _ = diffJSON(t, exitOK, "--baseline", base, incident+"-control", incident)
	if len(d.Findings.Appeared) != 0 || d.Suppressed.New != 2 {
		t.Errorf("--baseline: appeared %s, suppressed %+v", refRules(d.Findings.Appeared), d.Suppressed)
	}
	// A bad configuration: its errors, each on its line, and exit 2.
	if err := os.WriteFile(cfg, []byte("ignore:\n  - rule: synack-rest\n    reason: r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "diff", "--config", cfg, incident, incident)
	if code != exitUsage || !strings.Contains(stderr, "\n"+cfg+`:2: ignore.rule: expected a rule's name (did you mean "synack-reset"?)`) {
		t.Errorf("bad config: exit %d: %s", code, stderr)
	}
}

// diff --fail-on: never exits 0 with findings appeared; error exits 1 for
// an appeared error; an unknown level is a usage error.
func TestDiffFailOn(t *testing.T) {
	ctl, inc := fixture("incidents/stale-dnat-control"), fixture("incidents/stale-dnat")
	for _, tc := range []struct {
		level string
		code  int
	}{{"never", exitOK}, {"error", exitFindings}, {"info", exitFindings}, {"critical", exitUsage}} {
		if code, _, stderr := runCLI(t, "diff", "--fail-on", tc.level, ctl, inc); code != tc.code {
			t.Errorf("--fail-on %s: exit %d, want %d: %s", tc.level, code, tc.code, stderr)
		}
	}
	// Resolved findings do not fail.
	if code, _, stderr := runCLI(t, "diff", inc, ctl); code != exitOK {
		t.Errorf("only resolved: exit %d: %s", code, stderr)
	}
}
