package flows

import (
	"bufio"
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/model"
)

// whereWidths sizes the first column of the fitted attempts' table, the
// attempts' positions written relative to the captures' directory (the
// root), and tells whether they are all frames of one capture, which a
// narrowed table writes as "#N" under a line naming it. Given the root,
// it measures each cell as written; without it (a first read of the
// captures, whose root is known once they are all read), it keeps, for
// each node and file, the largest frame and line number, whose cells
// are the widest of their kind, and measures those once the root is
// known (finish).
type whereWidths struct {
	exact   bool // the root is known: cells are measured as they come
	root    string
	natural int // the widest line measured
	// While every attempt is at a frame of one file (one): that file,
	// and the largest frame.
	file      string
	frame     int
	one, seen bool
	// Without the root: the largest numbers by node and file.
	keys    map[whereKey]*whereMax
	last    *whereMax // the entry of lastKey
	lastKey whereKey
	odd     bool // a position whose cell the largest numbers do not size
}

type whereKey struct{ node, file string }

type whereMax struct{ frame, line int }

// newWhereWidths returns the widths of no cell, measured relative to
// root.
func newWhereWidths(root string) *whereWidths {
	return &whereWidths{exact: true, root: root, one: true}
}

// newKeyedWidths returns the widths of no cell, for a root known later.
func newKeyedWidths() *whereWidths {
	return &whereWidths{one: true, keys: map[whereKey]*whereMax{}}
}

// note sizes the column, without the root, for an attempt on node at p.
func (ww *whereWidths) note(node string, p model.Pos) {
	ww.noteFile(node, p)
	if p.Col > 0 || p.Object != "" || p.Path != "" || (p.Line > 0) == (p.Frame > 0) {
		ww.odd = true
		return
	}
	k := whereKey{node, p.File}
	m := ww.last
	if m == nil || k != ww.lastKey {
		if m = ww.keys[k]; m == nil {
			m = &whereMax{}
			ww.keys[k] = m
		}
		ww.last, ww.lastKey = m, k // attempts come file after file
	}
	m.frame, m.line = max(m.frame, p.Frame), max(m.line, p.Line)
}

// measure sizes the column for cell as the table writes it.
func (ww *whereWidths) measure(cell string) {
	ww.natural = max(ww.natural, fit.LineWidth(ww.strip(cell)))
}

// noteFile tells, with each attempt, whether all are at frames of one
// capture, on no node: their cells are then that capture's name and
// "#frame=N", which a narrowed table writes as "#N".
func (ww *whereWidths) noteFile(node string, p model.Pos) {
	switch {
	case !ww.one:
	case node != "" || p.File == "" || p.Frame <= 0 || p.Line != 0 || p.Col != 0 || p.Object != "" || p.Path != "",
		ww.seen && p.File != ww.file:
		ww.one = false
	default:
		ww.file, ww.seen = p.File, true
		ww.frame = max(ww.frame, p.Frame)
	}
}

// strip returns cell relative to the root.
func (ww *whereWidths) strip(cell string) string {
	if ww.root == "" {
		return cell
	}
	return strings.Replace(cell, escape.String(ww.root+"/"), "", 1)
}

// finish returns the natural width of the column, that of the column of
// frames, and the one file whose frames the cells are ("" when they are
// not). Without the root, every position must have been one the largest
// numbers size (not odd).
func (ww *whereWidths) finish(root string) (natural, framed int, file string) {
	if !ww.exact {
		ww.exact, ww.root = true, root
		keys := make([]whereKey, 0, len(ww.keys))
		for k := range ww.keys {
			keys = append(keys, k)
		}
		// In a fixed order: which file a mismatch is found at does not
		// matter, but the order of a map would make it look as if.
		slices.SortFunc(keys, func(a, b whereKey) int {
			return strings.Compare(a.node+"\x00"+a.file, b.node+"\x00"+b.file)
		})
		for _, k := range keys {
			m := ww.keys[k]
			for _, p := range []model.Pos{{File: k.file, Frame: m.frame}, {File: k.file, Line: m.line}} {
				if p.Frame > 0 || p.Line > 0 {
					ww.measure(where(k.node, p))
				}
			}
		}
	}
	if !ww.one || !ww.seen {
		return ww.natural, 0, ""
	}
	if file = ww.strip(escape.String(ww.file)); file == "" {
		return ww.natural, 0, ""
	}
	return ww.natural, len("#") + len(strconv.Itoa(ww.frame)), file
}

// fitSizes sizes the columns of the fitted attempts' table, an attempt
// at a time.
type fitSizes struct {
	cells rowCells
	// widest holds the width of each column's widest cell, 0 for a
	// column empty in every row (the first column's is sized by where):
	// its natural width is that or its header's, whichever is wider.
	widest fit.Widths
	where  *whereWidths
}

// newFitSizes returns the sizes of a table of no attempt, whose first
// column is sized by where.
func newFitSizes(where *whereWidths) *fitSizes {
	return &fitSizes{widest: make(fit.Widths, numColumns), where: where}
}

// add sizes the columns for a, whose cells are formatted in z.cells.
func (z *fitSizes) add(a *model.Attempt) {
	z.addWhere(a.Node, a.Pos)
	for i := 1; i < numColumns; i++ {
		c := z.cells.cell(i)
		w := len(c)
		if !ascii(c) {
			w = fit.LineWidth(string(c))
		}
		z.widest[i] = max(z.widest[i], w)
	}
}

// addWhere sizes the first column for a, whose cells are formatted in
// z.cells.
func (z *fitSizes) addWhere(node string, p model.Pos) {
	if z.where.exact {
		z.where.measure(string(z.cells.cell(0)))
		z.where.noteFile(node, p)
	} else {
		z.where.note(node, p)
	}
}

// fittedRows writes the attempts' table fitted to a width, a row at a
// time, laid out from the natural widths of its columns (a first pass
// over the attempts): every column narrowed to fit; or, when they cannot
// all be made that narrow, the most telling ones (narrowColumns), the
// frames of a single capture as "#N" under a line that names it, and a
// line naming the columns left out; or, when even those do not fit, one
// block per attempt.
type fittedRows struct {
	bw     *bufio.Writer
	root   []byte // escaped, with its "/"; nil for none
	file   []byte // set: the first column gives the frames of this capture as "#N", after file and "#frame="
	cols   []int  // the columns shown
	left   []string
	width  int
	layout *fit.Layout
	row    rowCells
	cells  [][]byte
	// where and framed hold the first cell made relative to the root,
	// and as "#N".
	where, framed []byte
}

// newFittedRows lays the table out from z, the sizes of its columns, and
// writes its start.
func newFittedRows(bw *bufio.Writer, root string, z *fitSizes, width int) *fittedRows {
	where, framed, file := z.where.finish(root)
	nat := fit.NewWidths(columns)
	for i, w := range z.widest {
		nat[i] = max(nat[i], w)
	}
	nat[0] = max(nat[0], where)
	widest := slices.Clone(z.widest)
	widest[0] = max(widest[0], where)
	fr := &fittedRows{bw: bw, width: width}
	if root != "" {
		fr.root = []byte(escape.String(root + "/"))
	}
	cols, left, whole := wholeTable(columns, nat, widest, width)
	switch {
	case whole:
		fr.cols, fr.left = cols, left
	case file != "":
		fn := slices.Clone(nat)
		fn[0] = max(fit.Width(columns[0]), framed)
		order := filledFirst(columns, narrowColumns, narrowKept, widest)
		if cols, left, ok := narrowed(columns, fn, width, order, narrowKept); ok {
			// Narrowed, the frames of a single capture need not
			// repeat its name.
			fr.file, fr.cols, fr.left, nat = []byte(file+"#frame="), cols, left, fn
			line := "where: the first frame of each attempt in " + file
			bw.WriteString(strings.Join(fit.Wrap(line, width), "\n") + "\n")
			break
		}
		fallthrough
	default:
		fr.cols, fr.left = planNarrowed(columns, nat, widest, width, narrowColumns, narrowKept)
	}
	fr.layout = fit.NewLayout(pick(columns, fr.cols), pick(nat, fr.cols), nil, width)
	fr.cells = make([][]byte, len(fr.cols))
	fr.layout.Head(bw)
	return fr
}

// write writes a's row.
func (fr *fittedRows) write(a *model.Attempt) {
	fr.row.format(a)
	fr.writeRow(&fr.row)
}

// writeRow writes the row r.
func (fr *fittedRows) writeRow(r *rowCells) {
	for i, c := range fr.cols {
		fr.cells[i] = r.cell(c)
	}
	if len(fr.cols) > 0 && fr.cols[0] == 0 {
		fr.cells[0] = fr.whereCell(fr.cells[0])
	}
	fr.layout.RowBytes(fr.bw, fr.cells)
}

// part returns fittedRows writing rows into bw as fr does, with scratch
// of its own (Spool.Replay).
func (fr *fittedRows) part(bw *bufio.Writer) *fittedRows {
	c := *fr
	c.bw, c.row, c.where, c.framed = bw, rowCells{}, nil, nil
	c.cells = make([][]byte, len(fr.cols))
	c.layout = fr.layout.Copy()
	return &c
}

// whereCell returns the first cell, c as Table.row gives it, relative to
// the root, and as "#N" when it gives the frames of a single capture.
func (fr *fittedRows) whereCell(c []byte) []byte {
	if len(fr.root) > 0 {
		if i := bytes.Index(c, fr.root); i == 0 {
			c = c[len(fr.root):]
		} else if i > 0 {
			fr.where = append(append(fr.where[:0], c[:i]...), c[i+len(fr.root):]...)
			c = fr.where
		}
	}
	if fr.file != nil {
		fr.framed = append(append(fr.framed[:0], '#'), bytes.TrimPrefix(c, fr.file)...)
		c = fr.framed
	}
	return c
}

// close ends the table, naming the columns left out.
func (fr *fittedRows) close() {
	fr.layout.Foot(fr.bw)
	writeLeftOut(fr.bw, fr.left, fr.width)
}
