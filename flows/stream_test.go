package flows_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// heldCSV is the CSV form of the table of every attempt of snap, built
// whole.
func heldCSV(t *testing.T, snap *model.Snapshot, f flows.Filter) string {
	return held(t, snap, f, "csv")
}

// held is the table of every attempt of snap, built whole, in format.
func held(t *testing.T, snap *model.Snapshot, f flows.Filter, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := flows.Build(snap, f).Write(&b, format); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// heldTable is the table form of every attempt of snap, built whole,
// fitted to width.
func heldTable(t *testing.T, snap *model.Snapshot, f flows.Filter, width int) string {
	t.Helper()
	var b bytes.Buffer
	if err := flows.Build(snap, f).WriteTable(&b, width); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// handedOnTable is the table form of the attempts of the capture file
// fitted to width, read twice with parse.Options.EachAttempt: by a
// Builder and TableWidths, then by a TableWriter (width 0) or a
// FittedWriter; "" when the sizes do not allow it (TableWidths.Plain,
// TableWidths.Fits).
func handedOnTable(t *testing.T, file string, f flows.Filter, width int) string {
	t.Helper()
	b, m := flows.NewBuilder(f), flows.NewTableWidths()
	snap, _, err := parse.Open(context.Background(), file, &parse.Options{Formats: captureFormats(),
		EachAttempt: func(a model.Attempt) {
			if b.Add(&a) {
				m.Add(&a)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if (width <= 0 && !m.Plain()) || (width > 0 && !m.Fits()) {
		return ""
	}
	var out bytes.Buffer
	var w interface {
		Write(*model.Attempt)
		Close() error
	}
	if width > 0 {
		w = flows.NewFittedWriter(&out, b.Table(snap.Captures), f, m, width)
	} else {
		w = flows.NewTableWriter(&out, b.Table(snap.Captures), f, m)
	}
	if _, _, err := parse.Open(context.Background(), file, &parse.Options{Formats: captureFormats(),
		EachAttempt: func(a model.Attempt) { w.Write(&a) }}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// handedOnJSON is the JSON form of the attempts of the capture file,
// read twice with parse.Options.EachAttempt: by a Builder, then by a
// JSONWriter.
func handedOnJSON(t *testing.T, file string, f flows.Filter) string {
	t.Helper()
	b := flows.NewBuilder(f)
	snap, _, err := parse.Open(context.Background(), file, &parse.Options{Formats: captureFormats(),
		EachAttempt: func(a model.Attempt) { b.Add(&a) }})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := flows.NewJSONWriter(&out, b.Table(snap.Captures), f)
	if _, _, err := parse.Open(context.Background(), file, &parse.Options{Formats: captureFormats(),
		EachAttempt: func(a model.Attempt) { w.Write(&a) }}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// spooled is the JSON form ("json") or the table form fitted to width of
// the attempts of the capture file, read once: by a Builder and
// TableWidths, and into a Spool, from which Replay hands them to the
// writer, or, for a table with rows set, as rows (parse.Options.EachRow)
// by a Builder and TableWidths keeping them (Keep), which WriteRows
// writes; "" for a table the sizes do not allow.
func spooled(t *testing.T, file string, f flows.Filter, output string, width int, rows bool) string {
	t.Helper()
	b, m, s := flows.NewBuilder(f), flows.NewTableWidths(), flows.NewSpool(spoolFile(t))
	if rows {
		m.Keep(spoolFile(t))
	}
	opts := &parse.Options{Formats: captureFormats(), EachAttempt: func(a model.Attempt) {
		if b.Add(&a) {
			m.Add(&a)
			s.Add(&a)
		}
	}}
	if rows {
		// The rows, as netmortem flows keeps a table's.
		opts.EachAttempt, opts.EachRow = nil, func(r *model.Row) {
			if b.AddRow(r) {
				m.AddRow(r)
			}
		}
	}
	snap, _, err := parse.Open(context.Background(), file, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var w interface {
		Write(*model.Attempt)
		Close() error
	}
	switch {
	case output == "json":
		w = flows.NewJSONWriter(&out, b.Table(snap.Captures), f)
	case (width <= 0 && !m.Plain()) || (width > 0 && !m.Fits()):
		return ""
	case width > 0:
		w = flows.NewFittedWriter(&out, b.Table(snap.Captures), f, m, width)
	default:
		w = flows.NewTableWriter(&out, b.Table(snap.Captures), f, m)
	}
	if rows {
		err = m.WriteRows(context.Background(), w)
	} else {
		err = s.Replay(context.Background(), w)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// Every fixture capture, and every capture of the shared corpus, gives the
// same CSV, JSON and table (of printable ASCII at no width; fitted to 30,
// 80 and 150 columns) written as its attempts are handed on
// (parse.Options.EachAttempt), in two reads or in one through a Spool
// (and, for the tables, through the rows TableWidths kept), as built
// whole, filtered or not.
func TestCSVWriterHandedOnAsHeld(t *testing.T) {
	files := testutil.FilesByHead(t, func(path string, head []byte) bool {
		_, ok := capture.Sniff(head)
		return ok || strings.HasSuffix(path, ".pcap.gz") || strings.Contains(path, "/captures/text/")
	}, filepath.Join(testutil.Root(), "fixtures"), testutil.CorpusDir(t, "pcap"))
	if len(files) < 100 {
		t.Fatalf("only %d captures", len(files))
	}
	all := len(files)
	files = testutil.RaceSample(t, 8, files)
	filters := []flows.Filter{{}, {States: []string{"REJ", "established"}}}
	handedOn, rowsHandedOn, tables := 0, 0, 0
	for _, f := range files {
		snap, _, err := parse.Open(context.Background(), f, &parse.Options{Formats: captureFormats(), KeepAttempts: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, filter := range filters {
			want := heldCSV(t, snap, filter)
			var got bytes.Buffer
			w := flows.NewCSVWriter(&got, filter)
			_, _, err = parse.Open(context.Background(), f, &parse.Options{Formats: captureFormats(),
				EachAttempt: func(a model.Attempt) { w.Write(&a); handedOn++ }})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got.String() != want {
				t.Errorf("%s, filter %v: handed on:\n%s", f, filter, testutil.DiffLines(want, got.String()))
			}
			var rows bytes.Buffer
			rw := flows.NewCSVWriter(&rows, filter)
			_, _, err = parse.Open(context.Background(), f, &parse.Options{Formats: captureFormats(),
				EachRow: func(r *model.Row) { rw.WriteRow(r); rowsHandedOn++ }})
			if err != nil {
				t.Fatal(err)
			}
			if err := rw.Close(); err != nil {
				t.Fatal(err)
			}
			if rows.String() != want {
				t.Errorf("%s, filter %v: rows handed on:\n%s", f, filter, testutil.DiffLines(want, rows.String()))
			}
			if len(filter.States) > 0 {
				continue // the CSV checks the filter; the other forms filter alike
			}
			want = held(t, snap, filter, "json")
			if got := handedOnJSON(t, f, filter); got != want {
				t.Errorf("%s, filter %v: JSON handed on:\n%s", f, filter, testutil.DiffLines(want, got))
			}
			if got := spooled(t, f, filter, "json", 0, false); got != want {
				t.Errorf("%s, filter %v: JSON spooled:\n%s", f, filter, testutil.DiffLines(want, got))
			}
			for _, width := range []int{0, 30, 80, 150} {
				got := handedOnTable(t, f, filter, width)
				if got == "" {
					continue
				}
				tables++
				want := heldTable(t, snap, filter, width)
				if got != want {
					t.Errorf("%s, filter %v: table at width %d handed on:\n%s", f, filter, width, testutil.DiffLines(want, got))
				}
				if got := spooled(t, f, filter, "table", width, false); got != want {
					t.Errorf("%s, filter %v: table at width %d spooled:\n%s", f, filter, width, testutil.DiffLines(want, got))
				}
				if got := spooled(t, f, filter, "table", width, true); got != want {
					t.Errorf("%s, filter %v: table at width %d from its rows kept:\n%s", f, filter, width, testutil.DiffLines(want, got))
				}
			}
		}
	}
	if handedOn < 1000*len(files)/all || rowsHandedOn != handedOn || tables < 400*len(files)/all {
		t.Errorf("only %d attempts handed on, %d rows, %d tables written", handedOn, rowsHandedOn, tables)
	}
}

// captureFormats are the formats whose records are packets, as flows
// reads them.
func captureFormats() []*parse.Format {
	var out []*parse.Format
	for _, f := range parse.Formats() {
		if f.Kind == model.KindCapture {
			out = append(out, f)
		}
	}
	return out
}

// Rows written straight into the buffer are those encoding/csv writes
// from Table's rows, for names (of files, and outcomes, states and
// histories made by hand) that need quoting, escaping or an apostrophe,
// and for every shape of position, segments and times.
func TestCSVWriterAsTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := []string{"", "c.pcap", "a,b.pcap", `say "hi".pcap`, "=cmd.pcap", "+1", "-2.5", "@x", " lead.pcap", "\tt.pcap",
		"\r.pcap", "new\nline.pcap", `\.`, "\x1b[31m.pcap", "ünï.pcap", "\u202e.pcap", "bad\xff.pcap", "1e5", "node-1"}
	pick := func() string { return names[rng.IntN(len(names))] }
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	segs := func() []model.Seg {
		var l []model.Seg
		for i := range rng.IntN(7) {
			g := model.Seg{Time: t0.Add(time.Duration(rng.Int64N(int64(time.Second)))), Frame: 1 + i + rng.IntN(100)}
			if rng.IntN(4) == 0 {
				g.Frame, g.Line = 0, 1+rng.IntN(50)
			}
			l = append(l, g)
		}
		return l
	}
	var all []model.Attempt
	for range 3000 {
		a := model.Attempt{Node: pick(), Pos: model.Pos{File: pick(), Frame: rng.IntN(3) * rng.IntN(1000)},
			Client:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(rng.IntN(256))}), uint16(rng.IntN(65536))),
			Server:  netip.MustParseAddrPort("[fd00::1]:443"),
			Outcome: model.OutcomeEstablished, ConnState: "SF", History: "ShADadFf",
			Start: t0.Add(time.Duration(rng.Int64N(int64(time.Hour)))), SYN: segs(), SYNACK: segs(),
			ClientRST: segs(), ServerRST: segs(), Packets: rng.IntN(100), ClientBytes: rng.Int64N(1 << 40)}
		if rng.IntN(4) == 0 { // names made by hand
			a.Outcome, a.ConnState, a.History = model.Outcome(pick()), pick(), pick()
		}
		switch rng.IntN(6) {
		case 0:
			a.Pos.Line, a.Pos.Frame = 1+rng.IntN(9), 0
		case 1:
			a.Pos.Object = pick()
		case 2:
			a.Start = time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC) // clamped
		}
		all = append(all, a)
	}
	var got bytes.Buffer
	w := flows.NewCSVWriter(&got, flows.Filter{})
	for i := range all {
		w.Write(&all[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := heldCSV(t, &model.Snapshot{Attempts: all}, flows.Filter{})
	if got.String() != want {
		t.Errorf("rows differ:\n%s", testutil.DiffLines(want, got.String()))
	}
	tbl := flows.Build(&model.Snapshot{Attempts: all}, flows.Filter{})
	n, pos := tbl.OutOfRange()
	if m, at := w.OutOfRange(); m != n || at != pos || n == 0 {
		t.Errorf("out of range: %d at %v, the table's %d at %v", m, at, n, pos)
	}

	// The same rows from the attempts' rows (model.Attempt.Row), made
	// without them: the times out of range counted are their starts.
	var rows bytes.Buffer
	rw := flows.NewCSVWriter(&rows, flows.Filter{})
	starts, first := 0, model.Pos{}
	for i := range all {
		r := all[i].Row()
		rw.WriteRow(&r)
		if all[i].Start.Year() > 9999 {
			if starts == 0 {
				first = all[i].Pos
			}
			starts++
		}
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	if rows.String() != want {
		t.Errorf("rows written from the attempts' rows differ:\n%s", testutil.DiffLines(want, rows.String()))
	}
	if m, at := rw.OutOfRange(); m != starts || at != first || starts == 0 {
		t.Errorf("out of range from rows: %d at %v, want the %d starts, the first at %v", m, at, starts, first)
	}

	// The JSON form, its times clamped, from a Builder's table.
	b := flows.NewBuilder(flows.Filter{})
	for i := range all {
		b.Add(&all[i])
	}
	if m, at := b.OutOfRange(); m != n || at != pos {
		t.Errorf("out of range: the builder's %d at %v, the table's %d at %v", m, at, n, pos)
	}
	var js bytes.Buffer
	jw := flows.NewJSONWriter(&js, b.Table(nil), flows.Filter{})
	for i := range all {
		jw.Write(&all[i])
	}
	if err := jw.Close(); err != nil {
		t.Fatal(err)
	}
	if want := held(t, &model.Snapshot{Attempts: all}, flows.Filter{}, "json"); js.String() != want {
		t.Errorf("JSON differs:\n%s", testutil.DiffLines(want, js.String()))
	}
}
