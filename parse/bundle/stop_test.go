package bundle

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file read to its end before the context ends is not stopped, though
// a bufio.Reader's Peek took the io.EOF and its reader reads again: a
// small file's head is the whole of it. One whose end was not reached
// is stopped.
func TestStopReaderAfterTheEnd(t *testing.T) {
	for _, c := range []struct {
		head    int
		stopped bool
	}{{64, false}, {4, true}} {
		ctx, cancel := context.WithCancel(t.Context())
		stop := &stopReader{ctx: ctx, r: strings.NewReader("net.ipv4.ip_forward = 1\n")}
		br := bufio.NewReaderSize(stop, 64)
		br.Peek(c.head)
		cancel()
		b, err := io.ReadAll(br)
		if stop.stopped != c.stopped || c.stopped != errors.Is(err, context.Canceled) {
			t.Errorf("head %d, then the context's end: read %q, %v, stopped %v; want stopped %v", c.head, b, err, stop.stopped, c.stopped)
		}
	}
}

// A regular file read to its last byte, its end not yet seen, is read
// whole when the context ends: the byte read after it tells. One with a
// byte left is stopped, and stays so.
func TestStopReaderProbe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sysctl.txt")
	if err := os.WriteFile(path, []byte("net.ipv4.ip_forward = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, left := range []int{0, 1} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		stop := &stopReader{ctx: ctx, r: f}
		p := make([]byte, 24-left)
		if n, err := io.ReadFull(stop, p); n != len(p) || err != nil {
			t.Fatal(n, err)
		}
		cancel()
		n, err := stop.Read(make([]byte, 64))
		if stop.stopped != (left > 0) || n != 0 || (left > 0) != errors.Is(err, context.Canceled) || (left == 0) != (err == io.EOF) {
			t.Errorf("%d bytes left when the context ended: read %d, %v, stopped %v", left, n, err, stop.stopped)
		}
		// Read again, it says the same: a stopped read does not end
		// at the file's end, the byte that told it read.
		if n2, err2 := stop.Read(make([]byte, 64)); n2 != 0 || err2 != err {
			t.Errorf("%d bytes left, read again: %d, %v; want %v again", left, n2, err2, err)
		}
		f.Close()
	}
	// A file that is not a regular one (a pipe) is not read once more:
	// it may block.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	stop := &stopReader{ctx: ctx, r: r}
	if _, err := stop.Read(make([]byte, 64)); !errors.Is(err, context.Canceled) || !stop.stopped {
		t.Errorf("a pipe, the context ended: %v, stopped %v; want it stopped", err, stop.stopped)
	}
}
