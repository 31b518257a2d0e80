package flows

import (
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
	var b strings.Builder
	root := t.root()
	if root != "" {
		for _, l := range fit.Wrap(escape.String("Captures under "+root+" (paths below are relative to it)"), width) {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
	}
	for _, l := range fit.Wrap(t.summaryLine(), width) {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
	if len(t.Attempts) == 0 {
		b.WriteString("No connection attempts match.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	et := &fit.Table{Header: endpointColumns, Rows: t.endpointRows()}
	if err := renderNarrowed(w, et, width, endpointOrder, len(endpointOrder)-3); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	at := &fit.Table{Header: columns}
	prefix := escape.String(root + "/")
	for i := range t.Attempts {
		row := t.row(&t.Attempts[i])
		if root != "" {
			row[0] = strings.Replace(row[0], prefix, "", 1)
		}
		at.Rows = append(at.Rows, row)
	}
	if _, ok := fit.ColumnWidths(at.Header, at.Rows, nil, width); !ok {
		if file, ok := oneFile(at.Rows); ok {
			// Narrowed, the frames of a single capture need not
			// repeat its name.
			framed := &fit.Table{Header: at.Header}
			for _, r := range at.Rows {
				r = slices.Clone(r)
				r[0] = "#" + strings.TrimPrefix(r[0], file+"#frame=")
				framed.Rows = append(framed.Rows, r)
			}
			if nt, left := narrowTable(framed, width, narrowColumns, narrowKept); nt != nil {
				line := "where: the first frame of each attempt in " + file
				if _, err := io.WriteString(w, strings.Join(fit.Wrap(line, width), "\n")+"\n"); err != nil {
					return err
				}
				return writeNarrowed(w, nt, left, width)
			}
		}
	}
	return renderNarrowed(w, at, width, narrowColumns, narrowKept)
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

// oneFile returns the capture all the positions of rows (their first
// cell, "FILE#frame=N") are in; ok is false when they are in several, on a
// node, or in lines of a text capture.
func oneFile(rows [][]string) (string, bool) {
	file := ""
	for i, r := range rows {
		f, n, ok := strings.Cut(r[0], "#frame=")
		if !ok || f == "" || strings.Contains(f, " ") || n == "" || (i > 0 && f != file) {
			return "", false
		}
		file = f
	}
	return file, file != ""
}

// renderNarrowed writes t fitted to width. When its columns cannot all be
// made that narrow, the table keeps the first kept columns of order and
// each other that still fits without wrapping a cell, and a line names
// those left out; when even those do not fit, t is written one block per
// row.
func renderNarrowed(w io.Writer, t *fit.Table, width int, order []string, kept int) error {
	if _, ok := fit.ColumnWidths(t.Header, t.Rows, nil, width); ok {
		return t.Render(w, width)
	}
	nt, left := narrowTable(t, width, order, kept)
	if nt == nil {
		return t.Render(w, width)
	}
	return writeNarrowed(w, nt, left, width)
}

// writeNarrowed writes the narrowed table nt and the line naming the
// columns left out.
func writeNarrowed(w io.Writer, nt *fit.Table, left []string, width int) error {
	if err := nt.Render(w, width); err != nil {
		return err
	}
	note := "Not shown at this width: " + strings.Join(left, ", ") + " (--width 0, -o csv or -o json show every column)."
	_, err := io.WriteString(w, strings.Join(fit.Wrap(note, width), "\n")+"\n")
	return err
}

// narrowTable returns the table of t's columns that fits width with the
// first kept columns of order and each other of order that fits without
// wrapping a cell, in t's order, and the names of the columns left out;
// nil when even the first kept do not fit.
func narrowTable(t *fit.Table, width int, order []string, kept int) (*fit.Table, []string) {
	index := map[string]int{}
	for c, h := range t.Header {
		index[h] = c
	}
	keep := map[int]bool{}
	build := func() *fit.Table {
		nt := &fit.Table{}
		for c, h := range t.Header {
			if keep[c] {
				nt.Header = append(nt.Header, h)
			}
		}
		for _, r := range t.Rows {
			var nr []string
			for c := range t.Header {
				if keep[c] {
					nr = append(nr, r[c])
				}
			}
			nt.Rows = append(nt.Rows, nr)
		}
		return nt
	}
	for _, h := range order[:kept] {
		keep[index[h]] = true
	}
	if _, ok := fit.ColumnWidths(build().Header, build().Rows, nil, width); !ok {
		return nil, nil
	}
	for _, h := range order[kept:] {
		keep[index[h]] = true
		nt := build()
		widths, _ := fit.ColumnWidths(nt.Header, nt.Rows, nil, 0)
		total := fit.BoxOverhead(len(widths))
		for _, cw := range widths {
			total += cw
		}
		if total > width {
			delete(keep, index[h])
		}
	}
	var left []string
	for c, h := range t.Header {
		if !keep[c] {
			left = append(left, h)
		}
	}
	return build(), left
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
