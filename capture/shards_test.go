package capture_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/testutil"
)

// readShards reads the capture in b with n shards.
func readShards(t *testing.T, b []byte, name string, n int, summary bool) (*capture.Result, string) {
	t.Helper()
	res, err := capture.Read(context.Background(), bytes.NewReader(b), name, capture.Options{Shards: n, Summary: capture.Summary{Enabled: summary}})
	return res, fmt.Sprint(err)
}

// sameWithShards checks that b reads the same with 1 shard and with each of
// counts, with and without summary mode.
func sameWithShards(t *testing.T, b []byte, name string, counts ...int) {
	t.Helper()
	for _, summary := range []bool{false, true} {
		want, wantErr := readShards(t, b, name, 1, summary)
		for _, n := range counts {
			got, gotErr := readShards(t, b, name, n, summary)
			if gotErr != wantErr {
				t.Errorf("%s, %d shards, summary %v: error %q, one shard gives %q", name, n, summary, gotErr, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %d shards, summary %v: the result differs from one shard's%s", name, n, summary, firstDiff(got, want))
			}
		}
	}
}

// firstDiff names the first part of two results that differs.
func firstDiff(got, want *capture.Result) string {
	switch {
	case got == nil || want == nil:
		return fmt.Sprintf(" (%v against %v)", got, want)
	case !reflect.DeepEqual(got.Info, want.Info):
		return fmt.Sprintf(": info %+v, want %+v", got.Info, want.Info)
	case len(got.Attempts) != len(want.Attempts):
		return fmt.Sprintf(": %d attempts, want %d", len(got.Attempts), len(want.Attempts))
	}
	for i := range got.Attempts {
		if !reflect.DeepEqual(got.Attempts[i], want.Attempts[i]) {
			return fmt.Sprintf(": attempt %d is %+v, want %+v", i, got.Attempts[i], want.Attempts[i])
		}
	}
	for i := range min(len(got.Endpoints), len(want.Endpoints)) {
		if !reflect.DeepEqual(got.Endpoints[i], want.Endpoints[i]) {
			return fmt.Sprintf(": endpoints %d is %+v, want %+v", i, got.Endpoints[i], want.Endpoints[i])
		}
	}
	return fmt.Sprintf(": %d endpoints (want %d), %d ICMP (want %d), %d ARP (want %d)",
		len(got.Endpoints), len(want.Endpoints), len(got.ICMP), len(want.ICMP), len(got.ARP), len(want.ARP))
}

// Every capture of the fixtures and of the shared corpus gives the same
// Result, and so the same findings and flows, whatever the number of
// shards tracking its streams.
func TestShardsSameResultFixtures(t *testing.T) {
	roots := []string{filepath.Join(testutil.Root(), "fixtures")}
	files := capture.CaptureFiles(t, roots...)
	if len(files) < 20 {
		t.Fatalf("only %d captures under %v", len(files), roots)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameWithShards(t, b, filepath.Base(f), 2, 5)
	}
}

func TestShardsSameResultCorpus(t *testing.T) {
	dir := testutil.CorpusDir(t, "pcap")
	files := capture.CaptureFiles(t, dir)
	if len(files) < 100 {
		t.Fatalf("only %d captures in %s", len(files), dir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameWithShards(t, b, filepath.Base(f), 3)
	}
}

// A capture of many windows, with what crosses streams in all its forms
// (4-tuples reused, copies of one SYN before and after a DNAT, ICMP errors
// quoting streams, failures beyond summary mode's sample, idle streams
// swept, timestamps slightly out of order), gives the same Result with 1 to
// 7 shards, and so does a series of its parts.
func TestShardsSameResultBusy(t *testing.T) {
	b := busyCapture(t)
	one, err := capture.Read(context.Background(), bytes.NewReader(b), "busy.pcap", capture.Options{Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := one.Info.Counts
	if c.Packets < 20000 || c.TCPStreams < 5000 || c.Refused < 1000 || c.ICMPUnreach < 100 || c.ARP == 0 {
		t.Fatalf("the capture does not hold what the test needs: %+v", c)
	}
	var reused, icmp int
	for _, a := range one.Attempts {
		if a.Reused != "" {
			reused++
		}
	}
	for _, e := range one.ICMP {
		if e.AttemptFrame != 0 {
			icmp++
		}
	}
	if reused < 100 || icmp < 100 {
		t.Fatalf("%d attempts reuse a 4-tuple, %d ICMP errors name their attempt", reused, icmp)
	}
	sum, err := capture.Read(context.Background(), bytes.NewReader(b), "busy.pcap", capture.Options{Shards: 1, Summary: capture.Summary{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Endpoints) == 0 || len(sum.Attempts) >= len(one.Attempts) {
		t.Fatalf("summary mode folded nothing: %d endpoints, %d attempts of %d", len(sum.Endpoints), len(sum.Attempts), len(one.Attempts))
	}
	sameWithShards(t, b, "busy.pcap", 2, 3, 7)

	// The same traffic as a rotated series of three files.
	parts := splitRecords(t, b, 3)
	series := func(n int) *capture.Result {
		var in []capture.SeriesFile
		for i, p := range parts {
			in = append(in, capture.SeriesFile{Name: fmt.Sprintf("busy.pcap%d", i), Open: func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(p)), nil
			}})
		}
		res, _, err := capture.ReadSeries(context.Background(), in, capture.Options{Shards: n, Summary: capture.Summary{Enabled: true}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	want := series(1)
	for _, n := range []int{2, 4} {
		if got := series(n); !reflect.DeepEqual(got, want) {
			t.Errorf("series, %d shards: the result differs from one shard's%s", n, firstDiff(got, want))
		}
	}
}
