package fit

import (
	"io"
	"strings"
)

// Layout is the shape Table.Render gives a table at a width, worked out
// from its header and its columns' natural widths alone, so that a table
// too long to hold can be written a row at a time: Head, then Row for
// each row, then Foot write what Render writes for the same rows.
type Layout struct {
	header []string
	widths []int // the columns' widths; nil: one block per row
	width  int
	label  int // blocks: the widest header
	rows   int // the rows written
	// lines and single are line's, kept from one row to the next.
	lines  [][]string
	single []string
	// prefixes and inner are blockLabels': each column's label in a
	// block, and how wide its values may be; stacked, when the labels
	// leave too little room beside them, each value is under its label.
	prefixes []string
	inner    []int
	stacked  bool
	// Style, when set, is applied as Table.Style.
	Style func(row, col int, s string) string
}

// NewLayout lays out a table of header at most width columns wide, as
// Render does, from natural, each column's widest line, the header's
// included (Widths), and mins, as Table.MinWidth: a box table whose
// widest columns are narrowed until it fits, or, when even its narrowest
// columns do not, one block per row. width <= 0 keeps the natural widths.
func NewLayout(header []string, natural, mins []int, width int) *Layout {
	l := &Layout{header: header, width: width, widths: append(make([]int, 0, len(natural)), natural...)}
	if width > 0 && !Shrink(l.widths, minWidths(header, mins), width-BoxOverhead(len(l.widths))) {
		l.widths = nil
		for _, h := range header {
			l.label = max(l.label, Width(h))
		}
	}
	return l
}

// minWidths is how narrow each column of header may be made: mins[c]
// where it is set, else the width of the header's widest word, and at
// least 4.
func minWidths(header []string, mins []int) []int {
	out := make([]int, len(header))
	for c := range header {
		out[c] = 4
		if c < len(mins) && mins[c] > 0 {
			out[c] = mins[c]
			continue
		}
		for _, word := range strings.Fields(header[c]) {
			out[c] = max(out[c], Width(word))
		}
	}
	return out
}

// Copy returns a Layout writing rows as l writes them, with scratch of
// its own, for rows written on another goroutine; its rows are counted
// from l's, apart from them.
func (l *Layout) Copy() *Layout {
	if l.Blocks() {
		l.blockLabels() // made once, then only read
	}
	c := *l
	c.lines, c.single = nil, nil
	return &c
}

// Blocks reports whether the table is written one block per row, its
// columns not fitting the width even at their narrowest.
func (l *Layout) Blocks() bool { return l.widths == nil }

// Widths returns the columns' widths, nil for blocks.
func (l *Layout) Widths() []int { return l.widths }

// Head writes the table's top border, its header and the rule under it;
// nothing for blocks.
func (l *Layout) Head(w io.StringWriter) {
	if l.Blocks() {
		return
	}
	l.border(w, "┌", "┬", "┐")
	l.line(w, -1, l.header, true)
	l.border(w, "├", "┼", "┤")
}

// Row writes the next row.
func (l *Layout) Row(w io.StringWriter, cells []string) {
	ri := l.rows
	l.rows++
	if !l.Blocks() {
		l.line(w, ri, cells, false)
		return
	}
	if ri > 0 {
		w.WriteString("\n")
	}
	l.blockLabels()
	for c := range l.header {
		if v := cell(cells, c); v != "" {
			l.blockLines(w, c, v)
		}
	}
}

// blockLabels makes, once, each column's label in a block ("HEADER: ",
// padded to the widest) and how wide its values may be beside it; or,
// when that leaves a value fewer than MinBeside columns, each label
// alone ("HEADER:"), its values under it (Under).
func (l *Layout) blockLabels() {
	if l.prefixes != nil {
		return
	}
	l.prefixes, l.inner = make([]string, len(l.header)), make([]int, len(l.header))
	l.stacked = l.width-(l.label+2) < MinBeside
	for c, h := range l.header {
		if l.stacked {
			l.prefixes[c] = h + ":"
			continue
		}
		l.prefixes[c] = h + ":" + strings.Repeat(" ", l.label-Width(h)+1)
		l.inner[c] = l.width - Width(l.prefixes[c])
	}
}

// blockLines writes the value v of column c in a block, wrapped beside
// its label, or under it.
func (l *Layout) blockLines(w io.StringWriter, c int, v string) {
	lay := Indent
	if l.stacked {
		lay = Under
	}
	for _, line := range lay(l.prefixes[c], v, l.width) {
		w.WriteString(line)
		w.WriteString("\n")
	}
}

// BytesWriter is what RowBytes writes to: a bufio.Writer is one.
type BytesWriter interface {
	io.Writer
	io.StringWriter
}

// RowBytes writes the next row, of cells given as bytes: what Row writes
// for their strings, making strings only of the cells that do not fit
// their column as they are (printable ASCII no longer than its width).
func (l *Layout) RowBytes(w BytesWriter, cells [][]byte) {
	if l.Blocks() && l.Style == nil {
		l.blockBytes(w, cells)
		return
	}
	if l.Blocks() || l.Style != nil || len(cells) != len(l.widths) {
		strs := make([]string, len(cells))
		for c, b := range cells {
			strs[c] = string(b)
		}
		l.Row(w, strs)
		return
	}
	l.rows++
	n := len(cells)
	if len(l.lines) < n {
		l.lines, l.single = make([][]string, n), make([]string, n)
	}
	lines := l.lines[:n]
	height := 1
	for c, b := range cells {
		lines[c] = nil // as it is
		if !asIs(b, l.widths[c]) {
			lines[c] = Wrap(string(b), l.widths[c])
			height = max(height, len(lines[c]))
		}
	}
	for h := range height {
		w.WriteString("│")
		for c, b := range cells {
			w.WriteString(" ")
			pad := l.widths[c]
			switch {
			case lines[c] == nil && h == 0:
				w.Write(b)
				pad -= len(b)
			case lines[c] != nil && h < len(lines[c]):
				w.WriteString(lines[c][h])
				pad -= Width(lines[c][h])
			}
			w.WriteString(Spaces(pad))
			w.WriteString(" │")
		}
		w.WriteString("\n")
	}
}

// blockBytes writes the next row as a block, as Row does, writing each
// cell that needs no wrapping as it is.
func (l *Layout) blockBytes(w BytesWriter, cells [][]byte) {
	l.blockLabels()
	if l.rows > 0 {
		w.WriteString("\n")
	}
	l.rows++
	for c := range l.header {
		var b []byte
		if c < len(cells) {
			b = cells[c]
		}
		switch {
		case len(b) == 0:
		case !l.stacked && asIs(b, l.inner[c]):
			w.WriteString(l.prefixes[c])
			w.Write(b)
			w.WriteString("\n")
		default:
			l.blockLines(w, c, string(b))
		}
	}
}

// asIs reports whether b is printable ASCII (its width its length) no
// wider than width.
func asIs(b []byte, width int) bool {
	if len(b) > width {
		return false
	}
	for _, ch := range b {
		if ch < 0x20 || ch >= 0x7f {
			return false
		}
	}
	return true
}

// Foot writes the table's bottom border; nothing for blocks.
func (l *Layout) Foot(w io.StringWriter) {
	if !l.Blocks() {
		l.border(w, "└", "┴", "┘")
	}
}

func (l *Layout) border(w io.StringWriter, left, mid, right string) {
	w.WriteString(left)
	for c, cw := range l.widths {
		if c > 0 {
			w.WriteString(mid)
		}
		w.WriteString(strings.Repeat("─", cw+2))
	}
	w.WriteString(right + "\n")
}

// line writes the row ri (-1: the header) of cells, each wrapped to its
// column, centred or left-aligned.
func (l *Layout) line(w io.StringWriter, ri int, cells []string, center bool) {
	n := len(l.header)
	if len(l.lines) < n {
		l.lines, l.single = make([][]string, n), make([]string, n)
	}
	lines := l.lines[:n]
	height := 1
	for c := range n {
		s := cell(cells, c)
		if len(s) <= l.widths[c] && !strings.Contains(s, "\n") && Width(s) <= l.widths[c] {
			l.single[c] = s // the one line Wrap would give
			lines[c] = l.single[c : c+1 : c+1]
			continue
		}
		lines[c] = Wrap(s, l.widths[c])
		height = max(height, len(lines[c]))
	}
	for h := range height {
		w.WriteString("│")
		for c := range n {
			s := ""
			if h < len(lines[c]) {
				s = lines[c][h]
			}
			pad := l.widths[c] - Width(s)
			left := 0
			if center {
				left = pad / 2
			}
			if l.Style != nil && ri >= 0 && s != "" {
				s = l.Style(ri, c, s)
			}
			w.WriteString(" ")
			w.WriteString(Spaces(left))
			w.WriteString(s)
			w.WriteString(Spaces(pad - left))
			w.WriteString(" │")
		}
		w.WriteString("\n")
	}
}

// Spaces returns n spaces, none for n <= 0.
func Spaces(n int) string {
	const blank = "                                                                "
	if n <= len(blank) {
		return blank[:max(n, 0)]
	}
	return strings.Repeat(" ", n)
}

// Widths accumulates the natural widths of a table's columns (each its
// widest line, the header's included), a row at a time, for NewLayout.
type Widths []int

// NewWidths returns the widths of header's columns, before any row.
func NewWidths(header []string) Widths {
	w := make(Widths, len(header))
	for c, h := range header {
		w[c] = Width(h)
	}
	return w
}

// Add widens the columns to the lines of cells.
func (w Widths) Add(cells []string) {
	for c := range w {
		w[c] = max(w[c], LineWidth(cell(cells, c)))
	}
}

// LineWidth is the width of the widest line of s.
func LineWidth(s string) int {
	if !strings.Contains(s, "\n") {
		return Width(s)
	}
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, Width(l))
	}
	return n
}
