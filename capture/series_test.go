package capture_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// rotatedFiles returns the files of the real tcpdump -G 1 series in
// fixtures/captures/rotated, oldest first, and a count of the times each
// was opened.
func rotatedFiles(t *testing.T) ([]capture.SeriesFile, map[string]int) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(testutil.Root(), "fixtures/captures/rotated/*.pcap"))
	if err != nil || len(paths) != 6 {
		t.Fatalf("%v %v", paths, err)
	}
	opened := map[string]int{}
	var files []capture.SeriesFile
	for _, p := range paths {
		files = append(files, capture.SeriesFile{Name: filepath.Base(p), Open: func() (io.ReadCloser, error) {
			opened[filepath.Base(p)]++
			return os.Open(p)
		}})
	}
	return files, opened
}

// Each file of a series counts its own packets, and the streams and
// outcomes of the connections whose first packet it holds, as the
// attempts say; the files' counts add up to the series'. In the fixture,
// connections cross the files' boundaries (an unanswered SYN retransmitted
// a second later, in the next file).
func TestReadSeriesCountsByFile(t *testing.T) {
	files, _ := rotatedFiles(t)
	res, infos, err := capture.ReadSeries(context.Background(), files, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type tally struct{ streams, est, ref, unans, saRST int }
	want := map[string]*tally{}
	for _, f := range files {
		want[f.Name] = &tally{}
	}
	for _, a := range res.Attempts {
		w := want[a.Pos.File]
		if w == nil {
			t.Fatalf("attempt in %q", a.Pos.File)
		}
		w.streams++
		switch a.Outcome {
		case model.OutcomeEstablished:
			w.est++
		case model.OutcomeRefused:
			w.ref++
		case model.OutcomeUnanswered:
			w.unans++
		case model.OutcomeSynAckClientRST:
			w.saRST++
		}
	}
	var sum model.Counts
	for _, in := range infos {
		c := in.Counts
		got := tally{c.TCPStreams, c.Established, c.Refused, c.Unanswered, c.SYNACKClientRST}
		if got != *want[in.File] {
			t.Errorf("%s: counts %+v, its attempts %+v", in.File, got, *want[in.File])
		}
		sum = addCounts(sum, c)
	}
	if sum != res.Info.Counts {
		t.Errorf("the files add up to\n%+v\nthe series\n%+v", sum, res.Info.Counts)
	}
	if res.Info.Counts.SYNRetx == 0 {
		t.Error("no SYN retransmission: the one across a boundary is not seen")
	}
}

// addCounts adds b's counters to a's.
func addCounts(a, b model.Counts) model.Counts {
	return model.Counts{}.Sub(model.Counts{}.Sub(a).Sub(b))
}
