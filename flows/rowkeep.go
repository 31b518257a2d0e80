package flows

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Keep makes m keep, in f, the row of every attempt it sizes from now on
// (Add), formatted, for WriteRows: a table's attempts are then formatted
// once, where keeping them (Spool) formats them again, after reading
// them back, to write them. f is an empty file the caller makes
// (os.CreateTemp) and removes. A row takes what it does not share with
// the row before, and a byte a cell: some 130 bytes on the bench capture
// (38 MB for its 301,613 attempts, where a Spool takes 26 MB).
// Kept says whether every row was kept.
func (m *TableWidths) Keep(f io.ReadWriteSeeker) {
	m.keep = &rowKeeper{f: f, w: bufio.NewWriterSize(f, 256<<10)}
}

// Kept writes out what m buffers of the rows it keeps and returns why it
// has not kept every row Add sized: an error writing the file, or Keep
// not called; nil when it has.
func (m *TableWidths) Kept() error {
	if m.keep == nil {
		return errors.New("rows: not kept")
	}
	return m.keep.flush()
}

// WriteRows writes the rows m kept through w, a TableWriter or a
// FittedWriter made from m, in the order Add took them, until ctx ends:
// the same bytes as the attempts Add sized written through w (Add is to
// be given those w's filter passes, as the writer's Write selects them).
// It returns the first error reading the rows back met, why m did not
// keep them (Kept), or ctx's error when it ended first; once writing the
// output fails, it stops, and the writer's Close says why. WriteRows runs
// once: m keeps no row after it.
func (m *TableWidths) WriteRows(ctx context.Context, w AttemptWriter) error {
	var write func(r *rowCells) // nil: the table takes no row
	var out *bufio.Writer
	switch w := w.(type) {
	case *TableWriter:
		if !w.done && w.err == nil {
			write, out = w.writeRow, w.w
		}
	case *FittedWriter:
		if w.rows != nil { // else no attempt is selected: the table is written
			write, out = w.rows.writeRow, w.w
		}
	default:
		return fmt.Errorf("rows: written through %T, not a TableWriter or a FittedWriter", w)
	}
	if err := m.Kept(); err != nil {
		return err
	}
	if m.keep.read {
		return errors.New("rows: read already")
	}
	if write == nil {
		m.keep.read = true
		return nil
	}
	if pw, ok := w.(partsWriter); ok && pw.inParts() {
		return m.keep.inParts(ctx, pw)
	}
	// Once the output fails (its bufio.Writer keeps the error, for the
	// writer's Close), no more rows are read.
	return m.keep.each(ctx, write, func() bool {
		_, err := out.Write(nil)
		return err != nil
	})
}

// rowKeeper keeps formatted rows in a file, each as the length of what
// its bytes share with the row before's, the length of the rest, the
// rest, then each cell's length, as uvarints: the first cells of a
// capture's rows, its file's name and a frame, share most of their
// bytes.
type rowKeeper struct {
	f    io.ReadWriteSeeker
	w    *bufio.Writer
	prev []byte // the row before's bytes
	rec  []byte
	n    int
	size int64 // the bytes written
	err  error
	read bool // each has run
}

// add keeps r, unless the keeper failed.
func (k *rowKeeper) add(r *rowCells) {
	k.rec = appendKept(k.rec[:0], k.prev, r)
	if k.write(k.rec, 1) {
		k.prev = append(k.prev[:0], r.buf...)
	}
}

// appendKept appends r, as the keeper keeps it after the row prev, to
// rec.
func appendKept(rec, prev []byte, r *rowCells) []byte {
	shared, n := 0, min(len(prev), len(r.buf))
	for shared+8 <= n && binary.LittleEndian.Uint64(prev[shared:]) == binary.LittleEndian.Uint64(r.buf[shared:]) {
		shared += 8
	}
	for shared < n && prev[shared] == r.buf[shared] {
		shared++
	}
	rec = binary.AppendUvarint(rec, uint64(shared))
	rec = binary.AppendUvarint(rec, uint64(len(r.buf)-shared))
	rec = append(rec, r.buf[shared:]...)
	from := 0
	for _, end := range r.ends {
		rec = binary.AppendUvarint(rec, uint64(end-from))
		from = end
	}
	return rec
}

// write keeps rec, n rows as appendKept encodes them, unless the keeper
// failed, and reports whether it did.
func (k *rowKeeper) write(rec []byte, n int) bool {
	if k.err != nil || k.read {
		return false
	}
	if _, err := k.w.Write(rec); err != nil {
		k.err = fmt.Errorf("rows: %w", err)
		return false
	}
	k.n += n
	k.size += int64(len(rec))
	return true
}

// flush writes what k buffers out, and returns why k failed.
func (k *rowKeeper) flush() error {
	if k.err == nil && !k.read {
		if err := k.w.Flush(); err != nil {
			k.err = fmt.Errorf("rows: %w", err)
		}
	}
	return k.err
}

// errRowBad is a row whose lengths do not add up, or that ends short.
var errRowBad = errors.New("lengths that do not add up, or cut short")

// errVarint is a length past 64 bits, as binary.ReadUvarint says it.
var errVarint = errors.New("binary: varint overflows a 64-bit integer")

// each calls write with each row k kept, in order, until ctx ends or
// failed reports true (both are checked every rowCheck rows).
func (k *rowKeeper) each(ctx context.Context, write func(r *rowCells), failed func() bool) error {
	k.read = true
	var stop error
	if err := k.rows(func(i int, r *rowCells) bool {
		if i%rowCheck == 0 {
			if stop = ctx.Err(); stop != nil || failed() {
				return false
			}
		}
		write(r)
		return true
	}); err != nil {
		return err
	}
	return stop
}

// rows reads the rows k kept from the start of its file, in order, and
// gives each to yield with its index, until yield returns false. It
// returns why the file could not be read back, naming the row that could
// not be, or nil.
func (k *rowKeeper) rows(yield func(i int, r *rowCells) bool) error {
	if _, err := k.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rows: %w", err)
	}
	br := bufio.NewReaderSize(k.f, 256<<10)
	left := k.size // a row's lengths are bounded by the bytes not yet read
	var r rowCells
	for i := range k.n {
		if err := k.readRow(br, &r, &left); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("rows: row %d: %w", i+1, err)
		}
		if !yield(i, &r) {
			return nil
		}
	}
	return nil
}

// rowCheck is how many rows each writes between looks at its context.
const rowCheck = 256

// readRow reads the next row into r, whose bytes are the row before's;
// left bounds the bytes the row's own can take (what the file holds past
// the rows read), and is lowered by them. Its lengths are decoded from
// the reader's buffer (uvarints), not a byte at a time.
func (k *rowKeeper) readRow(br *bufio.Reader, r *rowCells, left *int64) error {
	var head [2]uint64
	if err := readUvarints(br, head[:]); err != nil {
		return err
	}
	shared, rest := head[0], head[1]
	if shared > uint64(len(r.buf)) || rest > uint64(*left) {
		return errRowBad
	}
	n := int(shared) + int(rest)
	if cap(r.buf) < n {
		buf := make([]byte, n)
		copy(buf, r.buf[:shared])
		r.buf = buf
	}
	r.buf = r.buf[:n]
	if _, err := io.ReadFull(br, r.buf[shared:]); err != nil {
		return err
	}
	*left -= int64(rest)
	var lens [numColumns]uint64
	if err := readUvarints(br, lens[:]); err != nil {
		return err
	}
	end := 0
	for i, l := range lens {
		if l > uint64(n-end) {
			return errRowBad
		}
		end += int(l)
		r.ends[i] = end
	}
	if end != n {
		return errRowBad
	}
	return nil
}

// readUvarints reads len(to) uvarints from br into to, decoding them from
// the bytes br buffers. It returns io.EOF when br holds no byte,
// io.ErrUnexpectedEOF when it ends within them, and what reading failed
// with otherwise.
func readUvarints(br *bufio.Reader, to []uint64) error {
	b, err := br.Peek(len(to) * binary.MaxVarintLen64)
	if err == io.EOF || err == bufio.ErrBufferFull {
		err = nil // the bytes there are hold what is needed, or say it ends short
	}
	if len(b) == 0 {
		if err == nil {
			err = io.EOF
		}
		return err
	}
	at := 0
	for i := range to {
		if at < len(b) && b[at] < 0x80 { // a length below 128, as most are
			to[i] = uint64(b[at])
			at++
			continue
		}
		v, m := binary.Uvarint(b[at:])
		switch {
		case m == 0 && err != nil:
			return err
		case m == 0:
			return io.ErrUnexpectedEOF
		case m < 0:
			return errVarint
		}
		to[i], at = v, at+m
	}
	_, err = br.Discard(at)
	return err
}
