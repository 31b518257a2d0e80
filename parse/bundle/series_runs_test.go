package bundle_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/netmortem/netmortem/parse"
)

// runsDir returns a directory holding the rotated fixture and, named as
// one of it, handshakes-131149.pcap: the records of its 13:11:43 file but
// the first, and then those of its 13:11:47 one, as one capture. In the
// order of first packets it follows the 13:11:43 file (it starts with
// that file's second packet), and the 13:11:44 file does not follow it
// (it ends at 13:11:48): the files are the empty 131142 alone, then two
// runs, 131143 and 131149, and 131144 to 131148.
func runsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{}
	for _, p := range rotatedPaths(t) {
		files[filepath.Base(p)] = readFile(t, p)
	}
	a, b := files["handshakes-131143.pcap"], files["handshakes-131148.pcap"]
	// Past a's first record (its 16-byte header gives the length of its
	// data at 8, little-endian as the fixture is) and b's file header.
	first := 24 + 16 + int(binary.LittleEndian.Uint32(a[24+8:]))
	files["handshakes-131149.pcap"] = append(append(slices.Clip(a[:24]), a[first:]...), b[24:]...)
	writeFiles(t, dir, files)
	return dir
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Files of one name that follow each other for a while are read as runs:
// each run one series, the next starting at the first file that does not
// follow.
func TestSeriesRuns(t *testing.T) {
	dir := runsDir(t)
	snap, warns, err := parse.Open(context.Background(), dir, &parse.Options{KeepAttempts: true})
	if err != nil || len(warns) > 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	got := map[string]int{}
	for _, in := range snap.Inputs {
		got[filepath.Base(in.Path)] = in.Details["series_files"]
	}
	want := map[string]int{"handshakes-131142.pcap": 0, "handshakes-131143.pcap": 2, "handshakes-131149.pcap": 2,
		"handshakes-131144.pcap": 4, "handshakes-131145.pcap": 4, "handshakes-131146.pcap": 4, "handshakes-131148.pcap": 4}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("series_files by input: %v, want %v", got, want)
	}
	var order []string
	for _, c := range snap.Captures {
		order = append(order, filepath.Base(c.File))
	}
	if want := []string{"handshakes-131142.pcap", "handshakes-131143.pcap", "handshakes-131149.pcap", "handshakes-131144.pcap",
		"handshakes-131145.pcap", "handshakes-131146.pcap", "handshakes-131148.pcap"}; !slices.Equal(order, want) {
		t.Errorf("captures in the order %v, want %v", order, want)
	}
}
