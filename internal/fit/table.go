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
	n := len(t.Header)
	widths := t.natural()
	if width > 0 && !t.shrink(widths, width) {
		return t.renderBlocks(w, width)
	}
	var b strings.Builder
	border := func(l, m, r string) {
		b.WriteString(l)
		for c, cw := range widths {
			if c > 0 {
				b.WriteString(m)
			}
			b.WriteString(strings.Repeat("─", cw+2))
		}
		b.WriteString(r + "\n")
	}
	row := func(ri int, cells []string, center bool) {
		lines := make([][]string, n)
		height := 1
		for c := range n {
			lines[c] = Wrap(cell(cells, c), widths[c])
			height = max(height, len(lines[c]))
		}
		for h := range height {
			b.WriteString("│")
			for c := range n {
				s := ""
				if h < len(lines[c]) {
					s = lines[c][h]
				}
				pad := widths[c] - Width(s)
				left := 0
				if center {
					left = pad / 2
				}
				if t.Style != nil && ri >= 0 && s != "" {
					s = t.Style(ri, c, s)
				}
				b.WriteString(" " + strings.Repeat(" ", left) + s + strings.Repeat(" ", pad-left) + " │")
			}
			b.WriteString("\n")
		}
	}
	border("┌", "┬", "┐")
	row(-1, t.Header, true)
	border("├", "┼", "┤")
	for i, r := range t.Rows {
		row(i, r, false)
	}
	border("└", "┴", "┘")
	_, err := io.WriteString(w, b.String())
	return err
}

// natural is the width of each column: its widest line.
func (t *Table) natural() []int {
	widths := make([]int, len(t.Header))
	for c := range widths {
		widths[c] = Width(t.Header[c])
		for _, r := range t.Rows {
			for _, l := range strings.Split(cell(r, c), "\n") {
				widths[c] = max(widths[c], Width(l))
			}
		}
	}
	return widths
}

// shrink narrows widths, widest column first, until the table fits width,
// and reports whether it does.
func (t *Table) shrink(widths []int, width int) bool {
	mins := make([]int, len(widths))
	for c := range widths {
		mins[c] = 4
		if c < len(t.MinWidth) && t.MinWidth[c] > 0 {
			mins[c] = t.MinWidth[c]
		} else {
			for _, word := range strings.Fields(t.Header[c]) {
				mins[c] = max(mins[c], Width(word))
			}
		}
	}
	return Shrink(widths, mins, width-BoxOverhead(len(widths)))
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

// renderBlocks writes each row as a block of "HEADER: value" lines, the
// values wrapped to width, a blank line between blocks.
func (t *Table) renderBlocks(w io.Writer, width int) error {
	var b strings.Builder
	label := 0
	for _, h := range t.Header {
		label = max(label, Width(h))
	}
	for i, r := range t.Rows {
		if i > 0 {
			b.WriteString("\n")
		}
		for c, h := range t.Header {
			v := cell(r, c)
			if v == "" {
				continue
			}
			prefix := h + ":" + strings.Repeat(" ", label-Width(h)+1)
			lines := Indent(prefix, v, width)
			for _, l := range lines {
				b.WriteString(l + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
	return widths, t.shrink(widths, width)
}
