package operand

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse"
)

// Operands read from readers are taken as they are, read each as one
// file of its name, and merged with the paths; a pattern that matched
// nothing and a path that does not exist are skipped inputs, and errors.
func TestOpenReadersAndPaths(t *testing.T) {
	dir := t.TempDir()
	sysctl := filepath.Join(dir, "sysctl.txt")
	if err := os.WriteFile(sysctl, []byte("net.ipv4.ip_forward = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readers := map[string]io.Reader{
		"node1/sysctl*.txt": strings.NewReader("net.ipv4.ip_local_port_range = 30000 60999\n"),
		// Without random access: spooled.
		"node2/sysctl.txt": io.MultiReader(strings.NewReader("net.ipv4.ip_forward = 0\n")),
	}
	args := []string{sysctl, "node1/sysctl*.txt", "node2/sysctl.txt", filepath.Join(dir, "*.pcap"), filepath.Join(dir, "missing")}
	e, err := Expand(t.Context(), args, nil, readers)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Paths) != len(args) || !e.Unmatched[args[3]] {
		t.Fatalf("expanded %q, unmatched %v", e.Paths, e.Unmatched)
	}
	in := Open(t.Context(), e, &parse.Options{})
	read := map[string]string{}
	for _, i := range in.Snap.Inputs {
		read[i.Path] = i.Format + i.Skipped
	}
	for _, p := range args[:3] {
		if read[p] != "sysctl" {
			t.Errorf("%s: %q, want read as sysctl (inputs %v)", p, read[p], read)
		}
	}
	if !errors.Is(in.Err, ErrNoMatch) || !strings.Contains(in.Err.Error(), "missing: no such file") || len(in.Refused) != 2 {
		t.Errorf("err %v, refused %q", in.Err, in.Refused)
	}
	if CountInputs(in.Snap, false) != 3 || CountInputs(in.Snap, true) != 2 {
		t.Errorf("%d read, %d skipped", CountInputs(in.Snap, false), CountInputs(in.Snap, true))
	}
	if _, err := Expand(t.Context(), []string{"node2/sysctl.txt", "node2/sysctl.txt"}, nil, readers); err == nil {
		t.Error("a reader given twice is accepted")
	}
}
