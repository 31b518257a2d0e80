//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/results"
)

// A ticket is its own folder: 'tickets/T1/**' with a link T1/up -> ..
// does not read T2 through it, in analyze (a warning, exit 3) or in batch
// (a line with status refused).
func TestGlobLinkOutOfTicket(t *testing.T) {
	tickets := t.TempDir()
	t1, t2 := filepath.Join(tickets, "T1"), filepath.Join(tickets, "T2")
	for _, d := range []string{t1, t2} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(t1, "sysctl.txt"), []byte("net.core.somaxconn = 4096\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(incident)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(incident, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(t2, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("..", filepath.Join(t1, "up")); err != nil {
		t.Fatal(err)
	}
	pattern := filepath.Join(t1, "**")

	code, out, stderr := runCLI(t, "analyze", "-q", "-o", "json", pattern)
	if code != exitUnreadable || !strings.Contains(stderr, "symbolic link leads out of the directory") {
		t.Errorf("analyze %s: exit %d, stderr %q", pattern, code, stderr)
	}
	var rep struct {
		Findings []json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Findings) != 0 || strings.Contains(out, "T2") {
		t.Errorf("analyze %s read T2 (%v):\n%s", pattern, err, out)
	}

	code, out, stderr = runCLI(t, "batch", "-q", "--out", "-", pattern)
	refused := false
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var line results.Line
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("batch: %v: %q", err, l)
		}
		if line.Bundle == filepath.Join(t1, "up") && line.Status == results.StatusRefused {
			refused = true
		} else if strings.Contains(line.Bundle, "up") || len(line.Findings) > 0 {
			t.Errorf("batch %s: line %s %s with %d findings", pattern, line.Bundle, line.Status, len(line.Findings))
		}
	}
	if !refused {
		t.Errorf("batch %s: exit %d, no refused line for the link:\n%s\n%s", pattern, code, out, stderr)
	}
}
