package bundle_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
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
		if in.Details["series_files"] != 6 {
			t.Errorf("%s: details %v, want series_files=6", in.Path, in.Details)
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
		if in.Details["series_files"] != 6 {
			t.Errorf("%s: details %v, want series_files=6", in.Path, in.Details)
		}
	}
}

// A series compressed file by file with gzip (tcpdump -z gzip) is read
// as one too.
func TestRotatedSeriesGzipped(t *testing.T) {
	dir := t.TempDir()
	for _, p := range rotatedPaths(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)+".gz"), z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap, warns, err := parse.Open(context.Background(), dir, &parse.Options{KeepAttempts: true})
	if err != nil || len(warns) > 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Inputs) != 6 || len(snap.Attempts) != 11 {
		t.Errorf("%d inputs, %d attempts, want 6 and 11", len(snap.Inputs), len(snap.Attempts))
	}
	for _, in := range snap.Inputs {
		if in.Details["series_files"] != 6 {
			t.Errorf("%s: details %v, want series_files=6", in.Path, in.Details)
		}
	}
}

// Captures named alike that do not follow each other in time (two taken
// at once, here the same 5-second one twice) are read each on its own, as
// if their names told nothing.
func TestNamedAlikeNotRotated(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/captures/handshakes.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, n := range []string{"node1.pcap", "node2.pcap"} {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
