package flows

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/netmortem/netmortem/model"
)

// Spool keeps the attempts of one read of the captures in a file, for
// writing them once what comes before them is known: the JSON form and
// the tables, whose summary, endpoints and column widths come first, from
// one read rather than two. During the read a Builder (and TableWidths,
// for a table) and the Spool take each attempt as it comes; then Replay
// writes the attempts kept, in the same order, through JSONWriter,
// TableWriter or FittedWriter (Each hands them to a function). Memory stays that of the read: an attempt takes some
// 85 bytes of the file (on the bench capture; its strings, mostly the same
// from one attempt to the next, are written once), and 512 KiB are
// buffered.
//
// A Spool keeps an attempt exactly, as Each gives it back: every field,
// nil lists apart from empty ones. It keeps times in UTC only, as the
// capture readers give them: Add refuses an attempt with a time in
// another location, and the Spool then takes no more (Err says why), as
// after an error writing the file. A Spool is used by one goroutine at a
// time.
type Spool struct {
	f    io.ReadWriteSeeker
	w    *bufio.Writer
	rec  []byte
	hdr  [binary.MaxVarintLen64]byte // a record's length
	enc  spoolEncoder
	n    int
	size int64 // the bytes written
	err  error
	read bool // Each has run
	// readErr is the error reading the attempts back met, set before the
	// reading goroutine ends.
	readErr error
}

// NewSpool returns a Spool keeping its attempts in f, which must be
// empty. The caller makes the file (os.CreateTemp) and removes it.
func NewSpool(f io.ReadWriteSeeker) *Spool {
	return &Spool{f: f, w: bufio.NewWriterSize(f, 256<<10), enc: spoolEncoder{idx: map[string]uint32{}}}
}

// Add keeps a copy of a, and reports whether it did: not once the Spool
// has failed, nor after Each.
func (s *Spool) Add(a *model.Attempt) bool {
	if s.err != nil || s.read {
		return false
	}
	rec, err := s.enc.attempt(s.rec[:0], a)
	if err != nil {
		s.err = fmt.Errorf("spool: attempt %d: %w", s.n+1, err)
		return false
	}
	s.rec = rec
	hdr := binary.AppendUvarint(s.hdr[:0], uint64(len(rec)))
	if _, err := s.w.Write(hdr); err != nil {
		s.err = fmt.Errorf("spool: %w", err)
		return false
	}
	if _, err := s.w.Write(rec); err != nil {
		s.err = fmt.Errorf("spool: %w", err)
		return false
	}
	s.n++
	s.size += int64(len(hdr) + len(rec))
	return true
}

// Len returns how many attempts s keeps.
func (s *Spool) Len() int { return s.n }

// Err returns why s failed, nil when it has not.
func (s *Spool) Err() error { return s.err }

// errSpoolBad is a record that ends before its last field, or holds a
// value out of its field's range.
var errSpoolBad = errors.New("record cut short, or a value out of range")

// Flush writes what s buffers to its file, so that Err reports an error
// writing it before Each, which flushes anyway.
func (s *Spool) Flush() error {
	if s.err == nil && !s.read {
		if err := s.w.Flush(); err != nil {
			s.err = fmt.Errorf("spool: %w", err)
		}
	}
	return s.err
}

// Each calls fn with each attempt s keeps, in the order Add took them,
// until ctx ends, and returns the first error reading the file met, why
// s failed before, or ctx's error when it ended first. The attempt is
// lent: it and what it points to are valid only until fn returns. A
// goroutine of Each's own reads the attempts ahead, a batch at a time,
// while fn takes them on the calling goroutine. Each runs once: s takes
// no attempt after it.
func (s *Spool) Each(ctx context.Context, fn func(a *model.Attempt)) error {
	if err := s.Flush(); err != nil {
		return err
	}
	full, free, stop, err := s.start()
	if err != nil {
		return err
	}
	for b := range full {
		if ctx.Err() != nil {
			close(stop)
			for range full { // the reading goroutine's last batch
			}
			return ctx.Err()
		}
		for i := range b.a {
			fn(&b.a[i])
		}
		b.reset()
		free <- b
	}
	return s.readErr
}

// start starts reading the attempts back, on a goroutine of its own that
// sends them on full a batch at a time, in order, taking the batches
// given back on free for the next ones, until it is done or stop is
// closed; then it closes full, s.readErr set to the error it met.
func (s *Spool) start() (full, free chan *spoolBatch, stop chan struct{}, err error) {
	if s.read {
		return nil, nil, nil, errors.New("spool: read already")
	}
	s.read = true
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, nil, fmt.Errorf("spool: %w", err)
	}
	full, free, stop = make(chan *spoolBatch, 2), make(chan *spoolBatch, 4), make(chan struct{})
	go func() {
		defer close(full)
		s.readErr = s.decode(full, free, stop)
	}()
	return full, free, stop, nil
}

// spoolBatchLen is how many attempts Each reads ahead at once.
const spoolBatchLen = 256

// decode reads the attempts of s into batches taken from free (or made)
// and sends them on full, in order, until stop is closed.
func (s *Spool) decode(full, free chan *spoolBatch, stop chan struct{}) error {
	r := bufio.NewReaderSize(s.f, 256<<10)
	var d spoolDecoder
	send := func() bool {
		select {
		case full <- d.b:
			d.b = nil
			return true
		case <-stop:
			return false
		}
	}
	left := s.size // the bytes not yet read, which bound a record's length
	for i := range s.n {
		if d.b == nil {
			select {
			case d.b = <-free:
			default:
				d.b = &spoolBatch{a: make([]model.Attempt, 0, spoolBatchLen)}
			}
		}
		k := len(d.b.a)
		n, err := binary.ReadUvarint(r)
		switch {
		case err == io.EOF:
			err = io.ErrUnexpectedEOF
		case err == nil && n > uint64(left):
			err = errors.New("record longer than the file")
		case err == nil:
			left -= int64(n) + int64(uvarintLen(n))
			d.rec = grow(d.rec, int(n))
			_, err = io.ReadFull(r, d.rec)
		}
		if err == nil {
			err = d.attempt()
		}
		if err != nil {
			d.b.a = d.b.a[:k] // the attempts before the one that failed
			send()
			return fmt.Errorf("spool: attempt %d: %w", i+1, err)
		}
		if len(d.b.a) == spoolBatchLen && !send() {
			return nil
		}
	}
	if d.b != nil && len(d.b.a) > 0 {
		send()
	}
	return nil
}

// uvarintLen returns the length of v as a uvarint.
func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return len(binary.AppendUvarint(b[:0], v))
}

// grow returns b, n bytes long, reallocated when shorter.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
