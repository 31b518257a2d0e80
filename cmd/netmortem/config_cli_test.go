package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each error of a configuration is a line of its own that starts with
// file:line, after one line naming the command, for analyze (a file found
// next to the bundle or given) and batch --config.
func TestConfigErrorsOnTheirLines(t *testing.T) {
	bad := "rules:\n  synack-rest: {}\n  connection-skew:\n    params:\n      alpha: 2\n      min_attempts: -5\n" +
		"ignore:\n  - rule: synack-reset\n"
	dir := bundleWithConfig(t, bad)
	path := filepath.Join(dir, configFile)
	check := func(name string, code int, stderr, header string) {
		t.Helper()
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d", name, code, exitUsage)
		}
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		for len(lines) > 0 && !strings.HasPrefix(lines[0], header+" the configuration has") {
			lines = lines[1:] // "configuration ... (found next to the bundle)"
		}
		want := []string{
			header + " the configuration has 4 errors:",
			path + `:2: rules: unknown rule "synack-rest" (did you mean "synack-reset"?) (netmortem rules lists them)`,
			path + `:5: rules.connection-skew.params.alpha: expected a number > 0 and < 1, got "2"`,
			path + `:6: rules.connection-skew.params.min_attempts: expected an integer >= 1, got "-5"`,
			path + `:8: ignore entry has no reason: expected reason: why these findings are suppressed`,
		}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: stderr\n%s\nwant\n%s", name, stderr, strings.Join(want, "\n"))
		}
	}
	code, _, stderr := runCLI(t, "analyze", dir)
	check("analyze", code, stderr, "netmortem analyze:")
	code, _, stderr = runCLI(t, "analyze", "--config", path, incident)
	check("analyze --config", code, stderr, "netmortem analyze:")
	code, _, stderr = runCLI(t, "batch", "--config", path, "--out", filepath.Join(t.TempDir(), "r.jsonl"), incident)
	check("batch --config", code, stderr, "netmortem batch:")
	// A file that cannot be opened stays one line.
	code, _, stderr = runCLI(t, "analyze", "--config", filepath.Join(dir, "nosuch.yaml"), incident)
	if code != exitUsage || !strings.Contains(stderr, "\nnetmortem analyze: --config: open ") || strings.Count(stderr, "\n") != 2 {
		t.Errorf("missing --config: exit %d: %q", code, stderr)
	}
}

// An ignore entry that matched no finding is noted on stderr with its
// position, not as an error; batch notes the entries that matched nothing
// in any bundle, once.
func TestUnmatchedIgnoreEntriesNoted(t *testing.T) {
	dir := bundleWithConfig(t, "ignore:\n  - node: nosuchnode\n    reason: old node\n  - rule: synack-reset\n    reason: r\n")
	path := filepath.Join(dir, configFile)
	code, _, stderr := runCLI(t, "analyze", "-o", "json", dir)
	if code != exitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "note: "+path+":2: ignore entry matched no finding (reason: old node)\n") ||
		strings.Contains(stderr, path+":4: ignore entry matched") {
		t.Errorf("stderr:\n%s", stderr)
	}
	cfg := filepath.Join(t.TempDir(), "queue.yaml")
	if err := os.WriteFile(cfg, []byte("ignore:\n  - rule: synack-reset\n    reason: r\n  - rule: version-skew\n    reason: gone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.jsonl")
	// synack-reset is found in the incident only: matched in the batch.
	code, _, stderr = runCLI(t, "batch", "--config", cfg, "--out", out, incident, incident+"-control")
	if code != exitFindings {
		t.Fatalf("batch: exit %d: %s", code, stderr)
	}
	if strings.Count(stderr, "ignore entry matched no finding") != 1 || !strings.Contains(stderr, "note: "+cfg+":4: ignore entry matched no finding (reason: gone)") {
		t.Errorf("batch stderr:\n%s", stderr)
	}
}

// The expired-entry warning of a JSON report has its position as a
// structured pos too.
func TestExpiredEntryPos(t *testing.T) {
	dir := bundleWithConfig(t, "ignore:\n  - rule: synack-reset\n    reason: until the upgrade\n    expires: 2020-01-31\n")
	code, out, stderr := runCLI(t, "analyze", "-o", "json", dir)
	if code != exitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Warnings []struct {
			Position string
			Pos      struct {
				File string
				Line int
			}
			Message string
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range r.Warnings {
		if strings.HasPrefix(w.Message, "ignore entry expired") {
			found = w.Pos.File == filepath.Join(dir, configFile) && w.Pos.Line == 2 && w.Position == w.Pos.File+":2"
		}
	}
	if !found {
		t.Errorf("warnings %+v: want the expired entry's pos, file and line", r.Warnings)
	}
}

// --enable runs a rule that the configuration disables: the command line
// wins.
func TestEnableWinsOverConfig(t *testing.T) {
	dir := bundleWithConfig(t, "rules:\n  synack-reset:\n    disabled: true\n")
	r, _ := analyzeReport(t, exitFindings, dir)
	if strings.Contains(rulesOf(r.Findings), "synack-reset") {
		t.Fatalf("disabled by the configuration, yet found: %s", rulesOf(r.Findings))
	}
	r, _ = analyzeReport(t, exitFindings, "--enable", "synack-reset", dir)
	if rulesOf(r.Findings) != "synack-reset" {
		t.Errorf("--enable synack-reset: findings %s", rulesOf(r.Findings))
	}
}

// A report written without --show-suppressed still names the findings its
// configuration suppressed (suppressed_fingerprints), and as a baseline
// suppresses them in a run without that configuration; batch lines too.
func TestBaselineKeepsSuppressed(t *testing.T) {
	tmp := t.TempDir()
	cfg := filepath.Join(tmp, "c.yaml")
	if err := os.WriteFile(cfg, []byte("ignore:\n  - rule: synack-reset\n    reason: r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "empty.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "analyze", "-q", "-o", "json", "--config", cfg, incident)
	if code != exitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Findings               []json.RawMessage `json:"findings"`
		SuppressedFingerprints []string          `json:"suppressed_fingerprints"`
		Suppressed             []json.RawMessage `json:"suppressed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || len(rep.SuppressedFingerprints) != 1 || rep.Suppressed != nil {
		t.Fatalf("report: %d findings, suppressed_fingerprints %v, suppressed %d", len(rep.Findings), rep.SuppressedFingerprints, len(rep.Suppressed))
	}
	base := filepath.Join(tmp, "base.json")
	if err := os.WriteFile(base, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without the configuration, the baseline suppresses both findings.
	r, _ := analyzeReport(t, exitOK, "-q", "--config", filepath.Join(tmp, "empty.yaml"), "--baseline", base, incident)
	if len(r.Findings) != 0 || r.SuppressedCount != 2 {
		t.Errorf("baseline: findings %s, %d suppressed, want none kept and 2 suppressed", rulesOf(r.Findings), r.SuppressedCount)
	}
	lines := filepath.Join(tmp, "batch.jsonl")
	if code, _, stderr := runCLI(t, "batch", "-q", "--fail-on", "never", "--config", cfg, "--out", lines, incident); code != exitOK {
		t.Fatalf("batch: exit %d: %s", code, stderr)
	}
	if l := readJSONL(t, lines); len(l) != 1 || len(l[0].SuppressedFingerprints) != 1 || l[0].SuppressedFingerprints[0] != rep.SuppressedFingerprints[0] {
		t.Fatalf("batch lines: %+v", l)
	}
	if r, _ := analyzeReport(t, exitOK, "-q", "--config", filepath.Join(tmp, "empty.yaml"), "--baseline", lines, incident); r.SuppressedCount != 2 {
		t.Errorf("batch baseline: %d suppressed", r.SuppressedCount)
	}
}
