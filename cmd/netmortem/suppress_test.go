package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
)

// plainCopy copies a capture as it is.
func plainCopy(t testing.TB, in, out string) {
	t.Helper()
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// bundleWithConfig copies the ephemeral-nodeport incident (an
// ephemeral-nodeport-overlap and a synack-reset finding, both errors) to
// a directory with config as its .netmortem.yaml ("" for none).
func bundleWithConfig(t *testing.T, config string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	copyBundle(t, incident, dir, plainCopy)
	if config != "" {
		if err := os.WriteFile(filepath.Join(dir, configFile), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type suppressedReport struct {
	Findings        []analyzer.Finding `json:"findings"`
	Warnings        []struct{ Position, Message string }
	SuppressedCount int                   `json:"suppressed_count"`
	Suppressed      []analyzer.Suppressed `json:"suppressed"`
}

func analyzeReport(t *testing.T, wantCode int, args ...string) (suppressedReport, string) {
	t.Helper()
	code, out, stderr := runCLI(t, append([]string{"analyze", "-o", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("analyze %v: exit %d, want %d: %s", args, code, wantCode, stderr)
	}
	var r suppressedReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r, stderr
}

func rulesOf(fs []analyzer.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return strings.Join(out, ",")
}

// .netmortem.yaml in the bundle's directory is read when --config is not
// given, and says so; its ignore entries suppress; an explicit --config
// wins.
func TestConfigFoundNextToBundle(t *testing.T) {
	dir := bundleWithConfig(t, "ignore:\n  - rule: synack-reset\n    client: x\n")
	// A bad file found next to the bundle is an error with its line.
	code, _, stderr := runCLI(t, "analyze", dir)
	if code != exitUsage || !strings.Contains(stderr, configFile+`:3: ignore entry: unknown key "client"`) {
		t.Errorf("bad config: exit %d: %s", code, stderr)
	}
	dir = bundleWithConfig(t, "ignore:\n  - rule: synack-reset\n    reason: the NodePort range moves next week\n")
	r, stderr := analyzeReport(t, exitFindings, dir)
	if !strings.Contains(stderr, "; 1 finding (1 suppressed)\n") {
		t.Errorf("stderr does not count the suppressed finding: %s", stderr)
	}
	if !strings.Contains(stderr, "configuration "+filepath.Join(dir, configFile)+" (found next to the bundle)") {
		t.Errorf("stderr does not say which configuration: %s", stderr)
	}
	if rulesOf(r.Findings) != "ephemeral-nodeport-overlap" || r.SuppressedCount != 1 || r.Suppressed != nil {
		t.Errorf("findings %s, %d suppressed, listed %v", rulesOf(r.Findings), r.SuppressedCount, r.Suppressed)
	}
	// Next to a file given inside the directory too.
	r, _ = analyzeReport(t, exitFindings, filepath.Join(dir, "sysctl.txt"), filepath.Join(dir, "capture.pcap"))
	if r.SuppressedCount != 1 {
		t.Errorf("files of the directory: %d suppressed", r.SuppressedCount)
	}
	// --config wins over the file found.
	other := filepath.Join(t.TempDir(), "other.yaml")
	if err := os.WriteFile(other, []byte("ignore:\n  - rule: ephemeral-nodeport-overlap\n    reason: r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, stderr = analyzeReport(t, exitFindings, "--config", other, "--show-suppressed", dir)
	if rulesOf(r.Findings) != "synack-reset" || len(r.Suppressed) != 1 || r.Suppressed[0].Rule != "ephemeral-nodeport-overlap" ||
		r.Suppressed[0].By != other+":2" || r.Suppressed[0].Reason != "r" || !strings.Contains(stderr, "configuration "+other+" (--config)") {
		t.Errorf("--config: findings %s, suppressed %+v, stderr %s", rulesOf(r.Findings), r.Suppressed, stderr)
	}
}

// The exit code counts the findings kept only; an expired entry
// suppresses nothing and is warned about with its position.
func TestSuppressedExitAndExpiry(t *testing.T) {
	dir := bundleWithConfig(t, "ignore:\n  - node: nosuchnode\n    reason: r\n  - rule: synack-reset\n    reason: r\n  - rule: ephemeral-nodeport-overlap\n    reason: r\n")
	r, _ := analyzeReport(t, exitOK, dir)
	if len(r.Findings) != 0 || r.SuppressedCount != 2 {
		t.Errorf("all suppressed: %s kept, %d suppressed", rulesOf(r.Findings), r.SuppressedCount)
	}
	dir = bundleWithConfig(t, "ignore:\n  - rule: synack-reset\n    reason: until the upgrade\n    expires: 2020-01-31\n")
	r, stderr := analyzeReport(t, exitFindings, dir)
	if r.SuppressedCount != 0 || len(r.Findings) != 2 {
		t.Errorf("expired entry: %s kept, %d suppressed", rulesOf(r.Findings), r.SuppressedCount)
	}
	want := filepath.Join(dir, configFile) + ":2: ignore entry expired on 2020-01-31 and no longer applies (reason: until the upgrade)"
	if !strings.Contains(stderr, "warning: "+want) {
		t.Errorf("stderr does not warn %q:\n%s", want, stderr)
	}
	found := false
	for _, w := range r.Warnings {
		found = found || w.Position+": "+w.Message == want
	}
	if !found {
		t.Errorf("the report's warnings do not hold %q: %+v", want, r.Warnings)
	}
}

// --fail-on never exits 0 whatever the findings; a bad level is a usage
// error naming never.
func TestFailOnNever(t *testing.T) {
	if code, _, stderr := runCLI(t, "analyze", "-q", "--fail-on", "never", incident); code != exitOK {
		t.Errorf("analyze --fail-on never: exit %d: %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "analyze", "-q", "--fail-on", "error", incident); code != exitFindings {
		t.Errorf("analyze --fail-on error: exit %d", code)
	}
	code, _, stderr := runCLI(t, "analyze", "--fail-on", "nevr", incident)
	if code != exitUsage || !strings.Contains(stderr, "want never, info, warning or error") {
		t.Errorf("--fail-on nevr: exit %d: %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "out.jsonl")
	if code, _, stderr := runCLI(t, "batch", "-q", "--fail-on", "never", "--out", out, incident); code != exitOK {
		t.Errorf("batch --fail-on never: exit %d: %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "batch", "-q", "--out", out, incident); code != exitFindings {
		t.Errorf("batch: exit %d, want %d", code, exitFindings)
	}
}

// --baseline leaves out the findings of an earlier report, by fingerprint,
// from analyze -o json or from batch lines.
func TestBaseline(t *testing.T) {
	tmp := t.TempDir()
	code, full, _ := runCLI(t, "analyze", "-q", "-o", "json", incident)
	if code != exitFindings {
		t.Fatalf("exit %d", code)
	}
	// A baseline with the synack-reset finding only.
	var rep map[string]any
	if err := json.Unmarshal([]byte(full), &rep); err != nil {
		t.Fatal(err)
	}
	var keep []any
	for _, f := range rep["findings"].([]any) {
		if f.(map[string]any)["rule"] == "synack-reset" {
			keep = append(keep, f)
		}
	}
	rep["findings"] = keep
	b, _ := json.Marshal(rep)
	base := filepath.Join(tmp, "base.json")
	if err := os.WriteFile(base, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ := analyzeReport(t, exitFindings, "-q", "--baseline", base, "--show-suppressed", incident)
	if rulesOf(r.Findings) != "ephemeral-nodeport-overlap" || len(r.Suppressed) != 1 || r.Suppressed[0].By != "baseline" ||
		r.Suppressed[0].Reason != "in the baseline "+base {
		t.Errorf("baseline: findings %s, suppressed %+v", rulesOf(r.Findings), r.Suppressed)
	}
	// The whole report as baseline: nothing new, exit 0, and the text
	// formats say how many were suppressed.
	if err := os.WriteFile(base, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "analyze", "-q", "-o", "text", "--baseline", base, incident)
	if code != exitOK || out != "2 findings suppressed (--show-suppressed lists them)\n" {
		t.Errorf("full baseline: exit %d, text %q", code, out)
	}
	// batch lines as baseline.
	lines := filepath.Join(tmp, "batch.jsonl")
	if code, _, _ := runCLI(t, "batch", "-q", "--fail-on", "never", "--out", lines, incident); code != exitOK {
		t.Fatalf("batch: exit %d", code)
	}
	if r, _ := analyzeReport(t, exitOK, "-q", "--baseline", lines, incident); r.SuppressedCount != 2 {
		t.Errorf("batch baseline: %d suppressed", r.SuppressedCount)
	}
	// Not a report: a usage error saying what is wanted.
	bad := filepath.Join(tmp, "bad.json")
	for _, text := range []string{"", "{\"x\": 1}\n", "not json"} {
		if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, "analyze", "-q", "--baseline", bad, incident)
		if code != exitUsage || !strings.Contains(stderr, "--baseline: "+bad) || !strings.Contains(stderr, "analyze -o json") {
			t.Errorf("baseline %q: exit %d: %s", text, code, stderr)
		}
	}
}

// batch --config applies one configuration to every bundle: its ignore
// entries suppress findings in each, counted on each bundle's line; a bad
// file is a usage error with its line.
func TestBatchConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "queue.yaml")
	write := func(s string) {
		if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ignore:\n  - rule: synack-reset\n    reason: the NodePort range moves next week\n")
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, stderr := runCLI(t, "batch", "--config", cfg, "--out", out, incident, incident+"-control")
	if code != exitFindings {
		t.Fatalf("batch --config: exit %d: %s", code, stderr)
	}
	lines := readJSONL(t, out)
	got := map[string]string{}
	for _, l := range lines {
		got[filepath.Base(l.Bundle)] = fmt.Sprintf("%s suppressed %d", rulesOf(l.Findings), l.SuppressedCount)
	}
	want := map[string]string{"ephemeral-nodeport": "ephemeral-nodeport-overlap suppressed 1", "ephemeral-nodeport-control": " suppressed 0"}
	if !maps.Equal(got, want) {
		t.Errorf("batch --config lines: %q, want %q", got, want)
	}
	if !strings.Contains(stderr, "configuration "+cfg+" (--config)") {
		t.Errorf("batch does not say which configuration: %s", stderr)
	}
	write("rules:\n  synack-rest:\n    disabled: true\n")
	code, _, stderr = runCLI(t, "batch", "--config", cfg, "--out", out, incident)
	if code != exitUsage || !strings.Contains(stderr, cfg+`:2: rules: unknown rule "synack-rest"`) {
		t.Errorf("bad --config: exit %d: %s", code, stderr)
	}
}
