package main

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/model"
)

// handedOn writes the JSON and table forms of flows as the captures'
// attempts come (parse.Options.EachAttempt), holding none of them but a
// few batches: the attempts are taken by writers of their own, one
// goroutine each, each given every batch in order, while the capture's
// reader builds the next ones. The attempts are lent
// (parse.Options.LendAttempts): a batch copies what each points to into
// memory of its own, used again by the batches that follow once every
// writer is done with it, so that the hundreds of thousands of attempts of
// a large capture make no garbage. After close, an attempt that a read
// left behind after its deadline (operand.StopGrace) hands on is not
// written.
type handedOn struct {
	mu     sync.Mutex
	cur    *attemptBatch
	full   [][]chan *attemptBatch // batches to write, in order: per writer, a channel per goroutine
	sent   int                    // the batches sent
	free   chan *attemptBatch     // batches written
	done   sync.WaitGroup         // the writers
	closed bool
}

// attemptWriter takes the attempts handed on, one at a time.
type attemptWriter func(a *model.Attempt)

// rowWriter takes the attempts' rows handed on (parse.Options.EachRow),
// one at a time.
type rowWriter func(r *model.Row)

// handedOnBatch is how many attempts go to the writers at once.
const handedOnBatch = 256

// attemptBatch is a batch of attempts, or of their rows, on their way to
// the writers, and the segments and data sizes the attempts point to.
type attemptBatch struct {
	a     []model.Attempt
	r     []model.Row // the rows, when rows are handed on; a holds the attempts they hold
	segs  []model.Seg
	sizes []model.DataSizes
	left  atomic.Int32 // the writers still to take the batch
	seq   int          // the batch's place among those sent, from 0
}

// len returns how many attempts, or rows, b holds.
func (b *attemptBatch) len() int { return max(len(b.a), len(b.r)) }

// add appends a copy of a, what it points to included (Attempt.CloneInto),
// in b's memory, and returns it.
func (b *attemptBatch) add(a *model.Attempt) *model.Attempt {
	// CloneInto writes the whole attempt: it is not zeroed first.
	c := &keep(&b.a, 1)[0]
	a.CloneInto(c,
		func(n int) []model.Seg { return keep(&b.segs, n) },
		func(n int) []model.DataSizes { return keep(&b.sizes, n) })
	return c
}

// addRow appends a copy of r in b's memory, and of the attempt it holds
// (add).
func (b *attemptBatch) addRow(r *model.Row) {
	c := &keep(&b.r, 1)[0]
	if r.Attempt == nil {
		*c = *r
		return
	}
	*c = model.Row{Attempt: b.add(r.Attempt)}
}

// keep returns n values more of *l, which it extends; the values an
// earlier call returned stay where they were when *l grows.
func keep[T any](l *[]T, n int) []T {
	k := len(*l)
	*l = slices.Grow(*l, n)[:k+n]
	return (*l)[k : k+n : k+n]
}

// reset empties b for the next batch, keeping its memory. What it held
// is not cleared, only written over (add): a batch's memory is written
// once an attempt rather than twice, and what it keeps alive until then
// (the strings of 256 attempts) is little.
func (b *attemptBatch) reset() {
	b.a, b.r, b.segs, b.sizes = b.a[:0], b.r[:0], b.segs[:0], b.sizes[:0]
}

// newHandedOn returns a handedOn writing through ws, their goroutines
// started.
func newHandedOn(ws ...attemptWriter) *handedOn {
	return startHandedOn(batchWriters(ws, func(b *attemptBatch) []model.Attempt { return b.a }))
}

// newRowsHandedOn returns a handedOn writing the rows it is handed
// (writeRow) through ws, and through the writers of split, their
// goroutines started.
func newRowsHandedOn(split []splitWriter, ws ...rowWriter) *handedOn {
	return startHandedOn(append(batchWriters(ws, func(b *attemptBatch) []model.Row { return b.r }), split...))
}

// splitWriter writes the batches handed on: each, in order, on one
// goroutine (ways 1); or, on ways goroutines, each the batches whose
// places (attemptBatch.seq) are its own (way) modulo ways.
type splitWriter struct {
	ways  int
	write func(way int, b *attemptBatch)
}

// batchWriters returns, for each of ws, a writer of its own goroutine
// that writes through it the values of a batch that items gives, in
// order.
func batchWriters[T any, W ~func(*T)](ws []W, items func(b *attemptBatch) []T) []splitWriter {
	each := make([]splitWriter, len(ws))
	for i, w := range ws {
		each[i] = splitWriter{ways: 1, write: func(_ int, b *attemptBatch) {
			l := items(b)
			for j := range l {
				w(&l[j])
			}
		}}
	}
	return each
}

// startHandedOn returns a handedOn writing each batch through the
// writers of each, their goroutines started.
func startHandedOn(each []splitWriter) *handedOn {
	// Room on free for every batch a writer can hold, queued or being
	// written (every writer takes every batch, so those of the writer
	// that holds most), and the one being filled: a batch with no room
	// is garbage, and the next made anew. A writer split several ways
	// queues fewer on each goroutine, for as many in all.
	queued := func(w splitWriter) int { return max(1, 4/w.ways) }
	room := 0
	for _, w := range each {
		room = max(room, w.ways*(queued(w)+1))
	}
	room++
	h := &handedOn{free: make(chan *attemptBatch, room)}
	for _, w := range each {
		// Each writer has its own goroutines and channels: what one
		// goroutine writes is never in a cache line another writes
		// for every attempt.
		chans := make([]chan *attemptBatch, w.ways)
		for way := range chans {
			full := make(chan *attemptBatch, queued(w))
			chans[way] = full
			h.done.Add(1)
			go func() {
				defer h.done.Done()
				for b := range full {
					w.write(way, b)
					if b.left.Add(-1) > 0 {
						continue
					}
					b.reset()
					select {
					case h.free <- b:
					default:
					}
				}
			}()
		}
		h.full = append(h.full, chans)
	}
	return h
}

// send hands b to every writer.
func (h *handedOn) send(b *attemptBatch) {
	b.seq = h.sent
	h.sent++
	b.left.Store(int32(len(h.full)))
	for _, chans := range h.full {
		chans[b.seq%len(chans)] <- b
	}
}

// write queues a copy of a for writing, unless h is closed.
func (h *handedOn) write(a model.Attempt) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.batch()
	h.cur.add(&a)
	h.sendFull()
}

// writeRow queues a copy of r for writing, unless h is closed.
func (h *handedOn) writeRow(r *model.Row) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.batch()
	h.cur.addRow(r)
	h.sendFull()
}

// batch makes sure h has a batch to fill.
func (h *handedOn) batch() {
	if h.cur == nil {
		select {
		case h.cur = <-h.free:
		default:
			h.cur = &attemptBatch{a: make([]model.Attempt, 0, handedOnBatch)}
		}
	}
}

// sendFull sends h's batch once it is full.
func (h *handedOn) sendFull() {
	if h.cur.len() == handedOnBatch {
		h.send(h.cur)
		h.cur = nil
	}
}

// close waits for the attempts handed on to be written; none is after.
func (h *handedOn) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	if h.cur != nil && h.cur.len() > 0 {
		h.send(h.cur)
	}
	for _, chans := range h.full {
		for _, c := range chans {
			close(c)
		}
	}
	h.done.Wait()
}

// direct hands the attempts' rows (parse.Options.EachRow) to a writer on
// the goroutine that reads them, lent, as they come: the CSV form, whose
// rows are formatted from the row itself, with nothing copied, and which
// the tracker works out without building the attempts. After close, a row
// that a read left behind after its deadline (operand.StopGrace) hands on
// is not written.
type direct struct {
	mu     sync.Mutex
	w      *flows.CSVWriter
	closed bool
}

// write writes r, unless d is closed.
func (d *direct) write(r *model.Row) {
	d.mu.Lock()
	if !d.closed {
		d.w.WriteRow(r)
	}
	d.mu.Unlock()
}

// close makes the attempts handed on from now on go unwritten.
func (d *direct) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
}
