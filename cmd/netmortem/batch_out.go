package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// errLocked is returned when another process holds the lock of a batch
// output file.
var errLocked = errors.New("locked by another netmortem batch writing it (wait for it to end, or choose another --out)")

// openBatchOut opens a batch's --out file for appending and takes its
// advisory lock (flock, on the systems that have it), so that two batches
// given the same file cannot interleave their lines: the second one fails
// at once with errLocked. Without resume the file is emptied, after the
// lock is taken; with it, a last line cut short by a kill is dropped and
// done holds the bundles already finished.
func openBatchOut(path string, resume bool) (f *os.File, done map[string]bool, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			f = nil
		}
	}()
	if err := lockFile(f); err != nil {
		if errors.Is(err, errLocked) {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, nil, fmt.Errorf("%s: lock: %w", path, err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		// A pipe or a device (/dev/full, /dev/stdout) cannot be
		// truncated nor read back: it is written as it is.
		return f, map[string]bool{}, nil
	}
	if !resume {
		if err := f.Truncate(0); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		return f, map[string]bool{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	// A line without its newline was cut by a kill, even when it happens
	// to be whole JSON: drop it before reading what is done.
	if len(b) > 0 && b[len(b)-1] != '\n' {
		i := bytes.LastIndexByte(b, '\n')
		if err := f.Truncate(int64(i + 1)); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		b = b[:i+1]
	}
	return f, readDone(bytes.NewReader(b)), nil
}

// readDone returns the bundles a JSON Lines output holds as finished. A
// bundle recorded as canceled (by a batch interrupted while reading it) is
// not finished: --resume analyzes it again.
func readDone(r io.Reader) map[string]bool {
	done := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var res struct {
			Bundle string `json:"bundle"`
			Status string `json:"status"`
		}
		if json.Unmarshal(sc.Bytes(), &res) == nil && res.Bundle != "" && res.Status != statusCanceled {
			done[res.Bundle] = true
		}
	}
	return done
}

// lineWriter writes the batch's JSON lines, each flushed whole, and keeps
// the first write error: after it nothing more is written.
type lineWriter struct {
	bw  *bufio.Writer
	err error
}

func newLineWriter(w io.Writer) *lineWriter { return &lineWriter{bw: bufio.NewWriter(w)} }

func (l *lineWriter) writeLine(line []byte) error {
	if l.err != nil {
		return l.err
	}
	l.bw.Write(line)
	l.bw.WriteByte('\n')
	l.err = l.bw.Flush()
	return l.err
}
