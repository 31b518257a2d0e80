package flows

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/model"
)

// At 80 columns the attempts are a table of their most telling columns,
// one line each, the frames of the single capture without its name, and a
// line names the columns left out; too narrow even for those, one block
// per attempt; wide enough, every column.
func TestWriteTableNarrowed(t *testing.T) {
	tab := Build(snapshot(), Filter{})
	var b strings.Builder
	if err := tab.WriteTable(&b, 80); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if fit.Width(l) > 80 {
			t.Errorf("line %d wide: %q", fit.Width(l), l)
		}
	}
	for _, want := range []string{
		"where: the first frame of each attempt in c.pcap\n",
		"│ #1    │ 10.0.0.2:40001 │ 10.0.0.9:80  │ synack_client_rst │ RSTO  │",
		"Not shown at this width: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "client: ") || strings.Contains(out, "c.pcap#frame=") {
		t.Errorf("blocks or repeated capture names:\n%s", out)
	}

	b.Reset()
	if err := tab.WriteTable(&b, 40); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "client:    10.0.0.2:40001") || strings.Contains(b.String(), "Not shown") {
		t.Errorf("at 40 columns:\n%s", b.String())
	}

	b.Reset()
	if err := tab.WriteTable(&b, 300); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "bytes_in") || strings.Contains(b.String(), "Not shown") {
		t.Errorf("at 300 columns:\n%s", b.String())
	}
}

// The table written an attempt at a time, its columns sized by a first
// pass that does not know the captures' directory (TableWidths), is the
// table built whole (WriteTable), at every width and at none: for nodes and file
// names that are escaped or hold spaces, positions at frames and at
// lines, captures in nested directories or one alone (whose frames a
// narrowed table writes as "#N"). An attempt at an object's position,
// which no capture gives, is left to the table built whole.
func TestFittedWriterAsWriteTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	files := []string{"/tmp/a/c.pcap", "/tmp/a/b/d.pcap", "/tmp/a/b/sp ace.pcap", "/tmp/a/\x1b[31m.pcap", "/tmp/e/ünï.pcap", "rel.pcap",
		"/tmp/a/c.pcap#frame=9.pcap"}
	nodes := []string{"", "", "node-1", "no de", "n\x01", "nöde"}
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for round := range 200 {
		fs := files[rng.IntN(len(files)):]
		fs = fs[:1+rng.IntN(len(fs))]
		var snap model.Snapshot
		for _, f := range fs {
			snap.Captures = append(snap.Captures, model.CaptureInfo{File: f})
		}
		lines := rng.IntN(3) // no attempt at a line, some, all
		for range 1 + rng.IntN(40) {
			a := attempt("10.0.0.1:40000", "10.0.0.9:80", model.OutcomeEstablished, "SF", time.Duration(rng.IntN(1000))*time.Millisecond, time.Millisecond, 1+rng.IntN(6))
			a.Start = t0.Add(time.Duration(rng.Int64N(int64(time.Hour))))
			a.Pos = model.Pos{File: fs[rng.IntN(len(fs))], Frame: 1 + rng.IntN(1_000_000)}
			if lines == 2 || (lines == 1 && rng.IntN(4) == 0) {
				a.Pos.Frame, a.Pos.Line = 0, 1+rng.IntN(5000)
			}
			if rng.IntN(4) == 0 {
				a.Node = nodes[rng.IntN(len(nodes))]
			}
			a.ClientBytes = rng.Int64N(1 << 30)
			snap.Attempts = append(snap.Attempts, a)
		}
		b, m := NewBuilder(Filter{}), NewTableWidths()
		for i := range snap.Attempts {
			if b.Add(&snap.Attempts[i]) {
				m.Add(&snap.Attempts[i])
			}
		}
		if !m.Fits() {
			t.Fatalf("round %d: attempts at frames and lines do not fit", round)
		}
		width := []int{0, 20, 30, 50, 80, 120, 200, 400}[rng.IntN(8)]
		if width == 0 && !m.Plain() {
			t.Fatalf("round %d: files %q not plain", round, fs)
		}
		if got, want := eachAndWhole(t, &snap, b, m, width); got != want {
			t.Fatalf("round %d, files %q, width %d:\n%s\nwant\n%s", round, fs, width, got, want)
		}
	}
	m := NewTableWidths()
	a := attempt("10.0.0.1:40000", "10.0.0.9:80", model.OutcomeEstablished, "SF", 0, time.Millisecond, 1)
	a.Pos = model.Pos{Object: "Pod default/web"}
	m.Add(&a)
	if m.Fits() {
		t.Error("an attempt at an object's position fits")
	}
}

// Positions are written relative to the captures' directory, named once
// above, after the node when there is one, in the full table and in the
// narrowed one; a single capture's frames narrowed are "#N", whatever its
// name holds.
func TestWriteTableRelative(t *testing.T) {
	snap := &model.Snapshot{Captures: []model.CaptureInfo{{File: "/tmp/a/c.pcap"}, {File: "/tmp/a/b/d.txt"}}}
	for _, p := range []struct {
		node string
		pos  model.Pos
	}{{"", model.Pos{File: "/tmp/a/c.pcap", Frame: 12}}, {"node-1", model.Pos{File: "/tmp/a/b/d.txt", Line: 7}}} {
		a := attempt("10.0.0.1:40000", "10.0.0.9:80", model.OutcomeEstablished, "SF", 0, time.Millisecond, 1)
		a.Node, a.Pos = p.node, p.pos
		snap.Attempts = append(snap.Attempts, a)
	}
	for _, width := range []int{400, 80} {
		var b strings.Builder
		if err := Build(snap, Filter{}).WriteTable(&b, width); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Captures under /tmp/a (paths below are relative to it)\n", "\n│ c.pcap#frame=12 ", "\n│ node-1 b/d.txt:7 "} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("width %d: no %q in:\n%s", width, want, b.String())
			}
		}
	}
	snap.Attempts = snap.Attempts[:1]
	snap.Captures = snap.Captures[:1]
	for _, name := range []string{"c.pcap", "sp ace.pcap"} {
		snap.Captures[0].File, snap.Attempts[0].Pos.File = "/tmp/a/"+name, "/tmp/a/"+name
		var b strings.Builder
		if err := Build(snap, Filter{}).WriteTable(&b, 80); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"where: the first frame of each attempt in " + name + "\n", "\n│ #12   │ 10.0.0.1:40000 │"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("one capture %q: no %q in:\n%s", name, want, b.String())
			}
		}
	}
}

// The unfitted table's first column is as wide written a row at a time
// as built whole when the part before a frame ends in a space: a file
// name that does, or a node with no file.
func TestTableWriterSpaceBeforeFrame(t *testing.T) {
	for _, p := range []struct{ node, file string }{{"", "/x/ü.pcap "}, {"nöde", ""}} {
		a := attempt("10.0.0.1:40000", "10.0.0.9:80", model.OutcomeEstablished, "SF", 0, time.Millisecond, 1)
		a.Node, a.Pos = p.node, model.Pos{File: p.file, Frame: 5}
		snap := &model.Snapshot{Captures: []model.CaptureInfo{{File: p.file}}, Attempts: []model.Attempt{a}}
		var want, got strings.Builder
		if err := Build(snap, Filter{}).WriteTable(&want, 0); err != nil {
			t.Fatal(err)
		}
		b, m := NewBuilder(Filter{}), NewTableWidths()
		b.Add(&a)
		m.Add(&a)
		if !m.Plain() {
			t.Fatalf("%q %q: not plain", p.node, p.file)
		}
		w := NewTableWriter(&got, b.Table(snap.Captures), Filter{}, m)
		w.Write(&a)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%q %q:\n%s\nwant\n%s", p.node, p.file, got.String(), want.String())
		}
	}
}

// Cells with spaces around them, runes wider than a byte, and runes that
// are not printable are sized as the table built whole sizes them, at no
// width and fitted, alone or among plain ones.
func TestTableWidthsOddCells(t *testing.T) {
	for _, names := range [][2]string{{" S F ", "  ShADadFfRr  "}, {"SF", " ünï 日本 "}, {"REJ", "tab\there"}, {"  ", "x"}} {
		var snap model.Snapshot
		snap.Captures = []model.CaptureInfo{{File: "c.pcap"}}
		for i := range 3 {
			a := attempt("10.0.0.1:40000", "10.0.0.9:80", model.OutcomeEstablished, "SF", 0, time.Millisecond, 1+i)
			a.Pos = model.Pos{File: "c.pcap", Frame: 1 + i}
			if i == 1 {
				a.ConnState, a.History = names[0], names[1]
			}
			snap.Attempts = append(snap.Attempts, a)
		}
		b, m := NewBuilder(Filter{}), NewTableWidths()
		for i := range snap.Attempts {
			b.Add(&snap.Attempts[i])
			m.Add(&snap.Attempts[i])
		}
		plain := !strings.Contains(names[1], "\t")
		if m.Plain() != plain || !m.Fits() {
			t.Fatalf("%q: plain %v, fits %v", names, m.Plain(), m.Fits())
		}
		for _, width := range []int{0, 40, 80, 200} {
			if width == 0 && !plain {
				continue
			}
			if got, want := eachAndWhole(t, &snap, b, m, width); got != want {
				t.Errorf("%q, width %d:\n%s\nwant\n%s", names, width, got, want)
			}
		}
	}
}

// eachAndWhole returns the table of snap's attempts written an attempt at
// a time, from the summary of b and the sizes of m, at no width or
// fitted to width; and the table built whole (Table.WriteTable).
func eachAndWhole(t *testing.T, snap *model.Snapshot, b *Builder, m *TableWidths, width int) (got, want string) {
	t.Helper()
	var whole, each strings.Builder
	if err := Build(snap, Filter{}).WriteTable(&whole, width); err != nil {
		t.Fatal(err)
	}
	var w interface {
		Write(*model.Attempt)
		Close() error
	}
	if width == 0 {
		w = NewTableWriter(&each, b.Table(snap.Captures), Filter{}, m)
	} else {
		w = NewFittedWriter(&each, b.Table(snap.Captures), Filter{}, m, width)
	}
	for i := range snap.Attempts {
		w.Write(&snap.Attempts[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return each.String(), whole.String()
}

// A narrowed table leaves out the columns empty in every row (here synack
// and synack_ms, of attempts no server answered) before any that shows
// something, at every width, built whole or a row at a time.
func TestNarrowedLeavesEmptyFirst(t *testing.T) {
	snap := &model.Snapshot{Captures: []model.CaptureInfo{{File: "c.pcap"}}}
	for i := range 6 {
		a := attempt(fmt.Sprintf("10.0.0.1:%d", 40000+i), "10.0.0.9:80", model.OutcomeUnanswered, "S0", time.Duration(i)*time.Second, 0, 1+i%2)
		if i%2 == 0 {
			a.Outcome, a.ConnState = model.OutcomeRefused, "REJ"
			a.ServerRST = []model.Seg{{Frame: 20 + i, Time: a.Start.Add(time.Millisecond)}}
		}
		snap.Attempts = append(snap.Attempts, a)
	}
	empty := map[string]bool{"synack": true, "synack_ms": true}
	var natural map[string]int // the connection table's columns' widths at no width
	rstShown := false
	for width := 0; width <= 220; width++ {
		if width == 1 {
			width = 60
		}
		b, m := NewBuilder(Filter{}), NewTableWidths()
		for i := range snap.Attempts {
			if b.Add(&snap.Attempts[i]) {
				m.Add(&snap.Attempts[i])
			}
		}
		got, whole := eachAndWhole(t, snap, b, m, width)
		if got != whole {
			t.Fatalf("width %d: a row at a time\n%s\nwhole\n%s", width, got, whole)
		}
		if width == 0 {
			natural = headerWidths(got)
			continue
		}
		left := leftOut(got)
		for _, f := range left {
			for e := range empty {
				if !empty[f] && !slices.Contains(left, e) && natural[f] <= natural[e] {
					t.Errorf("width %d: %s, empty, shown, and %s left out (%q)", width, e, f, left)
				}
			}
		}
		rstShown = rstShown || len(left) > 0 && !slices.Contains(left, "rst")
		// Where the columns with something in them fit side by side,
		// no cell is wrapped: the empty ones go first.
		filled, n := 0, 0
		for h, w := range natural {
			if !empty[h] {
				filled, n = filled+w, n+1
			}
		}
		if filled+fit.BoxOverhead(n) <= width && tableLines(got) != len(snap.Attempts) {
			t.Errorf("width %d: %d lines for %d rows:\n%s", width, tableLines(got), len(snap.Attempts), got)
		}
		if width == 100 && !strings.Contains(got, "Not shown at this width: MEDIAN SYN/ACK MS (") {
			t.Errorf("width %d: the empty median column shown:\n%s", width, got)
		}
	}
	if !rstShown {
		t.Error("no width narrows the table and shows rst")
	}
}

// leftOut returns the columns of the connection table that out, a table
// fitted to a width, names as not shown.
func leftOut(out string) []string {
	out = out[strings.LastIndex(out, "└")+1:]
	_, note, ok := strings.Cut(out, "Not shown at this width: ")
	if !ok {
		return nil
	}
	note = strings.ReplaceAll(note, "\n", " ")
	note, _, _ = strings.Cut(note, " (--width 0")
	return strings.Split(note, ", ")
}

// headerWidths returns the widths of the columns of the last table of
// out, by their names in its header.
func headerWidths(out string) map[string]int {
	w := map[string]int{}
	lines := strings.Split(out[strings.LastIndex(out, "┌"):], "\n")
	for _, c := range strings.Split(strings.Trim(lines[1], "│"), "│") {
		w[strings.TrimSpace(c)] = fit.Width(c) - 2
	}
	return w
}

// tableLines returns how many lines the rows of the last table of out
// take.
func tableLines(out string) int {
	body := out[strings.LastIndex(out, "├"):strings.LastIndex(out, "└")]
	return strings.Count(body, "\n") - 1
}
