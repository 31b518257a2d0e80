package operand

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
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

// Reading stopped when something given was left unread for the context's
// end, and only then: a warning of another kind, or none, is no stop.
func TestOpenedStopped(t *testing.T) {
	stop := model.Stopped(model.Pos{File: "a.txt", Line: 9}, context.DeadlineExceeded)
	bare := &model.Error{Pos: model.Pos{File: "b.log", Line: 4}, Err: context.Canceled}
	other := &model.Error{Pos: model.Pos{File: "c.txt", Line: 2}, Err: errors.New("syntax error")}
	for _, c := range []struct {
		name string
		in   Opened
		want bool
	}{
		{"whole", Opened{Snap: &model.Snapshot{Inputs: []model.Input{{Path: "a.txt"}}}}, false},
		{"a warning", Opened{Snap: &model.Snapshot{}, Warns: model.ErrorList{other}}, false},
		{"a skip of another kind", Opened{Snap: &model.Snapshot{Inputs: []model.Input{{Path: "e", Skipped: "empty file"}}}}, false},
		{"read to a line", Opened{Snap: &model.Snapshot{}, Warns: model.ErrorList{other, stop}}, true},
		{"a context's error", Opened{Snap: &model.Snapshot{}, Warns: model.ErrorList{bare}}, true},
		{"a path not read", Opened{Snap: &model.Snapshot{}, Err: fmt.Errorf("d: %w", context.Canceled)}, true},
		{"left behind", Opened{Snap: &model.Snapshot{}, Stuck: true}, true},
		{"not reached", Opened{Snap: &model.Snapshot{Inputs: []model.Input{{Path: "e", Skipped: model.SkippedCutShort}}}}, true},
	} {
		if got := c.in.Stopped(); got != c.want {
			t.Errorf("%s: Stopped() = %v, want %v", c.name, got, c.want)
		}
	}
}
