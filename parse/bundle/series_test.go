package bundle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ulikunitz/xz"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// A tcpdump -G capture rotated every second: read as one series, it gives
// the attempts tshark sees in the files merged, and the connections that
// cross a file boundary are single attempts.
func TestRotatedSeries(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "fixtures/captures/rotated")
	snap, warns, err := parse.Open(context.Background(), dir, &parse.Options{KeepAttempts: true})
	if err != nil || len(warns) > 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/tshark-truth/captures/rotated/rotated.series.pcap.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Streams int `json:"tcp_streams"`
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	if len(snap.Attempts) != truth.Streams {
		t.Errorf("%d attempts, tshark sees %d streams in the merged files", len(snap.Attempts), truth.Streams)
	}
	crossing := 0
	for _, a := range snap.Attempts {
		if a.ClientFIN != nil && a.ClientFIN.File != "" || len(a.SYN) > 1 && a.SYN[len(a.SYN)-1].File != "" {
			crossing++
		}
	}
	if crossing == 0 {
		t.Errorf("no attempt crosses a file boundary; the fixture's unanswered SYN retransmits a second later")
	}
	for _, in := range snap.Inputs {
		if n := rotatedSeriesFiles(in.Path); in.Details["series_files"] != n {
			t.Errorf("%s: details %v, want series_files=%d", in.Path, in.Details, n)
		}
	}
	// Each file counts the connections whose first packet it holds: the
	// files add up to the series, a connection across a boundary once.
	streams := 0
	for _, c := range snap.Captures {
		streams += c.Counts.TCPStreams
	}
	if len(snap.Captures) != 6 || streams != truth.Streams {
		t.Errorf("%d captures counting %d streams, tshark sees %d", len(snap.Captures), streams, truth.Streams)
	}
}

// rotatedSeriesFiles returns the series_files detail of the input of a
// file of the rotated fixture read whole: its first file, of no packet
// (tcpdump -G writes one when no packet came), is read alone, the five
// others as one series.
func rotatedSeriesFiles(path string) int {
	if strings.HasPrefix(filepath.Base(path), "handshakes-131142.pcap") {
		return 0
	}
	return 5
}

// rotatedPaths returns the files of the rotated fixture.
func rotatedPaths(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(testutil.Root(), "fixtures/captures/rotated/*.pcap"))
	if err != nil || len(paths) != 6 {
		t.Fatalf("%v %v", paths, err)
	}
	return paths
}

// The files of a series given one by one, in any order, are one series.
func TestRotatedSeriesGivenOneByOne(t *testing.T) {
	paths := rotatedPaths(t)
	slices.Reverse(paths)
	whole, _, err := parse.Open(context.Background(), filepath.Dir(paths[0]), &parse.Options{KeepAttempts: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, warns, err := parse.OpenAll(context.Background(), paths, &parse.Options{KeepAttempts: true})
	if err != nil || len(warns) > 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Attempts) != len(whole.Attempts) || len(snap.Inputs) != 6 {
		t.Errorf("%d attempts, %d inputs; the directory gives %d attempts", len(snap.Attempts), len(snap.Inputs), len(whole.Attempts))
	}
	for _, in := range snap.Inputs {
		if n := rotatedSeriesFiles(in.Path); in.Details["series_files"] != n {
			t.Errorf("%s: details %v, want series_files=%d", in.Path, in.Details, n)
		}
	}
}

// compressedSeries returns a directory holding the files of the rotated
// fixture compressed one by one by compress, named with ext added.
func compressedSeries(t *testing.T, ext string, compress func([]byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range rotatedPaths(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)+ext), compress(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// xzOf returns b compressed with xz.
func xzOf(t *testing.T, b []byte) []byte {
	var z bytes.Buffer
	zw, err := xz.NewWriter(&z)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

// A series compressed file by file (tcpdump -z gzip, or xz) is read as
// one too.
func TestRotatedSeriesCompressed(t *testing.T) {
	for _, c := range []struct {
		ext      string
		compress func([]byte) []byte
	}{{".gz", gz}, {".xz", func(b []byte) []byte { return xzOf(t, b) }}} {
		dir := compressedSeries(t, c.ext, c.compress)
		snap, warns, err := parse.Open(context.Background(), dir, &parse.Options{KeepAttempts: true})
		if err != nil || len(warns) > 0 {
			t.Fatalf("%s: open: %v %v", c.ext, err, warns)
		}
		if len(snap.Inputs) != 6 || len(snap.Attempts) != 11 {
			t.Errorf("%s: %d inputs, %d attempts, want 6 and 11", c.ext, len(snap.Inputs), len(snap.Attempts))
		}
		for _, in := range snap.Inputs {
			if n := rotatedSeriesFiles(in.Path); in.Details["series_files"] != n {
				t.Errorf("%s: details %v, want series_files=%d", in.Path, in.Details, n)
			}
		}
	}
}

// Captures named alike that do not follow each other in time (two taken
// at once: the same 5-second one twice, or the second 50 ms after the
// first) are read each on its own, as if their names told nothing.
func TestNamedAlikeNotRotated(t *testing.T) {
	for _, d := range []time.Duration{0, 50 * time.Millisecond} {
		namedAlikeNotRotated(t, d)
	}
}

func namedAlikeNotRotated(t *testing.T, d time.Duration) {
	b := readFixture(t, "handshakes.pcap")
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"node1.pcap": b, "node2.pcap": shifted(t, b, d)})
	one, _, err := parse.Open(context.Background(), filepath.Join(dir, "node1.pcap"), &parse.Options{KeepAttempts: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, warns, err := parse.Open(context.Background(), dir, &parse.Options{KeepAttempts: true})
	if err != nil || len(warns) > 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(one.Attempts) == 0 || len(snap.Attempts) != 2*len(one.Attempts) || len(snap.Captures) != 2 {
		t.Errorf("%d attempts in %d captures; one file alone gives %d", len(snap.Attempts), len(snap.Captures), len(one.Attempts))
	}
	for _, in := range snap.Inputs {
		if in.Details["series_files"] != 0 || in.Records != one.Inputs[0].Records {
			t.Errorf("%s: %d records, details %v; one file alone: %d records", in.Path, in.Records, in.Details, one.Inputs[0].Records)
		}
	}
}

// Captures named alike but not a series keep their places among the
// others: those of a directory where the walk meets the last of them,
// and a file given as a path, with no other path of its name, where it
// is given, whatever its directory holds.
func TestNamedAlikeKeepTheirPlace(t *testing.T) {
	f := filepath.Join(testutil.Root(), "fixtures/captures")
	dir := t.TempDir()
	for to, from := range map[string]string{"node1.pcap": "handshakes.pcap", "node2.pcap": "handshakes-nsec.pcap",
		"p.pcap": "portscan.pcap"} {
		b, err := os.ReadFile(filepath.Join(f, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := func(snap *model.Snapshot) (out []string) {
		for _, c := range snap.Captures {
			out = append(out, filepath.Base(c.File))
		}
		return out
	}
	snap, _, err := parse.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := files(snap); !slices.Equal(got, []string{"node1.pcap", "node2.pcap", "p.pcap"}) {
		t.Errorf("the directory's captures in the order %v", got)
	}
	paths := []string{filepath.Join(dir, "node1.pcap"), filepath.Join(f, "sweep.pcap"), filepath.Join(dir, "p.pcap")}
	snap, _, err = parse.OpenAll(context.Background(), paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := files(snap); !slices.Equal(got, []string{"node1.pcap", "sweep.pcap", "p.pcap"}) {
		t.Errorf("the paths' captures in the order %v", got)
	}
}

// A series compressed over the limit on a file's decompressed size is
// cut, and says so, at each file cut.
func TestRotatedSeriesLimits(t *testing.T) {
	dir := compressedSeries(t, ".gz", gz)
	snap, warns, err := parse.Open(context.Background(), dir, &parse.Options{Limits: parse.Limits{MaxFileBytes: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	cut := map[string]bool{}
	for _, w := range warns {
		if errors.Is(w.Err, parse.ErrLimit) {
			cut[filepath.Base(w.Pos.File)] = true
		}
	}
	// handshakes-131143.pcap is 3,835 bytes, handshakes-131148.pcap 2,280.
	if !cut["handshakes-131143.pcap.gz"] || !cut["handshakes-131148.pcap.gz"] || len(cut) != 2 {
		t.Errorf("files cut: %v; warnings %v", cut, warns)
	}
	for _, in := range snap.Inputs {
		if cut[filepath.Base(in.Path)] != (in.Warnings > 0) || in.Details["series_files"] != rotatedSeriesFiles(in.Path) {
			t.Errorf("%s: %d warnings, details %v", in.Path, in.Warnings, in.Details)
		}
	}
}

// writeFiles writes each file of files (name: its content) into dir.
func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readFixture returns the content of a file of fixtures/captures.
func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	return readFile(t, filepath.Join(testutil.Root(), "fixtures/captures", name))
}

// A file of a series' name that is no capture does not hold the series
// back: it is read where the walk meets the last file of the name, ahead
// of the captures after it.
func TestSeriesWithTextOfItsName(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{"handshakes-131150.pcap": []byte("not a capture\n"), "other.pcap": readFixture(t, "portscan.pcap")}
	for _, p := range rotatedPaths(t) {
		files[filepath.Base(p)] = readFixture(t, "rotated/"+filepath.Base(p))
	}
	writeFiles(t, dir, files)
	snap, _, err := parse.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range snap.Captures {
		got = append(got, filepath.Base(c.File))
	}
	if len(got) != 7 || got[6] != "other.pcap" {
		t.Errorf("captures in the order %v, want the series' six, then other.pcap", got)
	}
}

// Compressed captures named alike that are no series count once in the
// bundle's total (Limits.MaxTotalBytes), though their heads are read to
// find out.
func TestNamedAlikeCountOnce(t *testing.T) {
	dir := t.TempDir()
	a, b := readFixture(t, "handshakes.pcap"), readFixture(t, "handshakes-nsec.pcap")
	writeFiles(t, dir, map[string][]byte{"node1.pcap.gz": gz(a), "node2.pcap.gz": gz(b)})
	limits := parse.Limits{MaxTotalBytes: int64(len(a)+len(b)) + 1000}
	snap, warns, err := parse.Open(context.Background(), dir, &parse.Options{Limits: limits})
	if err != nil || len(warns) > 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Captures) != 2 || snap.Captures[0].Packets+snap.Captures[1].Packets != 140 {
		t.Errorf("captures %+v", snap.Captures)
	}
}

// Files of one name given as paths are one series, and those of a
// directory given beside them another: each group is whole (but for the
// directory's file of no packet, read alone).
func TestSeriesFromPathsAndDirectory(t *testing.T) {
	paths := rotatedPaths(t)
	dir := filepath.Dir(paths[0])
	snap, warns, err := parse.OpenAll(context.Background(), []string{paths[1], dir, paths[5]}, nil)
	if err != nil || len(warns) > 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	groups := map[int][]string{}
	for _, in := range snap.Inputs {
		n := in.Details["series_files"]
		groups[n] = append(groups[n], filepath.Base(in.Path))
	}
	slices.Sort(groups[5])
	if len(slices.Compact(groups[5])) != 5 || len(groups[2]) != 2 || len(groups[0]) != 1 || len(snap.Inputs) != 8 {
		t.Errorf("inputs by series length: %v, want the directory's five files of packets in a series of 5, the paths' two in one of 2", groups)
	}
}
