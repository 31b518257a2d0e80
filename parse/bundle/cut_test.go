package bundle_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// A run cut short names every file of the bundle it did not reach as not
// read, the files of a rotated series and loose files alike, rather than
// leaving them out of the inputs unsaid. The run is cut here as the first
// input is listed.
func TestOpenCutNamesTheRest(t *testing.T) {
	rotated := filepath.Join(testutil.Root(), "fixtures/captures/rotated")
	loose := t.TempDir()
	for _, f := range []string{"captures/handshakes.pcap", "captures/portscan.pcap", "captures/text/handshakes.tcpdump.txt", "captures/arp.pcapng"} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(loose, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{rotated, loose} {
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil || len(files) < 4 {
			t.Fatal(files, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		snap, _, _ := parse.Open(ctx, dir, &parse.Options{Progress: func(model.Input) { cancel() }})
		cancel()
		if snap == nil {
			t.Fatalf("%s: no snapshot", dir)
		}
		var read, cut, named []string
		for _, in := range snap.Inputs {
			named = append(named, in.Path)
			switch in.Skipped {
			case "":
				read = append(read, in.Path)
			case "not read: the run was cut short before it":
				cut = append(cut, in.Path)
			default:
				t.Errorf("%s: %s skipped: %s", dir, in.Path, in.Skipped)
			}
		}
		slices.Sort(named)
		if !slices.Equal(named, files) || len(read) != 1 || len(cut) != len(files)-1 {
			t.Errorf("%s: read %q, cut %q; want one of %q read and the others cut", dir, read, cut, files)
		}
	}
}

// A directory given after the input the run was cut short in is named as
// not read, as a file given after it is.
func TestOpenAllCutNamesTheDirectory(t *testing.T) {
	root := filepath.Join(testutil.Root(), "fixtures/captures")
	paths := []string{filepath.Join(root, "handshakes.pcap"), filepath.Join(root, "rotated"), filepath.Join(root, "portscan.pcap")}
	ctx, cancel := context.WithCancel(context.Background())
	snap, _, _ := parse.OpenAll(ctx, paths, &parse.Options{Progress: func(model.Input) { cancel() }})
	cancel()
	if snap == nil {
		t.Fatal("no snapshot")
	}
	var cut []string
	for _, in := range snap.Inputs {
		if in.Skipped == model.SkippedCutShort {
			cut = append(cut, in.Path)
		}
	}
	if len(cut) == 0 || !slices.ContainsFunc(cut, func(p string) bool { return strings.HasPrefix(p, paths[1]) }) ||
		!slices.Contains(cut, paths[2]) {
		t.Errorf("cut %q: want the directory %s, or its files, and %s", cut, paths[1], paths[2])
	}
}
