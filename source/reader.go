//go:build fleet

package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"gocloud.dev/blob"
)

// Reader reads an object at any offset (io.ReaderAt) through range
// requests, never the whole object at once: it keeps one range request
// open from the offset of a read to the object's end, and reads it in
// chunks of ChunkSize. A read that starts in the last chunk read is served
// from it; one that starts where the open request stands, or a little past
// it (up to SkipSize, read and dropped), continues it; any other opens a
// new request at its offset. So a file read from its start to its end,
// and read again from its start (a tar.gz, whose members are walked
// twice), costs two requests, and a zip a few (its directory at the end,
// then its members in order). Reader is safe for concurrent use (reads
// are serialized). Close ends the open request.
type Reader struct {
	ctx   context.Context
	loc   Location
	b     *blob.Bucket
	attrs Attrs

	mu    sync.Mutex
	rc    *blob.Reader // the open range request, nil before the first read
	rcPos int64        // offset of the next byte rc gives
	buf   []byte       // the last chunk read
	off   int64        // offset of buf[0]
	gets  int          // range requests opened
	err   error        // the first request that failed
}

// ChunkSize is what a Reader reads of its open request at once, and
// SkipSize how far past the open request's offset a read may start and
// still continue it (the bytes between are read and dropped).
const (
	ChunkSize = 1 << 20
	SkipSize  = 4 << 20
)

var _ io.ReaderAt = (*Reader)(nil)

// Size is the object's size, from its attributes when it was opened.
func (r *Reader) Size() int64 { return r.attrs.Size }

// Attrs are the object's attributes when it was opened.
func (r *Reader) Attrs() Attrs { return r.attrs }

// Requests is how many range requests (GETs) the Reader has made.
func (r *Reader) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gets
}

// ReadAt reads len(p) bytes at off, or up to the object's end (then with
// io.EOF), as io.ReaderAt does.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if off < 0 {
		return 0, fmt.Errorf("%s: read at negative offset %d", r.attrs.Name, off)
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if pos >= r.attrs.Size {
			return n, io.EOF
		}
		if pos >= r.off && pos < r.off+int64(len(r.buf)) {
			n += copy(p[n:], r.buf[pos-r.off:])
			continue
		}
		if err := r.fill(pos); err != nil {
			return n, err
		}
	}
	return n, nil
}

// fill reads the chunk at pos into buf, continuing the open request or
// opening one.
func (r *Reader) fill(pos int64) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if r.rc != nil && pos >= r.rcPos && pos-r.rcPos <= SkipSize {
		if skip := pos - r.rcPos; skip > 0 {
			m, err := io.CopyN(io.Discard, r.rc, skip)
			r.rcPos += m
			if err != nil {
				r.closeRequest()
			}
		}
	} else {
		r.closeRequest()
	}
	if r.rc == nil {
		rc, err := r.b.NewRangeReader(r.ctx, r.loc.Key, pos, -1, nil)
		r.gets++
		if err != nil {
			return r.fail(cloudErr(r.loc, fmt.Errorf("read at offset %d: %w", pos, err), 0))
		}
		r.rc, r.rcPos = rc, pos
	}
	want := min(int64(ChunkSize), r.attrs.Size-pos)
	if cap(r.buf) < ChunkSize {
		r.buf = make([]byte, ChunkSize)
	}
	r.buf = r.buf[:want]
	m, err := io.ReadFull(r.rc, r.buf)
	r.buf, r.off = r.buf[:m], pos
	r.rcPos += int64(m)
	if err != nil {
		r.closeRequest()
		if m > 0 {
			return nil
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // shorter than its attributes said
		}
		return r.fail(cloudErr(r.loc, fmt.Errorf("read at offset %d: %w", pos, err), 0))
	}
	return nil
}

// fail records err as the Reader's first failure, if it is, and returns
// it.
func (r *Reader) fail(err error) error {
	if r.err == nil {
		r.err = err
	}
	return err
}

// Err is the first request of the Reader that failed, nil if none did.
// What read the object may have reported the failure only as a warning
// (an archive read up to a point): Err tells that the object, not its
// content, was at fault.
func (r *Reader) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *Reader) closeRequest() {
	if r.rc != nil {
		r.rc.Close()
		r.rc = nil
	}
}

// Close ends the open range request, if any.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeRequest()
	r.buf = nil
	return nil
}
