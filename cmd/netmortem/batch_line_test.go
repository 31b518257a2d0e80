package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/buildinfo"
	"github.com/netmortem/netmortem/report"
)

// TestBatchLineVersions checks that every batch line starts with the
// schema version and the netmortem that wrote it, as the JSON report does.
func TestBatchLineVersions(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	missing := filepath.Join(t.TempDir(), "missing")
	runCLI(t, "batch", "-q", "--out", out, incident, missing)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), b)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"schema_version":"`+report.SchemaVersion+`","tool":{"name":"netmortem","version":`) {
			t.Errorf("line does not start with schema_version and tool: %.120s", l)
		}
		var r struct {
			Schema string         `json:"schema_version"`
			Tool   buildinfo.Info `json:"tool"`
			Status string         `json:"status"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Schema != report.SchemaVersion || r.Tool.Version != buildinfo.Get().Version || r.Tool.Version == "" {
			t.Errorf("%s line: schema %q, tool %+v", r.Status, r.Schema, r.Tool)
		}
	}
}
