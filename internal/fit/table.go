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
	widths := make([]int, n)
	for c := range n {
		widths[c] = Width(t.Header[c])
		for _, r := range t.Rows {
			for _, l := range strings.Split(cell(r, c), "\n") {
				widths[c] = max(widths[c], Width(l))
			}
		}
	}
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

// shrink narrows widths, widest column first, until the table fits width,
// and reports whether it does.
func (t *Table) shrink(widths []int, width int) bool {
	avail := width - (3*len(widths) + 1)
	mins := make([]int, len(widths))
	total := 0
	for c := range widths {
		mins[c] = 4
		if c < len(t.MinWidth) && t.MinWidth[c] > 0 {
			mins[c] = t.MinWidth[c]
		} else {
			for _, word := range strings.Fields(t.Header[c]) {
				mins[c] = max(mins[c], Width(word))
			}
		}
		mins[c] = min(mins[c], widths[c])
		total += widths[c]
	}
	for total > avail {
		widest := -1
		for c := range widths {
			if widths[c] > mins[c] && (widest < 0 || widths[c] > widths[widest]) {
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
