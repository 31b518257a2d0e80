package bundle_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/bundle"
)

// runsDir returns a directory holding the rotated fixture and, named as
// one of it, handshakes-131149.pcap: the last record of its 13:11:43
// file, and then the records of its 13:11:47 one, as one capture. In the
// order of first packets it follows the 13:11:43 file (it starts with
// that file's last packet), and the 13:11:44 file does not follow it (it
// ends at 13:11:48): the files are the empty 131142 alone, then two runs,
// 131143 and 131149, and 131144 to 131148.
func runsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{}
	for _, p := range rotatedPaths(t) {
		files[filepath.Base(p)] = readFile(t, p)
	}
	a, b := files["handshakes-131143.pcap"], files["handshakes-131148.pcap"]
	// a's last record (each 16-byte record header gives the length of
	// its data at 8, little-endian as the fixture is), past b's file
	// header.
	last := 24
	for off := 24; off < len(a); off += 16 + int(binary.LittleEndian.Uint32(a[off+8:])) {
		last = off
	}
	files["handshakes-131149.pcap"] = append(append(slices.Clip(a[:24]), a[last:]...), b[24:]...)
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

// shifted returns the pcap file b (little-endian, microseconds, as the
// fixtures are) with every record's time moved by d.
func shifted(t *testing.T, b []byte, d time.Duration) []byte {
	t.Helper()
	if binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 {
		t.Fatal("not a little-endian microsecond pcap file")
	}
	out := slices.Clone(b)
	for off := 24; off+16 <= len(out); off += 16 + int(binary.LittleEndian.Uint32(out[off+8:])) {
		us := int64(binary.LittleEndian.Uint32(out[off:]))*1e6 + int64(binary.LittleEndian.Uint32(out[off+4:])) + d.Microseconds()
		binary.LittleEndian.PutUint32(out[off:], uint32(us/1e6))
		binary.LittleEndian.PutUint32(out[off+4:], uint32(us%1e6))
	}
	return out
}

// seriesOf returns the series_files detail of each input of snap, by
// file name.
func seriesOf(snap *model.Snapshot) map[string]int {
	got := map[string]int{}
	for _, in := range snap.Inputs {
		got[filepath.Base(in.Path)] = in.Details["series_files"]
	}
	return got
}

// Two interfaces rotated side by side (eth0-TIME.pcap, eth1-TIME.pcap,
// here half a second apart, so that each file of one starts before the
// last packet of the other's, within the second a series allows) are two
// series: a number right after a letter is part of the capture's name.
// A file of another link type named alike, amid a series, is read apart
// and leaves the series whole; so is a file of no packet.
func TestSeriesSideBySide(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{}
	var names []string
	for _, p := range rotatedPaths(t)[1:] { // past the empty one
		b := readFile(t, p)
		stamp := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "handshakes-"), ".pcap")
		files["eth0-"+stamp+".pcap"], files["eth1-"+stamp+".pcap"] = b, shifted(t, b, 500*time.Millisecond)
		names = append(names, "eth0-"+stamp+".pcap", "eth1-"+stamp+".pcap")
	}
	// any-bridge.pcap (Linux SLL2) moved to start amid eth0's series.
	sll2 := readFixture(t, "any-bridge.pcap")
	first := time.Unix(int64(binary.LittleEndian.Uint32(sll2[24:])), int64(binary.LittleEndian.Uint32(sll2[28:]))*1000)
	files["eth0-1311445.pcap"] = shifted(t, sll2, time.Date(2026, 11, 23, 13, 11, 45, 0, time.UTC).Sub(first))
	files["eth0-1311490.pcap"] = readFile(t, rotatedPaths(t)[0]) // no packet
	writeFiles(t, dir, files)

	one, _, err := parse.Open(context.Background(), filepath.Dir(rotatedPaths(t)[0]), &parse.Options{KeepAttempts: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, warns, err := parse.Open(context.Background(), dir, &parse.Options{KeepAttempts: true})
	if err != nil || len(warns) > 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	want := map[string]int{"eth0-1311445.pcap": 0, "eth0-1311490.pcap": 0}
	for _, n := range names {
		want[n] = 5
	}
	sllAttempts := 0
	for _, a := range snap.Attempts {
		if strings.HasPrefix(filepath.Base(a.Pos.File), "eth0-1311445") {
			sllAttempts++
		}
	}
	if got := seriesOf(snap); !reflect.DeepEqual(got, want) {
		t.Errorf("series_files by input: %v, want %v", got, want)
	}
	if len(snap.Attempts)-sllAttempts != 2*len(one.Attempts) {
		t.Errorf("%d attempts besides the SLL2 file's %d; the series alone gives %d, twice over %d",
			len(snap.Attempts)-sllAttempts, sllAttempts, len(one.Attempts), 2*len(one.Attempts))
	}
}

// A series whose files tcpdump -z compressed but the one it still writes
// is one series.
func TestSeriesPartlyCompressed(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{}
	paths := rotatedPaths(t)[1:]
	for i, p := range paths {
		name := "trace.pcap" + strconv.Itoa(i)
		if i == 0 {
			name = "trace.pcap" // tcpdump -C's first file has no number
		}
		if i < len(paths)-1 {
			files[name+".gz"] = gz(readFile(t, p))
		} else {
			files[name] = readFile(t, p)
		}
	}
	writeFiles(t, dir, files)
	snap, warns, err := parse.Open(context.Background(), dir, &parse.Options{KeepAttempts: true})
	if err != nil || len(warns) > 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	for name, n := range seriesOf(snap) {
		if n != len(paths) {
			t.Errorf("%s: series_files %d, want %d", name, n, len(paths))
		}
	}
}

// A fault of the series reader is said once, and the files of the series
// are then read one by one, each whole.
func TestSeriesReaderFault(t *testing.T) {
	restore := bundle.SetRotatedReader(func([]capture.SeriesFile) { panic("a fault") })
	defer restore()
	dir := filepath.Dir(rotatedPaths(t)[0])
	snap, warns, err := parse.Open(context.Background(), dir, &parse.Options{KeepAttempts: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "the capture series reader failed: a fault") ||
		!strings.Contains(warns[0].Error(), "read one by one") {
		t.Fatalf("warnings %v, want the fault once", warns)
	}
	packets := 0
	for _, in := range snap.Inputs {
		packets += in.Records
		if in.Skipped != "" || in.Details["series_files"] != 0 {
			t.Errorf("%s: skipped %q, details %v; want it read alone", in.Path, in.Skipped, in.Details)
		}
	}
	if len(snap.Inputs) != 6 || packets != 66 {
		t.Errorf("%d inputs, %d packets; want the fixture's 6 files and 66 packets", len(snap.Inputs), packets)
	}
}
