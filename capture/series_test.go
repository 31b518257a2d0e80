package capture_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

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

// A file given twice in a series counts its connections' outcomes once,
// where they are first read: the files still add up to the series.
func TestReadSeriesFileTwice(t *testing.T) {
	files, _ := rotatedFiles(t)
	files = append(files, files[1])
	res, infos, err := capture.ReadSeries(context.Background(), files, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sum model.Counts
	for _, in := range infos {
		sum = addCounts(sum, in.Counts)
	}
	if sum != res.Info.Counts || infos[6].Counts.Established+infos[6].Counts.Refused+infos[6].Counts.Unanswered != 0 {
		t.Errorf("the files add up to\n%+v\nthe series\n%+v\nthe file read again: %+v", sum, res.Info.Counts, infos[6].Counts)
	}
}

// addCounts adds b's counters to a's.
func addCounts(a, b model.Counts) model.Counts {
	return model.Counts{}.Sub(model.Counts{}.Sub(a).Sub(b))
}

// ReadRotated reads a real series as ReadSeries does, and stops at a file
// that does not follow the one before: before opening it when its First
// says so, after reading it otherwise.
func TestReadRotated(t *testing.T) {
	files, opened := rotatedFiles(t)
	series, sInfos, err := capture.ReadSeries(context.Background(), files, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range files {
		p := filepath.Join(testutil.Root(), "fixtures/captures/rotated", files[i].Name)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		files[i].First, err = capture.FirstTime(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	rot, rInfos, err := capture.ReadRotated(context.Background(), files, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rot.Attempts) != len(series.Attempts) || rot.Info.Counts != series.Info.Counts || len(rInfos) != len(sInfos) {
		t.Errorf("ReadRotated: %d attempts, %+v; ReadSeries: %d, %+v", len(rot.Attempts), rot.Info.Counts, len(series.Attempts), series.Info.Counts)
	}

	// The second file again after the last: it starts 5 s before the
	// last ends.
	second := files[1]
	clear(opened)
	again := append(files[:len(files):len(files)], second)
	res, _, err := capture.ReadRotated(context.Background(), again, capture.Options{})
	if !errors.Is(err, capture.ErrNotRotated) || res != nil {
		t.Fatalf("ReadRotated: %v, %v; want ErrNotRotated and no Result", res, err)
	}
	if opened[second.Name] != 1 {
		t.Errorf("%s opened %d times, only as the second file: its First tells it does not follow", second.Name, opened[second.Name])
	}
	second.First = time.Time{}
	clear(opened)
	again[len(again)-1] = second
	if _, _, err := capture.ReadRotated(context.Background(), again, capture.Options{}); !errors.Is(err, capture.ErrNotRotated) {
		t.Fatalf("ReadRotated without First: %v, want ErrNotRotated", err)
	}
	if opened[second.Name] != 2 {
		t.Errorf("%s opened %d times: without its First it is read, then found not to follow", second.Name, opened[second.Name])
	}
}

// FirstTime gives the first record's time, the zero Time for a capture
// of no record (tcpdump -G writes one when no packet came), and an error
// for what is not a capture.
func TestFirstTime(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "fixtures/captures/rotated")
	b, err := os.ReadFile(filepath.Join(dir, "handshakes-131143.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := capture.Read(context.Background(), bytes.NewReader(b), "h.pcap", capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := capture.FirstTime(bytes.NewReader(b)); err != nil || !got.Equal(res.Info.First) {
		t.Errorf("FirstTime: %v, %v; the capture's first packet: %v", got, err, res.Info.First)
	}
	empty, err := os.ReadFile(filepath.Join(dir, "handshakes-131142.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := capture.FirstTime(bytes.NewReader(empty)); err != nil || !got.IsZero() {
		t.Errorf("FirstTime of a capture without records: %v, %v", got, err)
	}
	if _, err := capture.FirstTime(bytes.NewReader([]byte("not a capture at all"))); !errors.Is(err, capture.ErrNotCapture) {
		t.Errorf("FirstTime of text: %v, want ErrNotCapture", err)
	}
}
