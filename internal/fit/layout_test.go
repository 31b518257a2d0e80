package fit

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/clipperhouse/displaywidth"
)

// A row given as bytes is written as the same row given as strings, for
// cells that fit as they are, cells wrapped, cells of several lines, wide
// runes, control characters and empty cells, at widths where the table
// fits, is narrowed, or folds into blocks.
func TestRowBytesAsRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"", "a", "10.0.0.1:80", "fixtures/captures/handshakes.pcap#frame=12", "ünï", "日本語", "x\ny", "\x1b[31m",
		"#1 #2 #3 +4", "established", "a b c d e f g h i j k l", "SF"}
	for range 300 {
		n := 1 + rng.IntN(6)
		header := make([]string, n)
		for c := range header {
			header[c] = strings.ToUpper(words[rng.IntN(len(words))]) + "H"
		}
		rows := make([][]string, 1+rng.IntN(4))
		for r := range rows {
			rows[r] = make([]string, n)
			for c := range rows[r] {
				rows[r][c] = words[rng.IntN(len(words))]
			}
		}
		nat := NewWidths(header)
		for _, r := range rows {
			nat.Add(r)
		}
		width := []int{0, 8, 20, 40, 80, 200}[rng.IntN(6)]
		var want, got strings.Builder
		a, b := NewLayout(header, nat, nil, width), NewLayout(header, nat, nil, width)
		for _, r := range rows {
			a.Row(&want, r)
			cells := make([][]byte, n)
			for c, s := range r {
				cells[c] = []byte(s)
			}
			b.RowBytes(&got, cells)
		}
		if got.String() != want.String() {
			t.Fatalf("header %q, rows %q, width %d: bytes\n%s\nstrings\n%s", header, rows, width, got.String(), want.String())
		}
		// A copy made after the first row writes the next rows as the
		// layout they were copied from would.
		if len(rows) > 1 && !a.Blocks() {
			c, whole := NewLayout(header, nat, nil, width), NewLayout(header, nat, nil, width)
			var first, rest, all strings.Builder
			c.Row(&first, rows[0])
			cp := c.Copy()
			for _, r := range rows {
				whole.Row(&all, r)
			}
			for _, r := range rows[1:] {
				cp.Row(&rest, r)
			}
			if first.String()+rest.String() != all.String() {
				t.Fatalf("header %q, rows %q, width %d: copied\n%s%s\nwhole\n%s", header, rows, width, first.String(), rest.String(), all.String())
			}
		}
	}
}

// Printable ASCII is as wide as it is long, as displaywidth measures it.
func TestWidthASCII(t *testing.T) {
	var all strings.Builder
	for c := byte(0x20); c < 0x7f; c++ {
		all.WriteByte(c)
	}
	for _, s := range []string{"", all.String(), "10.0.0.1:80", "a\tb", "ünï", "日本", "\x7f"} {
		if got, want := Width(s), displaywidth.String(s); got != want {
			t.Errorf("Width(%q) = %d, want %d", s, got, want)
		}
	}
}

// A table of no column is an empty box, as Render wrote it before it laid
// tables out with a Layout: not one block per row.
func TestRenderNoColumns(t *testing.T) {
	for _, width := range []int{0, 80} {
		var b strings.Builder
		if err := (&Table{Rows: [][]string{{}, {}}}).Render(&b, width); err != nil {
			t.Fatal(err)
		}
		if want := "┌┐\n│\n├┤\n│\n│\n└┘\n"; b.String() != want {
			t.Errorf("width %d: %q, want %q", width, b.String(), want)
		}
	}
}

// A table too wide even for blocks of its labels and values side by side
// (a terminal narrower than a label and ten columns) is written with each
// value under its label, indented: no line is wider than the width, and
// no value is lost.
func TestBlocksStackedWhenNarrow(t *testing.T) {
	header := []string{"SERVER", "MEDIAN SYN/ACK MS", "where"}
	rows := [][]string{{"10.98.0.2:1000", "4", "fixtures/captures/portscan.pcap#frame=1"}, {"[fd99::2]:8081", "", "c.pcap:12"}}
	for width := 4; width <= 40; width++ {
		tab := &Table{Header: header, Rows: rows}
		var b strings.Builder
		if err := tab.Render(&b, width); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if Width(l) > width {
				t.Errorf("width %d: line %q is %d wide:\n%s", width, l, Width(l), out)
			}
		}
		if strings.Contains(out, "┌") {
			continue // a box, the cells wrapped in their columns
		}
		flat := strings.NewReplacer("\n", "", " ", "").Replace(out)
		for _, r := range rows {
			for _, v := range r {
				if !strings.Contains(flat, strings.ReplaceAll(v, " ", "")) {
					t.Errorf("width %d: %q lost:\n%s", width, v, out)
				}
			}
		}
		if stacked := strings.Contains(out, "SERVER:\n  10."); width >= 8 && stacked != (width < len("MEDIAN SYN/ACK MS")+2+10) {
			t.Errorf("width %d: stacked %v:\n%s", width, stacked, out)
		}
	}
}
