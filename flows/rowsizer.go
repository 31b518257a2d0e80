package flows

import (
	"errors"

	"github.com/netmortem/netmortem/model"
)

// RowSizer sizes and formats rows for the TableWidths it was made from
// (TableWidths.Sizer), apart from it: several RowSizers, each on a
// goroutine of its own, size the rows of a large capture on every core,
// where the TableWidths alone took a core's time for each row after the
// capture's last packet. TableWidths.AddSized then adds what a RowSizer
// sized, in the order the rows were handed on: the sizes, and the rows
// formatted, as the TableWidths keeps them (Keep). A RowSizer is used by
// one goroutine at a time, and its TableWidths by one goroutine at a
// time, which may be another.
type RowSizer struct {
	part TableWidths // the sizes of the rows given; its n, of those since the last AddSized
	keep bool        // the rows are kept: rec holds those since the last AddSized
	rec  []byte      // those rows, as the TableWidths' keeper keeps them
	prev []byte      // the last of them, formatted
	rows int         // how many rec holds
}

// Sizer returns a RowSizer for m, which formats the rows it sizes for m
// to keep when m keeps rows (Keep, called before Sizer).
func (m *TableWidths) Sizer() *RowSizer {
	return &RowSizer{part: *NewTableWidths(), keep: m.keep != nil}
}

// AddRow sizes the columns for the attempt whose row is r, as
// TableWidths.AddRow does, and formats it for the TableWidths to keep.
func (s *RowSizer) AddRow(r *model.Row) {
	if r.Attempt != nil {
		w := r.Attempt.Row()
		r = &w
	}
	row := s.part.size(r)
	if !s.keep {
		return
	}
	// The first row after AddSized shares nothing with the one before:
	// the keeper reads it whole whatever preceded it.
	prev := s.prev
	if s.rows == 0 {
		prev = nil
	}
	s.rec = appendKept(s.rec, prev, row)
	// The row's bytes are the next one's prev: the next is formatted
	// over the buffer of this one's.
	s.prev, row.buf = row.buf, s.prev[:0]
	s.rows++
}

// AddSized adds to m what s sized since the last AddSized, as if m had
// been given those rows itself (AddRow), and keeps them, formatted, after
// the rows m kept before. The sizes of rows come to the same whatever
// their order: only the rows kept follow the order of the calls.
func (m *TableWidths) AddSized(s *RowSizer) {
	p := &s.part
	n := p.n
	m.n += n
	p.n = 0
	if m.ok = m.ok && p.ok; m.ok {
		for i, w := range p.w {
			m.w[i] = max(m.w[i], w)
		}
	}
	for i, w := range p.fit.widest {
		m.fit.widest[i] = max(m.fit.widest[i], w)
	}
	m.fit.where.join(p.fit.where)
	switch {
	case m.keep == nil:
	case !s.keep && n > 0 && m.keep.err == nil:
		// Rows sized but not formatted (Keep called after Sizer): m has
		// not kept every row, and WriteRows says so (Kept).
		m.keep.err = errors.New("rows: sized by a RowSizer made before Keep")
	case s.rows > 0 && m.keep.write(s.rec, s.rows):
		m.keep.prev = append(m.keep.prev[:0], s.prev...)
	}
	s.rec, s.rows = s.rec[:0], 0
}

// join adds to ww what o sized, as if ww had sized those attempts too,
// and lets o go of its largest numbers by node and file. Both are sized
// alike (newKeyedWidths or newWhereWidths with one root).
func (ww *whereWidths) join(o *whereWidths) {
	ww.natural = max(ww.natural, o.natural)
	switch {
	case !ww.one:
	case !o.one || ww.seen && o.seen && ww.file != o.file:
		ww.one = false
	case o.seen:
		ww.file, ww.seen = o.file, true
		ww.frame = max(ww.frame, o.frame)
	}
	ww.odd = ww.odd || o.odd
	for k, om := range o.keys {
		if m := ww.keys[k]; m != nil {
			m.frame, m.line = max(m.frame, om.frame), max(m.line, om.line)
		} else {
			ww.keys[k] = &whereMax{om.frame, om.line}
		}
	}
	if len(o.keys) > 0 {
		clear(o.keys)
		o.last = nil
	}
}
