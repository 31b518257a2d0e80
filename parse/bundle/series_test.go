package bundle_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
}
