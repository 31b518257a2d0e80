package capture_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// sameHandedOn checks that the attempts Options.EachAttempt is handed are
// those Result.Attempts holds when it is not set, in the same order, with
// the rest of the Result the same, with and without summary mode, given
// or lent (Options.LendAttempts: each copied as it comes), and as rows
// (Options.EachRow), for each number of shards. It returns how many rows
// were handed on, and how many of them were worked out without their
// attempt.
func sameHandedOn(t *testing.T, b []byte, name string, shards ...int) (rows, plain int) {
	t.Helper()
	for _, summary := range []bool{false, true} {
		for _, n := range shards {
			opts := capture.Options{Shards: n, Summary: capture.Summary{Enabled: summary}}
			want, wantErr := capture.Read(context.Background(), bytes.NewReader(b), name, opts)
			for _, lend := range []bool{false, true} {
				sameHandedOnAs(t, b, name, opts, lend, want, wantErr)
			}
			plain += sameRowsAs(t, b, name, opts, want, wantErr)
			if want != nil {
				rows += len(want.Attempts)
			}
		}
	}
	return rows, plain
}

// mostPlain fails t unless most of the rows handed on were worked out
// without their attempts.
func mostPlain(t *testing.T, rows, plain int) {
	t.Helper()
	if rows == 0 || plain < rows*9/10 {
		t.Errorf("%d of %d rows worked out without their attempts", plain, rows)
	}
}

// sameRowsAs is sameHandedOn's check of the rows handed on
// (Options.EachRow): each is the row of the attempt held
// (model.Attempt.Row), worked out without it or holding it. It returns
// how many were worked out without it.
func sameRowsAs(t *testing.T, b []byte, name string, opts capture.Options, want *capture.Result, wantErr error) (plain int) {
	t.Helper()
	n, summary := opts.Shards, opts.Summary.Enabled
	var got []model.Row
	opts.EachRow = func(r *model.Row) {
		if r.Attempt != nil {
			got = append(got, r.Attempt.Row())
			return
		}
		got = append(got, *r)
		plain++
	}
	res, err := capture.Read(context.Background(), bytes.NewReader(b), name, opts)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Errorf("%s, %d shards, summary %v, rows: error %v, held %v", name, n, summary, err, wantErr)
	}
	if want == nil || res == nil {
		if want != res {
			t.Errorf("%s: result %v, held %v", name, res, want)
		}
		return plain
	}
	if len(res.Attempts) != 0 || len(got) != len(want.Attempts) {
		t.Errorf("%s, %d shards, summary %v: %d rows handed on, %d attempts held (%d while handed on)", name, n, summary, len(got), len(want.Attempts), len(res.Attempts))
		return plain
	}
	for i := range got {
		if w := want.Attempts[i].Row(); !reflect.DeepEqual(got[i], w) {
			t.Errorf("%s, %d shards, summary %v: row %d handed on is %+v, the attempt's %+v", name, n, summary, i, got[i], w)
			break
		}
	}
	res.Attempts = want.Attempts
	if !reflect.DeepEqual(res, want) {
		t.Errorf("%s, %d shards, summary %v, rows: the rest of the result differs%s", name, n, summary, firstDiff(res, want))
	}
	return plain
}

// sameHandedOnAs is sameHandedOn's check of one way of handing on, want
// and wantErr what the read with opts holding the attempts gave.
func sameHandedOnAs(t *testing.T, b []byte, name string, opts capture.Options, lend bool, want *capture.Result, wantErr error) {
	t.Helper()
	n, summary := opts.Shards, opts.Summary.Enabled
	var got []model.Attempt
	opts.EachAttempt = func(a model.Attempt) { got = append(got, a) }
	if lend {
		opts.LendAttempts = true
		opts.EachAttempt = func(a model.Attempt) { got = append(got, a.Clone()) }
	}
	res, err := capture.Read(context.Background(), bytes.NewReader(b), name, opts)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Errorf("%s, %d shards, summary %v, lent %v: error %v, held %v", name, n, summary, lend, err, wantErr)
	}
	if want == nil || res == nil {
		if want != res {
			t.Errorf("%s: result %v, held %v", name, res, want)
		}
		return
	}
	if len(res.Attempts) != 0 {
		t.Errorf("%s: %d attempts held while handed on", name, len(res.Attempts))
	}
	if len(got) != len(want.Attempts) {
		t.Errorf("%s, %d shards, summary %v, lent %v: %d attempts handed on, %d held", name, n, summary, lend, len(got), len(want.Attempts))
		return
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want.Attempts[i]) {
			t.Errorf("%s, %d shards, summary %v, lent %v: attempt %d handed on is %+v, held %+v", name, n, summary, lend, i, got[i], want.Attempts[i])
			break
		}
	}
	res.Attempts = want.Attempts
	if !reflect.DeepEqual(res, want) {
		t.Errorf("%s, %d shards, summary %v, lent %v: the rest of the result differs%s", name, n, summary, lend, firstDiff(res, want))
	}
}

// Lent attempts are built in the same memory, one after the other: an
// attempt kept as lent, uncopied, no longer holds its own segments once
// the next is built, where a copy does.
func TestLendAttemptsReused(t *testing.T) {
	var lent, copies []model.Attempt
	opts := capture.Options{Shards: 2, LendAttempts: true, EachAttempt: func(a model.Attempt) {
		lent, copies = append(lent, a), append(copies, a.Clone())
	}}
	if _, err := capture.Read(context.Background(), bytes.NewReader(busyCapture(t)), "busy.pcap", opts); err != nil {
		t.Fatal(err)
	}
	if len(lent) < 100 {
		t.Fatalf("%d attempts", len(lent))
	}
	changed := 0
	for i := range lent {
		if !reflect.DeepEqual(lent[i], copies[i]) {
			changed++
		}
	}
	if changed < len(lent)/2 {
		t.Errorf("%d of %d attempts kept as lent changed after they were handed on: their memory is not reused", changed, len(lent))
	}
}

// Every capture of the fixtures and the shared corpus hands on the
// attempts it holds otherwise (one in four under the race detector, which
// TestHandOnBusy gives the shards' goroutines to watch; make test runs
// every capture without it).
func TestHandOnSameAttempts(t *testing.T) {
	files := capture.CaptureFiles(t, filepath.Join(testutil.Root(), "fixtures"), testutil.CorpusDir(t, "pcap"))
	if len(files) < 100 {
		t.Fatalf("only %d captures", len(files))
	}
	rows, plain := 0, 0
	for _, f := range testutil.RaceSample(t, 4, files) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, p := sameHandedOn(t, b, filepath.Base(f), 1, 3)
		rows, plain = rows+r, plain+p
	}
	mostPlain(t, rows, plain)
}

// A capture whose streams are finalized far out of their creation order
// (reused 4-tuples, idle streams swept, closed ones parked, failures past
// summary mode's sample) hands them on in that order.
func TestHandOnBusy(t *testing.T) {
	rows, plain := sameHandedOn(t, busyCapture(t), "busy.pcap", 1, 2, 7)
	mostPlain(t, rows, plain)
}

// A capture whose thousands of streams are all live at its end has their
// attempts built at the end, in batches going round (lent, their memory
// used again for the batches after them), and hands on the attempts it
// holds otherwise.
func TestHandOnLiveAtEnd(t *testing.T) {
	var frames []busyFrame
	const syn, ackf, psh = 2, 16, 8
	for i := range 6000 {
		at := time.Duration(i) * 50 * time.Microsecond
		cli := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 7, byte(i / 250), byte(i%250 + 1)}), uint16(20000+i))
		srv := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 8, 0, byte(i%9 + 1)}), 443)
		isn := uint32(i * 11)
		add := func(d time.Duration, src, dst netip.AddrPort, flags uint8, seq, ack uint32, n int) {
			frames = append(frames, busyFrame{at: at + d, ts: at + d, data: tcpFrame(src, dst, flags, seq, ack, n)})
		}
		add(0, cli, srv, syn, isn, 0, 0)
		if i%5 == 0 {
			add(time.Second, cli, srv, syn, isn, 0, 0) // retransmitted, unanswered
			continue
		}
		add(time.Millisecond, srv, cli, syn|ackf, 9000, isn+1, 0)
		add(2*time.Millisecond, cli, srv, psh|ackf, isn+1, 9001, 40)
	}
	sortFrames(frames)
	rows, plain := sameHandedOn(t, writePcap(frames), "live.pcap", 1, 2)
	mostPlain(t, rows, plain)
}

// Pasted text, one Result per node, hands on each node's attempts (and
// rows) in turn.
func TestHandOnText(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testutil.Root(), "fixtures", "captures", "text", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no text captures: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		format, score := capture.SniffText(b)
		if score == 0 {
			continue
		}
		want, wantErr := capture.ReadText(context.Background(), bytes.NewReader(b), f, format, capture.Options{})
		var got []model.Attempt
		res, err := capture.ReadText(context.Background(), bytes.NewReader(b), f, format,
			capture.Options{EachAttempt: func(a model.Attempt) { got = append(got, a) }})
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || len(res) != len(want) {
			t.Fatalf("%s: %d results, error %v; held %d, %v", f, len(res), err, len(want), wantErr)
		}
		var held []model.Attempt
		for _, r := range want {
			held = append(held, r.Attempts...)
		}
		if !reflect.DeepEqual(got, held) {
			t.Errorf("%s: %d attempts handed on differ from the %d held", f, len(got), len(held))
		}
		// And as rows, which text, whose times need not be in UTC, may
		// hand on as their attempts.
		var rows []model.Row
		_, err = capture.ReadText(context.Background(), bytes.NewReader(b), f, format,
			capture.Options{EachRow: func(r *model.Row) {
				if r.Attempt != nil {
					rows = append(rows, r.Attempt.Row())
				} else {
					rows = append(rows, *r)
				}
			}})
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || len(rows) != len(held) {
			t.Fatalf("%s: %d rows, error %v; held %d, %v", f, len(rows), err, len(held), wantErr)
		}
		for i := range rows {
			if w := held[i].Row(); !reflect.DeepEqual(rows[i], w) {
				t.Errorf("%s: row %d handed on is %+v, the attempt's %+v", f, i, rows[i], w)
				break
			}
		}
	}
}
