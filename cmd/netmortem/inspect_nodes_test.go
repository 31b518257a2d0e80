package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestInspectMarkerNodes: a file that concatenates several nodes' outputs
// under "=== node ===" banners has no node of its own; inspect shows the
// nodes its records carry, in the table's NODE column and in record_nodes.
func TestInspectMarkerNodes(t *testing.T) {
	dir := t.TempDir()
	multi := filepath.Join(dir, "sysctl-all.txt")
	body := "=== node1 ===\nnet.ipv4.ip_forward = 1\nnet.core.somaxconn = 4096\n=== node2 ===\nnet.ipv4.ip_forward = 0\n"
	if err := os.WriteFile(multi, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "sysctl.txt")
	if err := os.WriteFile(plain, []byte("net.ipv4.ip_forward = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "inspect", multi, plain)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, l := range strings.Split(out, "\n") {
		cells := strings.Split(l, "│")
		if len(cells) < 5 {
			continue
		}
		file, node := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[4])
		if want := map[string]string{multi: "node1,node2", plain: ""}[file]; (file == multi || file == plain) && node != want {
			t.Errorf("%s: NODE %q, want %q", file, node, want)
		}
	}
	if !strings.Contains(out, "node1,node2") {
		t.Errorf("the table lacks the nodes:\n%s", out)
	}
	_, out, _ = runCLI(t, "inspect", "-o", "json", multi, plain)
	var in struct {
		RecordNodes map[string][]string `json:"record_nodes"`
	}
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatal(err)
	}
	if got := in.RecordNodes[multi]; !slices.Equal(got, []string{"node1", "node2"}) || len(in.RecordNodes[plain]) != 0 {
		t.Errorf("record_nodes %v", in.RecordNodes)
	}
}
