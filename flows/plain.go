package flows

import (
	"bufio"
	"io"
	"strings"

	"github.com/netmortem/netmortem/internal/fit"
)

// plainTable writes a table as newTable's tablewriter writes it (box
// drawing, headers centred, cells left-aligned, each trimmed of spaces) for
// cells of printable ASCII only, where a cell's width is its length, from
// rows made again for each pass: one to size the columns, one to write
// them. tablewriter holds every row, and several values for every cell,
// until it renders: gigabytes for the hundreds of thousands of attempts
// of a large capture.
type plainTable struct {
	header []string
	rows   func(yield func([]string) bool) // the rows, made anew at each call
}

// plainCell returns s trimmed of spaces as tablewriter trims it, and
// whether s is printable ASCII.
func plainCell(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return "", false
		}
	}
	return strings.Trim(s, " "), true
}

// widths returns the width of each column, and false when a cell is not
// printable ASCII: the table is then tablewriter's to write.
func (p *plainTable) widths() ([]int, bool) {
	w := make([]int, len(p.header))
	ok := true
	measure := func(row []string) bool {
		if len(row) != len(w) {
			ok = false
			return false
		}
		for i, c := range row {
			c, plain := plainCell(c)
			if !plain {
				ok = false
				return false
			}
			w[i] = max(w[i], len(c))
		}
		return true
	}
	if !measure(p.header) {
		return nil, false
	}
	p.rows(measure)
	return w, ok
}

// write writes the table with the column widths w.
func (p *plainTable) write(out io.Writer, w []int) error {
	bw := bufio.NewWriterSize(out, 64<<10)
	p.writeHead(bw, w)
	p.rows(func(row []string) bool {
		plainLine(bw, w, row, false)
		return true
	})
	plainRule(bw, w, "└", "┴", "┘")
	return bw.Flush()
}

// writeHead writes the table's top, header and the rule under it.
func (p *plainTable) writeHead(bw *bufio.Writer, w []int) {
	plainRule(bw, w, "┌", "┬", "┐")
	plainLine(bw, w, p.header, true)
	plainRule(bw, w, "├", "┼", "┤")
}

// plainRule writes a rule across columns of widths w.
func plainRule(bw *bufio.Writer, w []int, left, mid, right string) {
	bw.WriteString(left)
	for i, n := range w {
		if i > 0 {
			bw.WriteString(mid)
		}
		bw.WriteString(strings.Repeat("─", n+2))
	}
	bw.WriteString(right + "\n")
}

// plainLine writes a row of cells in columns of widths w, centred or
// left-aligned.
func plainLine(bw *bufio.Writer, w []int, cells []string, centre bool) {
	for i, c := range cells {
		c, _ = plainCell(c)
		left := 0
		if centre {
			left = (w[i] - len(c)) / 2
		}
		bw.WriteString("│ ")
		bw.WriteString(fit.Spaces(left))
		bw.WriteString(c)
		bw.WriteString(fit.Spaces(w[i] - len(c) - left))
		bw.WriteString(" ")
	}
	bw.WriteString("│\n")
}
