package fit

import (
	"io"
	"strings"
)

// Table is a table to lay out: a header and rows of cells. A cell may hold
// several lines (separated by "\n").
type Table struct {
	Header []string
	Rows   [][]string
	// MinWidth is, per column, the narrowest it may be made by wrapping
	// (0: the width of its header's longest word, and at least 4).
	MinWidth []int
	// Style, when set, is applied to each line of a cell's text after the
	// layout (to colour it); it must not change how wide the text looks.
	Style func(row, col int, s string) string
}

// Render writes t at most width columns wide: a box table whose widest
// columns are narrowed and their cells wrapped until it fits, or, when
// even its narrowest columns do not fit, one block per row of
// "HEADER: value" lines. width <= 0 lays the table out at its natural
// width.
func (t *Table) Render(w io.Writer, width int) error {
	l := NewLayout(t.Header, t.natural(), t.MinWidth, width)
	l.Style = t.Style
	var b strings.Builder
	l.Head(&b)
	for _, r := range t.Rows {
		l.Row(&b, r)
	}
	l.Foot(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// natural is the width of each column: its widest line.
func (t *Table) natural() []int {
	widths := NewWidths(t.Header)
	for _, r := range t.Rows {
		widths.Add(r)
	}
	return widths
}

// BoxOverhead is the number of columns the borders and the padding of a
// box table of n columns take: "│ " before each cell, " " after, and the
// last "│".
func BoxOverhead(n int) int { return 3*n + 1 }

// Shrink narrows widths, the widths of a table's columns, widest column
// first and none below its mins (nor below its own width), until their
// sum is at most avail, and reports whether it is.
func Shrink(widths, mins []int, avail int) bool {
	total := 0
	floor := make([]int, len(widths))
	for c := range widths {
		if c < len(mins) {
			floor[c] = min(mins[c], widths[c])
		}
		total += widths[c]
	}
	for total > avail {
		widest := -1
		for c := range widths {
			if widths[c] > floor[c] && (widest < 0 || widths[c] > widths[widest]) {
				widest = c
			}
		}
		if widest < 0 {
			return false
		}
		widths[widest]--
		total--
	}
	return true
}

func cell(r []string, c int) string {
	if c < len(r) {
		return r[c]
	}
	return ""
}

// ColumnWidths are the widths of the columns of a box table of header and
// rows laid out in width columns: each column's natural width (its widest
// line), the widest narrowed first (Shrink), none below its mins (0 or
// missing: the widest word of its header). ok is false when even the
// narrowest do not fit. width <= 0 gives the natural widths.
func ColumnWidths(header []string, rows [][]string, mins []int, width int) (widths []int, ok bool) {
	t := &Table{Header: header, Rows: rows, MinWidth: mins}
	widths = t.natural()
	if width <= 0 {
		return widths, true
	}
	return widths, Shrink(widths, minWidths(header, mins), width-BoxOverhead(len(widths)))
}
