package flows

import (
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/model"
)

// CSVWriter writes the CSV form of a Table an attempt at a time, as the
// attempts come (parse.Options.EachAttempt hands them on as their
// connections end), holding none of them: for the same attempts, the
// same bytes as Table.Write in "csv". The CSV form has no summary, so
// nothing in it waits for the last attempt. Rows are written straight
// into a buffer, as encoding/csv would write them.
type CSVWriter struct {
	w   io.Writer
	err error // the first error writing to w
	// buf holds the rows not yet written to w (csvBuffer), each
	// appended in place: a bufio.Writer would copy each row from its
	// free space into itself, in a call of its own.
	buf      []byte
	filter   Filter
	all      bool // every attempt passes filter: it has no test
	ranges   rangeCount
	unplaced unplacedCount
	// plain caches whether the last prefix of a "where" cell (the node
	// and the file) is written as it is: printable ASCII that neither a
	// spreadsheet nor CSV quoting changes.
	plainNode, plainFile string
	plain                bool
	where                string // when plain, the cell's text before the frame: the node, the file, "#frame="
	start                microCache
	client, server       addrCache
	frames               frameCache
	names                [3]csvName // the outcome's, the state's, the history's
}

// NewCSVWriter returns a CSVWriter that writes to w the attempts that
// pass f, whose times must be absolute (Since and Until resolved). It
// writes the header at once.
func NewCSVWriter(w io.Writer, f Filter) *CSVWriter {
	c := &CSVWriter{w: w, buf: make([]byte, 0, csvBuffer), filter: f, all: f.none()}
	for i, col := range columns {
		if i > 0 {
			c.buf = append(c.buf, ',')
		}
		c.buf = appendCSVField(c.buf, col)
	}
	c.buf = append(c.buf, '\n')
	return c
}

// csvBuffer is the room of CSVWriter's buffer; it is written out when
// less than csvRoom is left, about the length of a few rows.
const (
	csvBuffer = 64 << 10
	csvRoom   = 1 << 10
)

// Write writes a if it passes the filter. The attempt is not kept.
func (c *CSVWriter) Write(a *model.Attempt) {
	if !c.filter.Match(a) {
		c.unplaced.note(&c.filter, a.Pos, a.Client, a.Server, a.Outcome, a.ConnState, a.Start)
		return
	}
	c.ranges.note(a)
	r := a.Row()
	c.write(&r)
}

// WriteRow writes r, an attempt's row (r.Attempt's when it is set), if
// it passes the filter, as Write writes the attempt: a capture's tracker
// hands such rows on (parse.Options.EachRow) in fewer instructions than
// it builds attempts. Of a row without its attempt, only the start is a
// time: OutOfRange counts it alone, where Write counts every time of
// the attempt (the tracker's rows without their attempts have every time
// in range). The row is not kept.
func (c *CSVWriter) WriteRow(r *model.Row) {
	if r.Attempt != nil {
		c.Write(r.Attempt)
		return
	}
	if !c.all && !c.filter.MatchRow(r) {
		c.unplaced.note(&c.filter, r.Pos, r.Client, r.Server, r.Outcome, r.ConnState, r.Start)
		return
	}
	c.ranges.noteRow(r)
	c.write(r)
}

// write writes the row r.
func (c *CSVWriter) write(r *model.Row) {
	c.buf = c.appendRow(c.buf, r)
	if cap(c.buf)-len(c.buf) < csvRoom {
		c.flush()
	}
}

// flush writes out the rows buffered, unless writing failed before, as
// bufio.Writer.Flush does, and empties the buffer.
func (c *CSVWriter) flush() {
	if c.err == nil && len(c.buf) > 0 {
		n, err := c.w.Write(c.buf)
		if err == nil && n < len(c.buf) {
			err = io.ErrShortWrite
		}
		c.err = err
	}
	c.buf = c.buf[:0]
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
		b = c.frames.append(append(b, c.where...), int64(p.Frame))
	} else {
		where := p.String()
		if r.Node != "" {
			where = r.Node + " " + where
		}
		b = appendCSVField(b, inertCell(escape.String(where)))
	}
	b = append(b, ',')
	b = c.start.appendStart(b, r.Start)
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
	c.where = prefix + "#frame="
	return c.plain
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

// OutOfRange counts the times of the attempts written that RFC 3339
// cannot write as they are, and returns where the first one is (see
// Table.OutOfRange, which counts the captures' times too).
func (c *CSVWriter) OutOfRange() (n int, first model.Pos) { return c.ranges.n, c.ranges.first }

// Untimed is Table.Untimed for the attempts written so far.
func (c *CSVWriter) Untimed() (n int, first model.Pos) { return c.unplaced.count(missTime) }

// Undated is Table.Undated for the attempts written so far.
func (c *CSVWriter) Undated() (n int, first model.Pos, dated bool) { return c.unplaced.undated() }

// Close writes what is buffered and returns the first error writing met.
func (c *CSVWriter) Close() error {
	c.flush()
	return c.err
}
