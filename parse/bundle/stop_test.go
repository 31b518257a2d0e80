package bundle

import (
	"bufio"
	"context"
	"errors"
	"io"
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
