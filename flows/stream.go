package flows

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/internal/jsontime"
	"github.com/netmortem/netmortem/model"
)

// CSVWriter writes the CSV form of a Table an attempt at a time, as the
// attempts come (parse.Options.EachAttempt hands them on as their
// connections end), holding none of them: for the same attempts, the
// same bytes as Table.Write in "csv". The CSV form has no summary, so
// nothing in it waits for the last attempt. Rows are written straight
// into a buffer, as encoding/csv would write them.
type CSVWriter struct {
	w      *bufio.Writer
	filter Filter
	buf    []byte
	ranges rangeCount
	// plain caches whether the last prefix of a "where" cell (the node
	// and the file) is written as it is: printable ASCII that neither a
	// spreadsheet nor CSV quoting changes.
	plainNode, plainFile string
	plain                bool
	start                microCache
	client, server       addrCache
	frames               frameCache
	names                [3]csvName // the outcome's, the state's, the history's
}

// NewCSVWriter returns a CSVWriter that writes to w the attempts that
// pass f, whose times must be absolute (Since and Until resolved). It
// writes the header at once.
func NewCSVWriter(w io.Writer, f Filter) *CSVWriter {
	c := &CSVWriter{w: bufio.NewWriterSize(w, 64<<10), filter: f}
	for i, col := range columns {
		if i > 0 {
			c.buf = append(c.buf, ',')
		}
		c.buf = appendCSVField(c.buf, col)
	}
	c.w.Write(append(c.buf, '\n')) // an error stays in w, for Close
	return c
}

// Write writes a if it passes the filter. The attempt is not kept.
func (c *CSVWriter) Write(a *model.Attempt) {
	if !c.filter.Match(a) {
		return
	}
	c.ranges.note(a)
	r := a.Row()
	c.write(&r)
}

// WriteRow writes r, an attempt's row (r.Attempt's when it is set), if
// it passes the filter, as Write writes the attempt: a capture's tracker
// hands such rows on (parse.Options.EachRow) in fewer instructions than
// it builds attempts. The row is not kept.
func (c *CSVWriter) WriteRow(r *model.Row) {
	if r.Attempt != nil {
		c.Write(r.Attempt)
		return
	}
	if !c.filter.match(r.Client, r.Server, r.Outcome, r.ConnState, r.Start) {
		return
	}
	// A row handed on without its attempt has every time of it in range;
	// one made otherwise has its start counted.
	if !jsontime.UTCInRange(r.Start) {
		c.ranges.time(r.Start, r.Pos)
	}
	c.write(r)
}

// write writes the row r.
func (c *CSVWriter) write(r *model.Row) {
	// The row is written into the buffer's free space, which Write then
	// takes as it is, rather than copied there from a buffer of its own.
	c.w.Write(c.appendRow(c.w.AvailableBuffer(), r))
}

// appendRow appends a's row, as Table.row gives it and encoding/csv
// writes it, its cells made inert (inertCell). Only the first cell, which
// names a file, and the names of the outcome, state and history, which
// the tracker gives but a caller may make (appendCSVText), can need
// quoting or an apostrophe: the others are numbers, times, addresses and
// frame lists (#1 #2, L3), none of which starts with = + - @ but a
// number.
func (c *CSVWriter) appendRow(b []byte, r *model.Row) []byte {
	p := r.Pos
	if p.Frame > 0 && p.Line == 0 && p.Object == "" && p.Path == "" && c.plainPrefix(r.Node, p.File) {
		b = appendFramePos(b, r.Node, p.File, p.Frame, &c.frames)
	} else {
		where := p.String()
		if r.Node != "" {
			where = r.Node + " " + where
		}
		b = appendCSVField(b, inertCell(escape.String(where)))
	}
	b = append(b, ',')
	b = c.start.append(b, r.Start)
	b = c.client.append(append(b, ','), r.Client)
	b = c.server.append(append(b, ','), r.Server)
	b = c.names[0].append(append(b, ','), string(r.Outcome))
	b = c.names[1].append(append(b, ','), r.ConnState)
	b = c.names[2].append(append(b, ','), r.History)
	b = appendSegRefs(append(b, ','), &r.SYN, &c.frames)
	b = appendSegRefs(append(b, ','), &r.SYNACK, &c.frames)
	b = appendSegRefs(append(b, ','), &r.RST, &c.frames)
	b = appendInt(append(b, ','), int64(r.SYNRetransmissions))
	b = append(b, ',')
	if r.SYNACKTimed {
		b = appendMillis(b, r.TimeToSYNACK)
	}
	b = appendInt(append(b, ','), int64(r.Packets))
	b = appendInt(append(b, ','), r.ClientBytes)
	b = appendInt(append(b, ','), r.ServerBytes)
	return append(b, '\n')
}

// csvName writes a name the tracker gives (an outcome, a Zeek state or
// history) into a CSV row as the table's CSV form writes it: as it is,
// but for a name that CSV quoting or a spreadsheet would change, which
// only an attempt made by hand can hold. It remembers, by where their
// bytes are, the last few names that needed nothing: the tracker's names
// are constants and interned strings, the same few bytes row after row,
// and checking where a string is costs less than reading it (strings
// are immutable: the same bytes at the same place are the same name).
type csvName struct {
	data [8]*byte
	n    [8]int
}

// append appends s to b.
func (c *csvName) append(b []byte, s string) []byte {
	p := unsafe.StringData(s)
	k := uintptr(unsafe.Pointer(p)) >> 3 & 7
	if c.data[k] != p || c.n[k] != len(s) {
		bad := uint8(0)
		if s != "" {
			bad = csvLead[s[0]]
		}
		for i := 0; i < len(s); i++ {
			bad |= csvBad[s[i]]
		}
		if bad != 0 || s == `\.` {
			return appendCSVField(b, inertCell(s))
		}
		c.data[k], c.n[k] = p, len(s)
	}
	return append(b, s...)
}

// csvBad is 1 for the bytes a CSV field does not hold as they are (all
// but printable ASCII, the comma and the quote), csvLead for those that
// change a field they start (inertCell's, and a space, which CSV quotes).
var csvBad, csvLead = func() (bad, lead [256]uint8) {
	for c := range bad {
		if c < 0x20 || c >= 0x7f || c == ',' || c == '"' {
			bad[c] = 1
		}
	}
	for _, c := range []byte("=+-@ \t\r") {
		lead[c] = 1
	}
	return bad, lead
}()

// plainPrefix reports whether the start of a "where" cell, the node (if
// any) and the file, is written as it is whatever frame follows it.
func (c *CSVWriter) plainPrefix(node, file string) bool {
	if node == c.plainNode && file == c.plainFile {
		return c.plain
	}
	prefix := file
	if node != "" {
		prefix = node + " " + file
	}
	c.plainNode, c.plainFile = node, file
	c.plain = prefix != "" && !strings.ContainsRune("=+-@\t\r", rune(prefix[0])) && prefix[0] != ' '
	for i := 0; c.plain && i < len(prefix); i++ {
		ch := prefix[i]
		c.plain = ch >= 0x20 && ch < 0x7f && ch != ',' && ch != '"'
	}
	return c.plain
}

// appendSegList appends the cell segRefs gives for the segments of l
// and then m, as appendSegRefs does.
func appendSegList(b []byte, l, m []model.Seg, frames *frameCache) []byte {
	var refs model.SegRefs
	refs.AddAll(l)
	refs.AddAll(m)
	return appendSegRefs(b, &refs, frames)
}

// appendSegRefs appends the cell segRefs gives for the segments l
// names, their frame numbers through frames.
func appendSegRefs(b []byte, l *model.SegRefs, frames *frameCache) []byte {
	for i := range min(l.N, model.MaxSegRefs) {
		if i > 0 {
			b = append(b, ' ')
		}
		if l.Frame[i] > 0 {
			b = frames.append(append(b, '#'), int64(l.Frame[i]))
		} else {
			b = appendInt(append(b, 'L'), int64(l.Line[i]))
		}
	}
	if l.N > model.MaxSegRefs {
		b = appendInt(append(b, " +"...), int64(l.N-model.MaxSegRefs))
	}
	return b
}

// appendCSVField appends field as encoding/csv's Writer writes it, with
// a comma between fields and "\n" ending lines: quoted when it holds a
// comma, a quote, a carriage return or a newline, starts with a space, or
// is \. (which PostgreSQL reads as the end of data).
func appendCSVField(b []byte, field string) []byte {
	quote := field == `\.`
	for i := 0; !quote && i < len(field); i++ {
		ch := field[i]
		quote = ch == '\n' || ch == '\r' || ch == '"' || ch == ','
	}
	if !quote && field != "" {
		r, _ := utf8.DecodeRuneInString(field)
		quote = unicode.IsSpace(r)
	}
	if !quote {
		return append(b, field...)
	}
	b = append(b, '"')
	for i := 0; i < len(field); i++ {
		if field[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, field[i])
	}
	return append(b, '"')
}

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
	m.n++
	z := m.fit
	row := &z.cells
	row.format(a)
	z.addWhere(a)
	if m.ok {
		w, ok := m.where.width(row.cell(0))
		m.ok = ok
		m.w[0] = max(m.w[0], w)
	}
	// Each cell is read once for both tables' sizes (fitSizes.add's
	// and plainBytes'), printable ASCII, as nearly every cell is, at
	// once.
	for i := 1; i < numColumns; i++ {
		c := row.cell(i)
		if ascii(c) {
			z.nat[i] = max(z.nat[i], len(c))
			if m.ok {
				m.w[i] = max(m.w[i], trimmedLen(c))
			}
			continue
		}
		z.nat[i] = max(z.nat[i], fit.LineWidth(string(c)))
		if m.ok {
			w, ok := plainBytes(c)
			m.ok = ok
			m.w[i] = max(m.w[i], w)
		}
	}
	if m.keep != nil {
		m.keep.add(row)
	}
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

// OutOfRange counts the times of the attempts written that RFC 3339
// cannot write as they are, and returns where the first one is (see
// Table.OutOfRange, which counts the captures' times too).
func (c *CSVWriter) OutOfRange() (n int, first model.Pos) { return c.ranges.n, c.ranges.first }

// OutOfRange counts the times of the attempts added that RFC 3339 cannot
// write as they are, and returns where the first one is.
func (b *Builder) OutOfRange() (n int, first model.Pos) { return b.ranges.n, b.ranges.first }

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

// Close writes what is buffered and returns the first error writing met.
func (c *CSVWriter) Close() error {
	return c.w.Flush()
}
