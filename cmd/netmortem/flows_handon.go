package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/model"
)

// handedOn writes the CSV form of flows as the captures' attempts come
// (parse.Options.EachAttempt), holding none of them but a few batches:
// the attempts are formatted and written by a goroutine of their own, in
// batches, while the capture's reader builds the next ones. After close,
// an attempt that a read left behind after its deadline
// (operand.StopGrace) hands on is not written.
type handedOn struct {
	mu     sync.Mutex
	w      *flows.CSVWriter
	cur    []model.Attempt
	full   chan []model.Attempt // batches to write, in order
	free   chan []model.Attempt // batches written
	done   chan struct{}        // closed once the writer has written them all
	closed bool
}

// handedOnBatch is how many attempts go to the writing goroutine at once.
const handedOnBatch = 256

// newHandedOn returns a handedOn writing through w, its goroutine started.
func newHandedOn(w *flows.CSVWriter) *handedOn {
	h := &handedOn{w: w, full: make(chan []model.Attempt, 4), free: make(chan []model.Attempt, 6), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for b := range h.full {
			for i := range b {
				h.w.Write(&b[i])
			}
			clear(b) // the attempts' segments
			select {
			case h.free <- b[:0]:
			default:
			}
		}
	}()
	return h
}

// write queues a for writing, unless h is closed.
func (h *handedOn) write(a model.Attempt) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	if h.cur == nil {
		select {
		case h.cur = <-h.free:
		default:
			h.cur = make([]model.Attempt, 0, handedOnBatch)
		}
	}
	h.cur = append(h.cur, a)
	if len(h.cur) == handedOnBatch {
		h.full <- h.cur
		h.cur = nil
	}
}

// close ends the CSV form once snap is read, saying first, on stderr, how
// many packet times are written with their year clamped, as for the
// table built whole; it returns the first error writing met.
func (h *handedOn) close(stderr io.Writer, snap *model.Snapshot) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if len(h.cur) > 0 {
		h.full <- h.cur
	}
	close(h.full)
	<-h.done
	n, pos := (&flows.Table{Captures: snap.Captures}).OutOfRange()
	m, at := h.w.OutOfRange()
	if n == 0 {
		pos = at
	}
	warnOutOfRange(stderr, n+m, pos)
	return h.w.Close()
}

// handOnFlows reports whether flows can write its CSV form as the attempts
// come, for the same bytes as from the table built whole: when every
// operand is a regular file (no directory, archive walk by pattern or
// standard input) and no two of them are files of one rotated series,
// which are read again as one timeline once all are read; when --since
// and --until are absolute times, not offsets from the first packet; and
// without --anonymize, whose tokens are drawn from the whole snapshot.
func handOnFlows(paths []string, since, until string, ao anonymizeOptions) bool {
	if ao.enabled() || strings.HasPrefix(since, "+") || strings.HasPrefix(until, "+") || len(paths) == 0 {
		return false
	}
	stems := map[string]bool{}
	for _, p := range paths {
		if p == operand.Stdin {
			return false
		}
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			return false
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return false
		}
		stem := digitRun.ReplaceAllString(filepath.Base(abs), "#")
		stem = filepath.Join(filepath.Dir(abs), strings.TrimRight(stem, "#"))
		if stems[stem] {
			return false
		}
		stems[stem] = true
	}
	return true
}

// digitRun is a run of digits in a file name: files whose names differ
// only in them may be one rotated series (tcpdump -C, -G).
var digitRun = regexp.MustCompile(`[0-9]+`)
