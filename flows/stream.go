package flows

import (
	"bufio"
	"bytes"
	"io"
	"time"

	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/internal/jsontime"
	"github.com/netmortem/netmortem/model"
)

// TableWidths sizes the columns of the table form's attempts, given the
// attempts one at a time: a first read of the captures, before
// TableWriter (Table.Write in "table") or FittedWriter (Table.WriteTable
// at a width) writes them from a second.
type TableWidths struct {
	w  []int
	ok bool
	n  int
	// The fitted table's sizes, the first column's without the root.
	fit   *fitSizes
	where plainPrefix
	keep  *rowKeeper // the rows sized, when kept (Keep)
}

// NewTableWidths returns the sizes of a table of no attempt.
func NewTableWidths() *TableWidths {
	pt := plainTable{header: columns, rows: func(func([]string) bool) {}}
	m := &TableWidths{fit: newFitSizes(newKeyedWidths())}
	m.w, m.ok = pt.widths()
	return m
}

// Add sizes the columns for a, an attempt selected.
func (m *TableWidths) Add(a *model.Attempt) {
	r := a.Row()
	m.AddRow(&r)
}

// AddRow sizes the columns for the attempt whose row is r (r.Attempt,
// when it is set), an attempt selected: a TableWidths takes the rows a
// capture's tracker hands on (parse.Options.EachRow) as it takes their
// attempts.
func (m *TableWidths) AddRow(r *model.Row) {
	if r.Attempt != nil {
		m.Add(r.Attempt)
		return
	}
	row := m.size(r)
	if m.keep != nil {
		m.keep.add(row)
	}
}

// size sizes the columns for the row r, an attempt selected without its
// attempt, and returns its cells, formatted (m.fit.cells).
func (m *TableWidths) size(r *model.Row) *rowCells {
	m.n++
	z := m.fit
	row := &z.cells
	row.formatRow(r)
	z.addWhere(r.Node, r.Pos)
	if m.ok {
		w, ok := m.where.width(row.cell(0))
		m.ok = ok
		m.w[0] = max(m.w[0], w)
	}
	// Each cell is read once for both tables' sizes (fitSizes.add's
	// and plainBytes'), printable ASCII, as nearly every cell is, at
	// once: every cell but the first is tested in one pass.
	plain := ascii(row.buf[row.ends[0]:])
	for i := 1; i < numColumns; i++ {
		c := row.cell(i)
		if plain || ascii(c) {
			z.widest[i] = max(z.widest[i], len(c))
			if m.ok {
				m.w[i] = max(m.w[i], trimmedLen(c))
			}
			continue
		}
		z.widest[i] = max(z.widest[i], fit.LineWidth(string(c)))
		if m.ok {
			w, ok := plainBytes(c)
			m.ok = ok
			m.w[i] = max(m.w[i], w)
		}
	}
	return row
}

// trimmedLen returns the length of c without its leading and trailing
// spaces: len(bytes.Trim(c, " ")).
func trimmedLen(c []byte) int {
	i, j := 0, len(c)
	for i < j && c[i] == ' ' {
		i++
	}
	for j > i && c[j-1] == ' ' {
		j--
	}
	return j - i
}

// plainBytes is plainCell's width and verdict for the cell c, measured
// as bytes where it is ASCII.
func plainBytes(c []byte) (int, bool) {
	if ascii(c) {
		return trimmedLen(c), true
	}
	_, w, ok := plainCell(string(c))
	return w, ok
}

// plainPrefix is plainBytes for the first cells of rows, positions in
// the same file whose name is not ASCII, remembering the last: the
// cell's width is its file's (tablewriter adds the widths of its runes)
// plus its ASCII frame or line number's.
type plainPrefix struct {
	prefix []byte
	w      int
}

// cellWidth returns plainBytes(c) for cell i of a row, measuring the
// first through pp.
func (pp *plainPrefix) cellWidth(i int, c []byte) (int, bool) {
	if i == 0 {
		return pp.width(c)
	}
	return plainBytes(c)
}

// width returns plainBytes(c), measuring the part of c before its last
// '#' or ':' once for every cell that shares it.
func (pp *plainPrefix) width(c []byte) (int, bool) {
	if ascii(c) {
		return trimmedLen(c), true // plainBytes(c), without looking for the number
	}
	i := bytes.LastIndexAny(c, "#:")
	if i <= 0 || c[0] == ' ' || c[i-1] == ' ' || ascii(c) || !ascii(c[i:]) || c[len(c)-1] == ' ' {
		// Trimmed, a part ending in a space would not add up.
		return plainBytes(c)
	}
	if !bytes.Equal(c[:i], pp.prefix) {
		w, ok := plainBytes(c[:i])
		if !ok {
			return 0, false
		}
		pp.prefix, pp.w = append(pp.prefix[:0], c[:i]...), w
	}
	return pp.w + len(c) - i, true
}

// Plain reports whether every cell is of printable runes: otherwise the
// table is tablewriter's to write, from every attempt held (Table.Write).
func (m *TableWidths) Plain() bool { return m.ok }

// Fits reports whether FittedWriter can write the table fitted to a
// width from these sizes: every attempt is at a frame or a line of a
// capture, as every attempt read from captures is. Otherwise the table
// is to be written from every attempt held (Table.WriteTable).
func (m *TableWidths) Fits() bool { return !m.fit.where.odd }

// FittedWriter writes the table form fitted to a width an attempt at a
// time, the same bytes as Table.WriteTable for the same attempts: the
// summary and endpoints of t (a Builder's), then the attempts that pass
// its filter as a second read of the captures hands them on, in columns
// laid out from the sizes a first read gave (TableWidths, which must
// Fit).
type FittedWriter struct {
	w      *bufio.Writer
	filter Filter
	rows   *fittedRows // nil: no attempt is selected, the table is written
}

// NewFittedWriter returns a FittedWriter writing to w fitted to width
// columns (more than 0), and writes the start of the table at once.
func NewFittedWriter(w io.Writer, t *Table, f Filter, m *TableWidths, width int) *FittedWriter {
	fw := &FittedWriter{w: bufio.NewWriterSize(w, 64<<10), filter: f}
	if !t.writeFittedStart(fw.w, width, m.n) {
		fw.rows = newFittedRows(fw.w, t.root(), m.fit, width)
	}
	return fw
}

// Write writes a's row if it passes the filter. The attempt is not kept.
func (fw *FittedWriter) Write(a *model.Attempt) {
	if fw.rows != nil && fw.filter.Match(a) {
		fw.rows.write(a)
	}
}

// Close ends the table and returns the first error writing met.
func (fw *FittedWriter) Close() error {
	if fw.rows != nil {
		fw.rows.close()
		fw.rows = nil
	}
	return fw.w.Flush()
}

// TableWriter writes the table form of a Table an attempt at a time,
// the same bytes as Table.Write in "table" for the same attempts: the
// summary and endpoints of t (a Builder's), then the attempts that pass
// its filter as a second read of the captures hands them on, in columns
// sized by a first read (TableWidths, which must be Plain).
type TableWriter struct {
	w      *bufio.Writer
	filter Filter
	widths []int
	done   bool // no attempt is selected: the table is written
	err    error
	row    rowCells
	where  plainPrefix
}

// NewTableWriter returns a TableWriter writing to w, and writes the start
// of the table at once.
func NewTableWriter(w io.Writer, t *Table, f Filter, m *TableWidths) *TableWriter {
	tw := &TableWriter{w: bufio.NewWriterSize(w, 64<<10), filter: f, widths: m.w}
	tw.done, tw.err = t.writeTableStart(tw.w, m.n)
	if !tw.done && tw.err == nil {
		(&plainTable{header: columns}).writeHead(tw.w, m.w)
	}
	return tw
}

// Write writes a's row if it passes the filter. The attempt is not kept.
func (tw *TableWriter) Write(a *model.Attempt) {
	if tw.done || tw.err != nil || !tw.filter.Match(a) {
		return
	}
	tw.row.format(a)
	tw.writeRow(&tw.row)
}

// writeRow writes the row r.
func (tw *TableWriter) writeRow(r *rowCells) {
	for i, n := range tw.widths {
		c := bytes.Trim(r.cell(i), " ")
		w, _ := tw.where.cellWidth(i, c) // of printable runes (TableWidths.Plain)
		tw.w.WriteString("│ ")
		tw.w.Write(c)
		tw.w.WriteString(fit.Spaces(n - w))
		tw.w.WriteString(" ")
	}
	tw.w.WriteString("│\n")
}

// Close ends the table and returns the first error writing met.
func (tw *TableWriter) Close() error {
	if tw.err != nil {
		return tw.err
	}
	if !tw.done {
		plainRule(tw.w, tw.widths, "└", "┴", "┘")
	}
	return tw.w.Flush()
}

// rangeCount counts the times of attempts that RFC 3339 cannot write as
// they are, as Table.OutOfRange does, and where the first one is.
type rangeCount struct {
	n     int
	first model.Pos
}

// note counts a's times out of range.
func (c *rangeCount) note(a *model.Attempt) {
	if utcInRange(a) {
		return // as every time of a capture's attempts, but for a far-off clock
	}
	c.time(a.Start, a.Pos)
	c.time(a.End, a.Pos)
	// A segment's place is worked out only for a time out of range.
	for _, segs := range [][]model.Seg{a.SYN, a.SYNACK, a.ClientRST, a.ServerRST} {
		for i := range segs {
			if !jsontime.InRange(segs[i].Time) {
				c.time(segs[i].Time, a.SegPos(segs[i]))
			}
		}
	}
	for _, s := range []*model.Seg{a.FirstAck, a.ClientFIN, a.ServerFIN} {
		if s != nil && !jsontime.InRange(s.Time) {
			c.time(s.Time, a.SegPos(*s))
		}
	}
	for _, d := range []*model.DataSizes{a.ClientData, a.ServerData} {
		if d == nil {
			continue
		}
		for i := range d.Retx {
			if g := &d.Retx[i]; !jsontime.InRange(g.Time) {
				c.time(g.Time, a.SegPos(*g))
			}
		}
	}
}

// noteRow counts the start of r, a row without its attempt, when it is
// out of range: the row's only time. (A row the tracker hands on without
// its attempt has every time of it in range.)
func (c *rangeCount) noteRow(r *model.Row) {
	if !jsontime.UTCInRange(r.Start) {
		c.time(r.Start, r.Pos)
	}
}

// utcInRange reports whether the times note counts are all in UTC and in
// range (jsontime.UTCInRange), as one pass that calls nothing.
func utcInRange(a *model.Attempt) bool {
	return jsontime.UTCInRange(a.Start) && jsontime.UTCInRange(a.End) &&
		segsInRange(a.SYN) && segsInRange(a.SYNACK) && segsInRange(a.ClientRST) && segsInRange(a.ServerRST) &&
		segInRange(a.FirstAck) && segInRange(a.ClientFIN) && segInRange(a.ServerFIN) &&
		(a.ClientData == nil || segsInRange(a.ClientData.Retx)) && (a.ServerData == nil || segsInRange(a.ServerData.Retx))
}

// segsInRange reports whether the times of segs are all in UTC and in
// range.
func segsInRange(segs []model.Seg) bool {
	for i := range segs {
		if !jsontime.UTCInRange(segs[i].Time) {
			return false
		}
	}
	return true
}

// segInRange reports whether s is nil or its time in UTC and in range.
func segInRange(s *model.Seg) bool { return s == nil || jsontime.UTCInRange(s.Time) }

// time counts t, at pos, when it is out of range.
func (c *rangeCount) time(t time.Time, pos model.Pos) {
	if !jsontime.InRange(t) {
		if c.n == 0 {
			c.first = pos
		}
		c.n++
	}
}

// OutOfRange counts the times of the attempts added that RFC 3339 cannot
// write as they are, and returns where the first one is.
func (b *Builder) OutOfRange() (n int, first model.Pos) { return b.ranges.n, b.ranges.first }

// Untimed is Table.Untimed for the attempts added so far.
func (b *Builder) Untimed() (n int, first model.Pos) { return b.unplaced.count(missTime) }

// Undated is Table.Undated for the attempts added so far.
func (b *Builder) Undated() (n int, first model.Pos, dated bool) { return b.unplaced.undated() }

// JSONWriter writes the JSON form of a Table an attempt at a time: the
// table's summary, captures and endpoints first, from a Builder that was
// given the same attempts before (a first read of the captures), then
// the attempts as a second read hands them on. For the same attempts,
// the same bytes as Table.Write in "json"; it holds none of them.
type JSONWriter struct {
	w      *bufio.Writer
	filter Filter
	n      int
	err    error
	enc    jsonAttempt
}

// NewJSONWriter returns a JSONWriter that writes to w the attempts that
// pass f (whose times must be absolute) after the start of t's JSON form,
// which it writes at once.
func NewJSONWriter(w io.Writer, t *Table, f Filter) *JSONWriter {
	j := &JSONWriter{w: bufio.NewWriterSize(w, 64<<10), filter: f}
	c := *t
	c.Captures = clampedCaptures(t.Captures)
	j.err = c.writeJSONHead(j.w)
	return j
}

// Write writes a if it passes the filter, its times clamped as
// Table.Write clamps them. The attempt is not kept.
func (j *JSONWriter) Write(a *model.Attempt) {
	if j.err != nil || !j.filter.Match(a) {
		return
	}
	if !utcInRange(a) {
		// Copied only to be clamped: a copy escapes, and every one
		// would make 450 bytes of garbage.
		c := *a
		clampAttempt(&c)
		a = &c
	}
	j.err = writeJSONAttempt(j.w, &j.enc, a, j.n == 0)
	j.n++
}

// Close ends the JSON form and returns the first error writing met.
func (j *JSONWriter) Close() error {
	if j.err != nil {
		return j.err
	}
	if j.n == 0 {
		j.w.WriteString("[]")
	} else {
		j.w.WriteString("\n  ]")
	}
	j.w.WriteString("\n}\n")
	return j.w.Flush()
}
