package flows_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// replayAttempts returns n attempts of a capture, many batches of them,
// in the order a read hands them on: printable names of varying widths,
// each at a frame of one file, every list and pointer set now and then,
// a few times past the years RFC 3339 writes. Their server ports are
// 1000 + i/100, so that a filter by port selects a run of them.
func replayAttempts(n int) []model.Attempt {
	rng := rand.New(rand.NewPCG(21, 22))
	t0 := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	names := []string{"SF", "REJ", "S0", "ShADadFf", "Sr", "a-rather-long-history-of-letters"}
	pick := func() string { return names[rng.IntN(len(names))] }
	at := func() time.Time {
		if rng.IntN(500) == 0 {
			return time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC) // clamped
		}
		return t0.Add(time.Duration(rng.Int64N(int64(time.Hour))))
	}
	segs := func(i int) []model.Seg {
		var l []model.Seg
		for range rng.IntN(3) {
			l = append(l, model.Seg{Frame: i + 1 + rng.IntN(50), Time: at()})
		}
		return l
	}
	seg := func(i int) *model.Seg {
		if rng.IntN(2) == 0 {
			return nil
		}
		return &model.Seg{Frame: i + 1 + rng.IntN(50), Time: at()}
	}
	var all []model.Attempt
	for i := range n {
		client := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), uint16(30000+rng.IntN(30000)))
		server := netip.AddrPortFrom(netip.MustParseAddr("10.96.0.10"), uint16(1000+i/100))
		if rng.IntN(10) == 0 {
			server = netip.AddrPortFrom(netip.MustParseAddr("fd00::10"), server.Port())
		}
		a := model.Attempt{Pos: model.Pos{File: "c.pcap", Frame: i + 1}, Client: client, Server: server,
			Outcome: model.Outcome(pick()), ConnState: pick(), History: pick(), Start: at(), End: at(),
			SYN: segs(i), SYNACK: segs(i), ClientRST: segs(i), ServerRST: segs(i), FirstAck: seg(i),
			ClientFIN: seg(i), ServerFIN: seg(i), Packets: rng.IntN(1 << 20), ClientBytes: rng.Int64N(1 << 40),
			ServerBytes: rng.Int64N(1 << 20), ISN: rng.Uint32(), MSS: 1460}
		if rng.IntN(3) == 0 {
			a.ClientData = &model.DataSizes{MaxSent: rng.IntN(9000), MaxAcked: rng.IntN(9000), Retx: segs(i)}
		}
		all = append(all, a)
	}
	return all
}

// spoolOf returns a Spool keeping all.
func spoolOf(t *testing.T, all []model.Attempt) *flows.Spool {
	t.Helper()
	return spoolOn(t, spoolFile(t), all)
}

// closingWriter is what flows' writers of the JSON form and tables are.
type closingWriter interface {
	flows.AttemptWriter
	Close() error
}

// replayWriters returns a function making each writer of the JSON form
// and the tables (at no width, and fitted to 30, 80 and 150 columns) of
// all, filtered by f, writing to w; and their names.
func replayWriters(t *testing.T, all []model.Attempt, f flows.Filter) ([]string, func(i int, w io.Writer) closingWriter) {
	t.Helper()
	b, m := flows.NewBuilder(f), flows.NewTableWidths()
	for i := range all {
		if b.Add(&all[i]) {
			m.Add(&all[i])
		}
	}
	if !m.Plain() || !m.Fits() {
		t.Fatal("the attempts do not make a plain table that fits")
	}
	tab := b.Table(nil)
	names := []string{"json", "table", "width 30", "width 80", "width 150"}
	return names, func(i int, w io.Writer) closingWriter {
		switch i {
		case 0:
			return flows.NewJSONWriter(w, tab, f)
		case 1:
			return flows.NewTableWriter(w, tab, f, m)
		}
		return flows.NewFittedWriter(w, tab, f, m, []int{30, 80, 150}[i-2])
	}
}

// Replay writes what Each through the writer's Write writes, byte for
// byte, on one goroutine or several: the JSON form and every table,
// filtered so that the first batches, or all of them, have no attempt to
// write, or not at all.
func TestReplayAsEach(t *testing.T) {
	all := replayAttempts(3000) // 12 batches
	for _, procs := range []int{1, 4} {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		for _, f := range []flows.Filter{{}, {Ports: []uint16{1020, 1021, 1029}}, {Ports: []uint16{9}}} {
			names, writer := replayWriters(t, all, f)
			for i, name := range names {
				var want, got bytes.Buffer
				w := writer(i, &want)
				if err := spoolOf(t, all).Each(context.Background(), w.Write); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				w = writer(i, &got)
				if err := spoolOf(t, all).Replay(context.Background(), w); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Errorf("GOMAXPROCS %d, filter %v, %s:\n%s", procs, f, name, testutil.DiffLines(want.String(), got.String()))
				}
			}
		}
	}
}

// A table of one block per row, too narrow for its columns, is written as
// Each writes it: its blocks are apart by a line the first has not.
func TestReplayBlocks(t *testing.T) {
	all := replayAttempts(600)
	b, m := flows.NewBuilder(flows.Filter{}), flows.NewTableWidths()
	for i := range all {
		b.Add(&all[i])
		m.Add(&all[i])
	}
	var want, got bytes.Buffer
	w := flows.NewFittedWriter(&want, b.Table(nil), flows.Filter{}, m, 12)
	if err := spoolOf(t, all).Each(context.Background(), w.Write); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w = flows.NewFittedWriter(&got, b.Table(nil), flows.Filter{}, m, 12)
	if err := spoolOf(t, all).Replay(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if !strings.Contains(want.String(), "\n\n") {
		t.Fatalf("not blocks at 12 columns:\n%.500s", want.String())
	}
	if got.String() != want.String() {
		t.Errorf("blocks:\n%s", testutil.DiffLines(want.String(), got.String()))
	}
}

// Replay stops between batches once its context has ended, with the
// context's error: what it wrote is a start of the whole, in order, and
// after a context ended from the start, no attempt.
func TestReplayStops(t *testing.T) {
	all := replayAttempts(5000) // 20 batches
	write := func(ctx context.Context) (string, error) {
		var out bytes.Buffer
		w := flows.NewJSONWriter(&out, &flows.Table{}, flows.Filter{})
		err := spoolOf(t, all).Replay(ctx, w)
		w.Close()
		// What comes before the end of the array, of attempts or none.
		return strings.TrimSuffix(strings.TrimSuffix(out.String(), "\n  ]\n}\n"), "[]\n}\n"), err
	}
	whole, err := write(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, after := range []int{0, 8} {
		cut, err := write(&endingContext{Context: context.Background(), left: after})
		n := strings.Count(cut, `"client"`)
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(whole, cut) || n > after*256 || after > 0 && n == 0 {
			t.Errorf("context ended after %d checks: %d attempts written, error %v, a start of the whole: %v",
				after, n, err, strings.HasPrefix(whole, cut))
		}
	}
}

// endingContext ends once its Err has been asked left times.
type endingContext struct {
	context.Context
	left int
}

func (c *endingContext) Err() error {
	if c.left == 0 {
		return context.Canceled
	}
	c.left--
	return nil
}

// A spool file damaged under Replay gives Each's error, and the attempts
// before the one damaged, as Each writes them.
func TestReplayDamaged(t *testing.T) {
	all := replayAttempts(1000)
	var outs [2]string
	var errs [2]error
	for k := range 2 {
		f := &damaged{File: spoolFile(t), do: func(f *os.File, size int64) error { return f.Truncate(size * 2 / 3) }}
		s := flows.NewSpool(f)
		for i := range all {
			s.Add(&all[i])
		}
		var out bytes.Buffer
		w := flows.NewJSONWriter(&out, &flows.Table{}, flows.Filter{})
		if k == 0 {
			errs[k] = s.Each(context.Background(), w.Write)
		} else {
			errs[k] = s.Replay(context.Background(), w)
		}
		w.Close()
		outs[k] = out.String()
	}
	if errs[0] == nil || fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) || outs[0] != outs[1] {
		t.Errorf("Each: %v, Replay: %v; the same output: %v", errs[0], errs[1], outs[0] == outs[1])
	}
	if n := strings.Count(outs[1], `"client"`); n == 0 || n >= len(all) {
		t.Errorf("%d attempts written of %d", n, len(all))
	}
}

// Once its output fails, Replay formats and reads no more, and the
// writer's Close says why, as after Each.
func TestReplayStopsWhenWritingFails(t *testing.T) {
	all := replayAttempts(40000)
	names, writer := replayWriters(t, all, flows.Filter{})
	for i, name := range names {
		var errs [2]error
		var read [2]int64
		for k := range 2 {
			f := &countingFile{File: spoolFile(t)}
			s := spoolOn(t, f, all)
			w := writer(i, full{})
			var err error
			if k == 0 {
				err = s.Each(context.Background(), w.Write)
			} else {
				err = s.Replay(context.Background(), w)
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			errs[k], read[k] = w.Close(), f.read
		}
		if !errors.Is(errs[0], errFull) || !errors.Is(errs[1], errFull) {
			t.Errorf("%s: Close after Each %v, after Replay %v", name, errs[0], errs[1])
		}
		// At 30 columns the attempts' table is of blocks, which Replay
		// writes through Each.
		if name != "width 30" && read[1] >= read[0]/2 {
			t.Errorf("%s: Replay read %d bytes of the spool after the output failed, Each %d", name, read[1], read[0])
		}
	}
}

// spoolOn returns a Spool keeping all in f.
func spoolOn(t *testing.T, f io.ReadWriteSeeker, all []model.Attempt) *flows.Spool {
	t.Helper()
	s := flows.NewSpool(f)
	for i := range all {
		if !s.Add(&all[i]) {
			t.Fatalf("attempt %d not kept: %v", i+1, s.Err())
		}
	}
	return s
}

// countingFile counts the bytes read from it.
type countingFile struct {
	*os.File
	read int64
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.read += int64(n)
	return n, err
}

// full is an output that takes nothing, as a full disk.
type full struct{}

var errFull = errors.New("no space left")

func (full) Write([]byte) (int, error) { return 0, errFull }
