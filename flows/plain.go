package flows

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/netmortem/netmortem/internal/fit"
)

// plainTable writes a table as newTable's tablewriter writes it (box
// drawing, headers centred, cells left-aligned, each trimmed of spaces)
// for cells of printable runes (strconv.IsPrint, as escape.String leaves
// a cell; a cell's width is then tablewriter's own measure of it, its
// length for ASCII), from rows made again for each pass: one to size the
// columns, one to write them. tablewriter holds every row, and several
// values for every cell, until it renders: gigabytes for the hundreds of
// thousands of attempts of a large capture.
type plainTable struct {
	header []string
	rows   func(yield func([]string) bool) // the rows, made anew at each call
}

// plainCell returns s trimmed of spaces as tablewriter trims it, its
// width as tablewriter measures it, and whether its runes are all
// printable: other runes (control characters, spaces other than ASCII's,
// invalid bytes), which tablewriter trims, breaks or measures its own
// way, are left to it.
func plainCell(s string) (string, int, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return "", 0, false
		} else if c >= utf8.RuneSelf {
			return printableCell(s)
		}
	}
	s = strings.Trim(s, " ")
	return s, len(s), true
}

// printableCell is plainCell for a cell that is not all ASCII.
func printableCell(s string) (string, int, bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || !strconv.IsPrint(r) {
			return "", 0, false
		}
		i += n
	}
	s = strings.Trim(s, " ")
	return s, twwidth.Width(s), true
}

// widths returns the width of each column, and false when a cell is not
// of printable runes: the table is then tablewriter's to write.
func (p *plainTable) widths() ([]int, bool) {
	w := make([]int, len(p.header))
	ok := true
	measure := func(row []string) bool {
		if len(row) != len(w) {
			ok = false
			return false
		}
		for i, c := range row {
			_, cw, plain := plainCell(c)
			if !plain {
				ok = false
				return false
			}
			w[i] = max(w[i], cw)
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
		c, cw, _ := plainCell(c)
		left := 0
		if centre {
			left = (w[i] - cw) / 2
		}
		bw.WriteString("│ ")
		bw.WriteString(fit.Spaces(left))
		bw.WriteString(c)
		bw.WriteString(fit.Spaces(w[i] - cw - left))
		bw.WriteString(" ")
	}
	bw.WriteString("│\n")
}
