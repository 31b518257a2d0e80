package results

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// ErrLocked is returned by OpenJSONLSink when another process holds the lock
// of the file.
var ErrLocked = errors.New("locked by another netmortem batch writing it (wait for it to end, or choose another --out)")

// JSONL is the JSON Lines sink: one line per bundle, each written whole
// and flushed, in a file (OpenJSONLSink) or a stream (NewJSONL); OpenJSONL
// reads such files as a Store. The first write error is kept: after it
// nothing more is written, and Write and Close return it.
type JSONL struct {
	mu   sync.Mutex
	bw   *bufio.Writer
	f    *os.File // the file OpenJSONLSink opened, closed by Close
	done map[string]bool
	err  error
}

var _ Sink = (*JSONL)(nil)

// NewJSONL is the sink that writes lines to w (standard output). It holds
// no line before the first Write, and Close does not close w.
func NewJSONL(w io.Writer) *JSONL {
	return &JSONL{bw: bufio.NewWriter(w), done: map[string]bool{}}
}

// OpenJSONLSink opens the JSON Lines file at path for appending, created when
// missing, and takes its advisory lock (flock, on the systems that have
// it), so that two batches given the same file cannot interleave their
// lines: the second one fails at once with ErrLocked. Without resume the
// file is emptied, after the lock is taken; with it, a last line cut short
// by a kill is dropped, and Done holds the bundles already finished. A
// named pipe or a device (/dev/stdout, /dev/full) is written as it is,
// neither emptied nor read.
func OpenJSONLSink(path string, resume bool) (j *JSONL, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			j = nil
		}
	}()
	if err := lockFile(f); err != nil {
		if errors.Is(err, ErrLocked) {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, fmt.Errorf("%s: lock: %w", path, err)
	}
	j = &JSONL{bw: bufio.NewWriter(f), f: f, done: map[string]bool{}}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		// A pipe or a device cannot be truncated nor read back.
		return j, nil
	}
	if !resume {
		if err := f.Truncate(0); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return j, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// A line without its newline was cut by a kill, even when it happens
	// to be whole JSON: drop it before reading what is done.
	if len(b) > 0 && b[len(b)-1] != '\n' {
		i := bytes.LastIndexByte(b, '\n')
		if err := f.Truncate(int64(i + 1)); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		b = b[:i+1]
	}
	j.done = ReadDone(bytes.NewReader(b))
	return j, nil
}

// ReadDone returns the bundles a JSON Lines stream holds as finished: those
// with a line whose status is not StatusCanceled (a bundle a batch was
// interrupted in, as earlier versions recorded it). Lines that are not JSON
// are passed over.
func ReadDone(r io.Reader) map[string]bool {
	done := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var res struct {
			Bundle string `json:"bundle"`
			Status string `json:"status"`
		}
		if json.Unmarshal(sc.Bytes(), &res) == nil && res.Bundle != "" && res.Status != StatusCanceled {
			done[res.Bundle] = true
		}
	}
	return done
}

// Done returns the bundles the file held as finished when it was opened
// with resume, and those written since.
func (j *JSONL) Done(context.Context) (map[string]bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	done := make(map[string]bool, len(j.done))
	for b := range j.done {
		done[b] = true
	}
	return done, nil
}

// Write writes l as one JSON line and flushes it.
func (j *JSONL) Write(_ context.Context, l *Line) error {
	line, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", l.Bundle, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	j.bw.Write(line)
	j.bw.WriteByte('\n')
	if j.err = j.bw.Flush(); j.err == nil && l.Status != StatusCanceled {
		j.done[l.Bundle] = true
	}
	return j.err
}

// Close closes the file OpenJSONLSink opened. It returns the first write
// error, else the file's close error (a file system may report a failed
// write only then). It may be called again, and returns the same.
func (j *JSONL) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		if err := j.f.Close(); j.err == nil {
			j.err = err
		}
		j.f = nil
	}
	return j.err
}
