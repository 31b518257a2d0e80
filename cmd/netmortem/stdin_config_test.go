package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdinConfigInCurrentDirectory: "-" is read as a file of the current
// directory, so a .netmortem.yaml there applies to it.
func TestStdinConfigInCurrentDirectory(t *testing.T) {
	capture, err := os.ReadFile(filepath.Join(fixture("incidents/stale-dnat"), "capture.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	withStdin(t, bytes.NewReader(capture))
	code, out, stderr := runCLI(t, "analyze", "-o", "json", "-")
	if code != exitFindings || !strings.Contains(out, `"rule": "syn-unanswered"`) {
		t.Fatalf("without a configuration: exit %d\n%s", code, stderr)
	}
	cfg := "ignore:\n  - rule: syn-unanswered\n    reason: known\n"
	if err := os.WriteFile(filepath.Join(dir, ".netmortem.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	withStdin(t, bytes.NewReader(capture))
	code, out, stderr = runCLI(t, "analyze", "-o", "json", "-")
	if strings.Contains(out, `"rule": "syn-unanswered"`) || !strings.Contains(out, `"suppressed_count": 1`) ||
		!strings.Contains(stderr, "configuration .netmortem.yaml") {
		t.Errorf("with ./.netmortem.yaml: exit %d, the finding not suppressed\n%s\n%s", code, stderr, out)
	}
}
