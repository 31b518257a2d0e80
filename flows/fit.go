package flows

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/fit"
)

// WriteTable writes t in the table form fitted to width columns: the
// summary wrapped, the tables' columns narrowed and their cells wrapped
// (a table that cannot be made that narrow keeps its most telling columns,
// naming those left out, or else is written one block per row), and the
// positions relative to the directory of the captures, named once at the
// top. width <= 0 writes what Write(w, "table") does.
func (t *Table) WriteTable(w io.Writer, width int) error {
	if t == nil || w == nil {
		return fmt.Errorf("flows: nil table or writer")
	}
	if width <= 0 {
		return t.writeTable(w)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if t.writeFittedStart(bw, width, len(t.Attempts)) {
		return bw.Flush()
	}
	z := newFitSizes(newWhereWidths(t.root()))
	for i := range t.Attempts {
		z.cells.format(&t.Attempts[i])
		z.add(&t.Attempts[i])
	}
	fr := newFittedRows(bw, t.root(), z, width)
	for i := range t.Attempts {
		fr.write(&t.Attempts[i])
	}
	fr.close()
	return bw.Flush()
}

// writeFittedStart writes the table form of t fitted to width, whose
// attempts selected are n, up to the table of the attempts, and reports
// whether it wrote it all: when none is selected.
func (t *Table) writeFittedStart(bw *bufio.Writer, width int, n int) bool {
	if root := t.root(); root != "" {
		for _, l := range fit.Wrap(escape.String("Captures under "+root+" (paths below are relative to it)"), width) {
			bw.WriteString(l + "\n")
		}
		bw.WriteString("\n")
	}
	for _, l := range fit.Wrap(t.summaryLine(), width) {
		bw.WriteString(l + "\n")
	}
	bw.WriteString("\n")
	if n == 0 {
		bw.WriteString(strings.Join(fit.Wrap("No connection attempts match.", width), "\n") + "\n")
		return true
	}
	rows := t.endpointRows()
	nat, widest := fit.NewWidths(endpointColumns), make(fit.Widths, len(endpointColumns))
	for _, r := range rows {
		nat.Add(r)
		widest.Add(r)
	}
	cols, left := planNarrowed(endpointColumns, nat, widest, width, endpointOrder, len(endpointOrder)-3)
	l := fit.NewLayout(pick(endpointColumns, cols), pick(nat, cols), nil, width)
	l.Head(bw)
	for _, r := range rows {
		l.Row(bw, pick(r, cols))
	}
	l.Foot(bw)
	writeLeftOut(bw, left, width)
	bw.WriteString("\n")
	return false
}

// endpointOrder are the columns of the summary per server endpoint in the
// order a narrow terminal keeps them.
var endpointOrder = []string{"SERVER", "ATTEMPTS", "ESTABLISHED", "REFUSED", "UNANSWERED", "RESET", "SYN RETX", "CLIENTS", "MEDIAN SYN/ACK MS"}

// narrowColumns are the columns of the connection table in the order a
// narrow terminal keeps them.
var narrowColumns = []string{"where", "client", "server", "outcome", "state", "history", "syn_retx", "synack_ms", "start",
	"packets", "syn", "synack", "rst", "bytes_out", "bytes_in"}

// narrowKept is how many of narrowColumns a narrowed table always holds.
const narrowKept = 5

// filledFirst returns order, the columns of header in the order a narrow
// terminal keeps them, with those past the first kept that are empty in
// every row (whose widest cell, by their index in header, is 0) moved
// to its end: a narrowed table leaves out a column that shows nothing
// before one that shows something.
func filledFirst(header, order []string, kept int, widest fit.Widths) []string {
	out := slices.Clone(order[:kept])
	var empty []string
	for _, h := range order[kept:] {
		if widest[slices.Index(header, h)] == 0 {
			empty = append(empty, h)
		} else {
			out = append(out, h)
		}
	}
	return append(out, empty...)
}

// planNarrowed returns the columns of a table of header, whose columns'
// natural widths are natural and widest cells widest, that it keeps at
// width, and the names of those left out: what wholeTable keeps, when it
// does; else the first kept of order and each other of order that still
// fits without wrapping a cell, those empty in every row last
// (filledFirst), in header's order; else every one (the table is then
// written one block per row).
func planNarrowed(header []string, natural, widest fit.Widths, width int, order []string, kept int) (cols []int, left []string) {
	if cols, left, ok := wholeTable(header, natural, widest, width); ok {
		return cols, left
	}
	if cols, left, ok := narrowed(header, natural, width, filledFirst(header, order, kept, widest), kept); ok {
		return cols, left
	}
	return allColumns(len(header)), nil
}

// wholeTable returns the columns a table of header, whose columns'
// natural widths are natural and widest cells widest, keeps at width
// with no column it shows left out for want of room, and the names of
// those left out: every one, when they fit without wrapping a cell; else
// every one but those empty in every row, when those are in the way and
// the others fit so; else every one, when they can all be made that
// narrow. ok is false when none of these fits.
func wholeTable(header []string, natural, widest fit.Widths, width int) (cols []int, left []string, ok bool) {
	all := allColumns(len(header))
	if unwrapped(natural, all, width) {
		return all, nil, true
	}
	filled := slices.DeleteFunc(slices.Clone(all), func(c int) bool { return widest[c] == 0 })
	if len(filled) < len(all) && unwrapped(natural, filled, width) {
		for c, h := range header {
			if widest[c] == 0 {
				left = append(left, h)
			}
		}
		return filled, left, true
	}
	return all, nil, fits(header, natural, all, width)
}

// unwrapped reports whether the columns cols of a table whose columns'
// natural widths are natural fit width side by side, no cell wrapped.
func unwrapped(natural []int, cols []int, width int) bool {
	total := fit.BoxOverhead(len(cols))
	for _, c := range cols {
		total += natural[c]
	}
	return total <= width
}

// narrowed returns the columns of header that fit width with the first
// kept columns of order and each other of order that fits without
// wrapping a cell, in header's order, and the names of the columns left
// out; ok is false when even the first kept do not fit.
func narrowed(header []string, natural []int, width int, order []string, kept int) (cols []int, left []string, ok bool) {
	index := map[string]int{}
	for c, h := range header {
		index[h] = c
	}
	keep := make([]bool, len(header))
	chosen := func() []int {
		cols = cols[:0]
		for c, k := range keep {
			if k {
				cols = append(cols, c)
			}
		}
		return cols
	}
	for _, h := range order[:kept] {
		keep[index[h]] = true
	}
	if !fits(header, natural, chosen(), width) {
		return nil, nil, false
	}
	for _, h := range order[kept:] {
		keep[index[h]] = true
		if !unwrapped(natural, chosen(), width) {
			keep[index[h]] = false
		}
	}
	for c, h := range header {
		if !keep[c] {
			left = append(left, h)
		}
	}
	return chosen(), left, true
}

// fits reports whether the columns cols of a table of header, of
// natural widths natural, can be made narrow enough for width.
func fits(header []string, natural []int, cols []int, width int) bool {
	return !fit.NewLayout(pick(header, cols), pick(natural, cols), nil, width).Blocks()
}

// allColumns returns the indices of n columns, in order.
func allColumns(n int) []int {
	all := make([]int, n)
	for c := range all {
		all[c] = c
	}
	return all
}

// pick returns the values of s at the indices cols.
func pick[T any](s []T, cols []int) []T {
	out := make([]T, len(cols))
	for i, c := range cols {
		out[i] = s[c]
	}
	return out
}

// writeLeftOut writes the line naming the columns left out, if any.
func writeLeftOut(bw *bufio.Writer, left []string, width int) {
	if len(left) == 0 {
		return
	}
	note := "Not shown at this width: " + strings.Join(left, ", ") + " (--width 0, -o csv or -o json show every column)."
	bw.WriteString(strings.Join(fit.Wrap(note, width), "\n") + "\n")
}

// root is the directory all of t's captures are in, or "".
func (t *Table) root() string {
	root := ""
	for i, c := range t.Captures {
		dir := ""
		if j := strings.LastIndex(c.File, "/"); j >= 0 {
			dir = c.File[:j]
		}
		if i == 0 {
			root = dir
			continue
		}
		for root != "" && dir != root && !strings.HasPrefix(dir, root+"/") {
			if j := strings.LastIndex(root, "/"); j >= 0 {
				root = root[:j]
			} else {
				root = ""
			}
		}
	}
	return root
}
