package capture_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

// ReadRotated reads a real series as ReadSeries does, and ends its run
// before a file that does not follow the one before, without opening it
// when its Head says so, opening it once for its head otherwise. The
// series' first file is empty (tcpdump -G writes one when no packet came):
// it is a run of its own.
func TestReadRotated(t *testing.T) {
	files, opened := rotatedFiles(t)
	for i := range files {
		files[i].Head = head(t, files[i].Name)
	}
	if _, _, n, err := capture.ReadRotated(context.Background(), files, capture.Options{}); err != nil || n != 1 {
		t.Fatalf("ReadRotated: a run of %d, %v; want the empty file alone", n, err)
	}
	files = files[1:]
	series, sInfos, err := capture.ReadSeries(context.Background(), files, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rot, rInfos, n, err := capture.ReadRotated(context.Background(), files, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(files) || len(rot.Attempts) != len(series.Attempts) || rot.Info.Counts != series.Info.Counts || len(rInfos) != len(sInfos) {
		t.Errorf("ReadRotated: a run of %d, %d attempts, %+v; ReadSeries: %d, %+v", n, len(rot.Attempts), rot.Info.Counts, len(series.Attempts), series.Info.Counts)
	}

	// The first file again after the last: it starts 5 s before the
	// last ends.
	first := files[0]
	clear(opened)
	again := append(files[:len(files):len(files)], first)
	res, infos, n, err := capture.ReadRotated(context.Background(), again, capture.Options{})
	if err != nil || n != len(files) || len(infos) != len(files) || len(res.Attempts) != len(series.Attempts) {
		t.Fatalf("ReadRotated: a run of %d, %d infos, %v; want the first %d files, as a series", n, len(infos), err, len(files))
	}
	if opened[first.Name] != 1 {
		t.Errorf("%s opened %d times, only as the first file: its Head tells it does not follow", first.Name, opened[first.Name])
	}
	first.Head = capture.Head{}
	clear(opened)
	again[len(again)-1] = first
	if _, _, n, err := capture.ReadRotated(context.Background(), again, capture.Options{}); err != nil || n != len(files) {
		t.Fatalf("ReadRotated without Head: a run of %d, %v; want %d", n, err, len(files))
	}
	if opened[first.Name] != 2 {
		t.Errorf("%s opened %d times: without its Head it is opened for it, and not read", first.Name, opened[first.Name])
	}

	// What is handed on is the run's alone.
	handed := 0
	_, _, n, err = capture.ReadRotated(context.Background(), again[len(files)-1:], capture.Options{EachAttempt: func(model.Attempt) { handed++ }})
	if err != nil || n != 1 {
		t.Fatalf("ReadRotated of the last file and the first: a run of %d, %v; want 1", n, err)
	}
	last, err := capture.Read(context.Background(), mustOpen(t, filepath.Join(testutil.Root(), "fixtures/captures/rotated", files[len(files)-1].Name)), files[len(files)-1].Name, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if handed != len(last.Attempts) {
		t.Errorf("%d attempts handed on, the last file alone has %d", handed, len(last.Attempts))
	}
}

// A file follows the one before in a series only when it is of its format
// and link type, and starts after it, no more than the skew of a capture's
// timestamps (100 ms) before its last packet: not at once, nor amid it, as
// captures named alike taken together do.
func TestReadRotatedFollows(t *testing.T) {
	files, _ := rotatedFiles(t)
	files = files[1:] // past the empty one
	for i := range files {
		files[i].Head = head(t, files[i].Name)
	}
	h := files[1].Head
	first, err := capture.Read(context.Background(), mustOpen(t, filepath.Join(testutil.Root(), "fixtures/captures/rotated", files[0].Name)), files[0].Name, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	end := first.Info.Last // the first file's last packet
	at := func(t time.Time) capture.Head { return capture.Head{Format: h.Format, LinkType: h.LinkType, First: t} }
	for _, c := range []struct {
		name string
		head capture.Head
		runs bool
	}{
		{"as it is", h, true},
		{"another format", capture.Head{Format: "pcapng", LinkType: h.LinkType, First: h.First}, false},
		{"another link type", capture.Head{Format: h.Format, LinkType: "Linux SLL2", First: h.First}, false},
		{"at once", at(files[0].Head.First), false},
		{"amid it", at(files[0].Head.First.Add(time.Microsecond)), false},
		{"50 ms before its last packet", at(end.Add(-50 * time.Millisecond)), true},
		{"150 ms before its last packet", at(end.Add(-150 * time.Millisecond)), false},
		{"an hour after it", at(end.Add(time.Hour)), true},
		{"no packet", capture.Head{Format: h.Format}, false},
	} {
		two := []capture.SeriesFile{files[0], files[1]}
		two[1].Head = c.head
		if _, _, n, err := capture.ReadRotated(context.Background(), two, capture.Options{}); err != nil || (n == 2) != c.runs {
			t.Errorf("%s: a run of %d, %v; want a series: %v", c.name, n, err, c.runs)
		}
	}
}

// head returns the Head of a file of the rotated fixture.
func head(t *testing.T, name string) capture.Head {
	t.Helper()
	h, err := capture.ReadHead(mustOpen(t, filepath.Join(testutil.Root(), "fixtures/captures/rotated", name)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A run of one file reads as Read reads it: the same attempts and the
// same Info, for every capture fixture.
func TestReadRotatedRunOfOne(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(testutil.Root(), "fixtures/captures/*.pcap*"))
	if err != nil || len(paths) < 5 {
		t.Fatalf("%v %v", paths, err)
	}
	for _, p := range paths {
		for _, summary := range []bool{false, true} {
			opts := capture.Options{Node: "node-a", Summary: capture.Summary{Enabled: summary}}
			alone, err := capture.Read(context.Background(), mustOpen(t, p), p, opts)
			if alone == nil {
				t.Fatalf("%s: %v", p, err)
			}
			files := []capture.SeriesFile{{Name: p, Open: func() (io.ReadCloser, error) { return os.Open(p) }}, {Name: "earlier", Head: capture.Head{Format: "pcap", First: time.Unix(1, 0)}}}
			res, infos, n, rerr := capture.ReadRotated(context.Background(), files, opts)
			if n != 1 || len(infos) != 1 {
				t.Fatalf("%s: a run of %d, %d infos; want 1 (the second file starts before it)", p, n, len(infos))
			}
			if fmt.Sprint(err) != fmt.Sprint(rerr) {
				t.Errorf("%s: error %v, Read's %v", p, rerr, err)
			}
			if !reflect.DeepEqual(infos[0], alone.Info) {
				t.Errorf("%s, summary %v: Info\n%+v\nRead's\n%+v", p, summary, infos[0], alone.Info)
			}
			res.Info = alone.Info
			if !reflect.DeepEqual(res, alone) {
				t.Errorf("%s, summary %v: the Result differs from Read's", p, summary)
			}
		}
	}
}

func mustOpen(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// ReadHead gives the file's format, and its first record's link type and
// time; only its format for a capture of no record (tcpdump -G writes one
// when no packet came), and an error for what is not a capture.
func TestReadHead(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "fixtures/captures")
	for _, name := range []string{"rotated/handshakes-131143.pcap", "handshakes.pcap.gz", "handshakes.pcapng", "any-bridge.pcap"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		res, err := capture.Read(context.Background(), bytes.NewReader(b), name, capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := capture.Head{Format: res.Info.Format, LinkType: res.Info.LinkType, First: res.Info.First}
		if got, err := capture.ReadHead(bytes.NewReader(b)); err != nil || got != want {
			t.Errorf("%s: ReadHead: %+v, %v; the capture: %+v", name, got, err, want)
		}
	}
	empty, err := os.ReadFile(filepath.Join(dir, "rotated/handshakes-131142.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := capture.ReadHead(bytes.NewReader(empty)); err != nil || got != (capture.Head{Format: "pcap"}) {
		t.Errorf("ReadHead of a capture without records: %+v, %v", got, err)
	}
	if _, err := capture.ReadHead(bytes.NewReader([]byte("not a capture at all"))); !errors.Is(err, capture.ErrNotCapture) {
		t.Errorf("ReadHead of text: %v, want ErrNotCapture", err)
	}
}

// A series whose context ends in one of its files keeps what it read:
// the files before, that file up to where it stopped; the files after it
// are named as not read. ReadRotated ends its run with that file.
func TestReadSeriesCanceled(t *testing.T) {
	for _, rotated := range []bool{false, true} {
		files, opened := rotatedFiles(t)
		files = files[1:] // the first, of no packet, is a run of its own
		ctx, cancel := context.WithCancel(context.Background())
		const cut = 0 // handshakes-131143.pcap, of 39 packets
		open := files[cut].Open
		files[cut].Open = func() (io.ReadCloser, error) {
			f, err := open()
			if err != nil {
				return nil, err
			}
			b, err := io.ReadAll(f)
			f.Close()
			return io.NopCloser(&testutil.CancelingReader{R: bytes.NewReader(b), Left: len(b) * 2 / 3, Ctx: ctx, Cancel: cancel}), err
		}
		res, infos, n, err := readRun(ctx, files, rotated)
		if res == nil || len(infos) != cut+1 || infos[cut].Packets == 0 || infos[cut].Packets >= 39 || !errors.Is(err, context.Canceled) {
			t.Fatalf("rotated %v: %v, %d infos, %v", rotated, res, len(infos), err)
		}
		var list model.ErrorList
		errors.As(err, &list)
		var got []string
		for _, e := range list {
			got = append(got, e.Error())
		}
		want := []string{fmt.Sprintf("%s#frame=%d: not read from here on, what came before kept: context canceled", files[cut].Name, infos[cut].Packets+1)}
		if rotated {
			if n != cut+1 {
				t.Errorf("run of %d files, want %d", n, cut+1)
			}
		} else {
			for _, f := range files[cut+1:] {
				want = append(want, f.Name+": not read: the run was cut short before it: context canceled")
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("rotated %v: errors\n%q\nwant\n%q", rotated, got, want)
		}
		for _, f := range files[cut+1:] {
			if opened[f.Name] > 0 {
				t.Errorf("%s opened", f.Name)
			}
		}
	}
}

// A series whose context ends before a file's first frame keeps the files
// read before it: ReadSeries names that file and those after it as not
// read, ReadRotated ends its run before it.
func TestReadSeriesCanceledBeforeAFile(t *testing.T) {
	for _, rotated := range []bool{false, true} {
		files, _ := rotatedFiles(t)
		files = files[1:] // the first, of no packet, is a run of its own
		ctx, cancel := context.WithCancel(context.Background())
		open := files[1].Open
		files[1].Open = func() (io.ReadCloser, error) {
			f, err := open()
			if err != nil {
				return nil, err
			}
			return &readCloser{&testutil.CancelingReader{R: f, Left: 0, Ctx: ctx, Cancel: cancel}, f}, nil
		}
		res, infos, n, err := readRun(ctx, files, rotated)
		if res == nil || len(infos) != 1 || infos[0].Packets != 39 || res.Info.Packets != 39 {
			t.Fatalf("rotated %v: %v, %d infos, %v", rotated, res, len(infos), err)
		}
		if rotated && n != 1 {
			t.Errorf("run of %d files, want 1", n)
		}
		if !rotated && !strings.Contains(fmt.Sprint(err), files[1].Name+": not read: the run was cut short before it") {
			t.Errorf("error %v: want %s named as not read", err, files[1].Name)
		}
	}
}

// readRun reads files with ReadRotated when rotated, and with ReadSeries
// (its n then 0) when not.
func readRun(ctx context.Context, files []capture.SeriesFile, rotated bool) (*capture.Result, []model.CaptureInfo, int, error) {
	if rotated {
		return capture.ReadRotated(ctx, files, capture.Options{})
	}
	res, infos, err := capture.ReadSeries(ctx, files, capture.Options{})
	return res, infos, 0, err
}

// readCloser reads from r and closes c.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (r *readCloser) Close() error { return r.c.Close() }
