package track

import (
	"slices"

	"github.com/netmortem/netmortem/model"
)

// Handing attempts on (Options.EachAttempt). Streams are finalized out of
// their creation order (a closed stream before an older idle one, the
// open streams at the end before the closed ones), while attempts are
// listed in it. The Tracker keeps, in creation order, every stream created
// and not yet handed on (the shards report the streams they create,
// stream.seq, a window at a time); a finalized stream's attempt is handed
// on at once when its stream is the oldest of them, and waits in a pool
// otherwise, until the older ones are finalized. What waits is bounded by
// the streams live at once, not by the capture: an attempt waits only for
// streams created before it and still live.

// pending is a stream created and not yet handed on.
type pending struct {
	seq  int   // stream.seq
	slot int32 // notFinal, passed (folded: no attempt), or the index in handOn.pool of its waiting stream
}

const (
	notFinal int32 = -1 // the stream is live
	passed   int32 = -2 // finalized without an attempt
)

// handOn is the reorder buffer of a Tracker that hands attempts on. A
// finalized stream that waits is kept as parking keeps a stream (park.go),
// in about 130 bytes rather than the 700 or so of its attempt, which is
// built when its turn comes.
type handOn struct {
	each   func(model.Attempt)
	rows   func(*model.Row) // handed the rows instead, when set (Options.EachRow)
	row    model.Row        // the row handed on
	a      model.Attempt    // the attempt built now for a row that holds it
	order  []pending        // from head, in creation order
	region hugeRegion       // order's memory
	head   int
	pool   []waiting
	free   []int32   // indices of pool free for reuse
	store  parkStore // the waiting streams
	s      stream    // a waiting stream brought back
}

// waiting is a finalized stream whose attempt waits for older ones: its
// record in handOn.store, its streamExtra, and the node and file the
// Tracker named when it was finalized.
type waiting struct {
	id         uint32
	x          *streamExtra
	node, file string
}

// note adds the streams created as seqs, in creation order, after those
// noted before.
func (h *handOn) note(seqs ...int) {
	if n := len(h.order) + len(seqs); n > cap(h.order) {
		// Doubled into memory of its own, and the old given back at
		// once: on a capture whose streams all stay live to its end, the
		// buffer holds every stream, and the copies a slice leaves behind
		// as it grows would stay in memory until the next collection.
		order, r := makeLarge[pending](max(4096, 2*n))
		order = order[:copy(order, h.order)]
		h.region.release()
		h.order, h.region = order, r
	}
	for _, s := range seqs {
		h.order = append(h.order, pending{seq: s, slot: notFinal})
	}
}

// noteMerged adds the streams each shard created in a window, each list
// in creation order, merged into one order.
func (h *handOn) noteMerged(lists [][]int) {
	var at [maxShards]int
	for {
		from, low := -1, 0
		for i, l := range lists {
			if at[i] < len(l) && (from < 0 || l[at[i]] < low) {
				from, low = i, l[at[i]]
			}
		}
		if from < 0 {
			return
		}
		h.note(low)
		at[from]++
	}
}

// handOn hands on the attempt of e, a stream finalized (its attempt not
// folded) created as seq, or keeps e until the streams created before it
// are finalized. built is e's attempt when it is built already
// (attemptOf).
func (t *Tracker) handOn(e ended, seq int, built *model.Attempt, row *model.Row) {
	h := t.hand
	i, ok := h.find(seq)
	switch {
	case !ok:
		// Not noted: handed on as it comes rather than lost.
		t.giveEnd(e, built, row)
		return
	case i > h.head:
		var slot int32
		if n := len(h.free); n > 0 {
			slot, h.free = h.free[n-1], h.free[:n-1]
		} else {
			slot = int32(len(h.pool))
			h.pool = append(growDouble(h.pool, 1), waiting{})
		}
		h.pool[slot] = waiting{id: h.store.park(e.stream), x: e.x, node: t.node, file: t.file}
		h.order[i].slot = slot
		return
	}
	t.giveEnd(e, built, row)
	t.handOnNext()
}

// giveEnd hands on the attempt of the stream finalized as e (or its row,
// Options.EachRow): row or built, when e's endFeed built it, or one built
// now.
func (t *Tracker) giveEnd(e ended, built *model.Attempt, row *model.Row) {
	switch {
	case row != nil:
		t.hand.rows(row)
	case built != nil:
		t.hand.give(built)
	default:
		t.giveNew(e, t.node, t.file)
	}
}

// giveNew hands on the attempt (or row) of the stream finalized as e,
// built now, with the node and file the Tracker named when it was
// finalized.
func (t *Tracker) giveNew(e ended, node, file string) {
	h := t.hand
	if h.rows == nil {
		h.each(t.attemptAt(e, node, file))
		return
	}
	t.builderAt(node, file).rowOf(&h.row, e, func() *model.Attempt {
		h.a = model.Attempt{}
		return &h.a
	})
	h.rows(&h.row)
}

// give hands on a, an attempt built: as it is, or as the row that holds
// it (Options.EachRow).
func (h *handOn) give(a *model.Attempt) {
	if h.rows != nil {
		h.row = model.Row{Attempt: a}
		h.rows(&h.row)
		return
	}
	h.each(*a)
}

// passOn tells the reorder buffer, when attempts are handed on, that the
// stream created as seq was folded: no attempt of it is to wait for.
func (t *Tracker) passOn(seq int) {
	h := t.hand
	if h == nil {
		return
	}
	if i, ok := h.find(seq); !ok {
		return
	} else if i > h.head {
		h.order[i].slot = passed
		return
	}
	t.handOnNext()
}

// handOnNext moves past the oldest stream, just handed on, and hands on
// the attempts of the finalized streams that follow it.
func (t *Tracker) handOnNext() {
	h := t.hand
	h.head++
	for h.head < len(h.order) {
		p := &h.order[h.head]
		if p.slot == notFinal {
			break
		}
		if p.slot >= 0 {
			t.handOnWaiting(p.slot)
		}
		h.head++
	}
	if h.head == len(h.order) {
		h.order, h.head = h.order[:0], 0
	} else if h.head >= 4096 && 2*h.head >= len(h.order) {
		n := copy(h.order, h.order[h.head:])
		h.order, h.head = h.order[:n], 0
	}
}

// handOnWaiting hands on the attempt of the stream waiting in slot.
func (t *Tracker) handOnWaiting(slot int32) {
	h := t.hand
	w := &h.pool[slot]
	h.takeWaiting(w, &h.s)
	t.giveNew(ended{&h.s, w.x}, w.node, w.file)
	*w = waiting{}
	h.free = append(h.free, slot)
}

// takeWaiting brings the stream waiting as w back into s, and lets go of
// its record.
func (h *handOn) takeWaiting(w *waiting, s *stream) {
	h.store.load(w.id, s)
	h.store.kill(w.id)
	h.store.first() // lets go of the records no longer needed
}

// finished returns the streams not yet handed on that are finalized, in
// creation order, and forgets the others, which are live: the Tracker
// finalizes them in creation order (finishStreams) and hands on theirs
// and these in turn (startWaitFeed, handOnBefore).
func (h *handOn) finished() []pending {
	n := 0
	for _, p := range h.order[h.head:] {
		if p.slot != notFinal {
			n++
		}
	}
	out := make([]pending, 0, n)
	for _, p := range h.order[h.head:] {
		if p.slot != notFinal {
			out = append(out, p)
		}
	}
	h.region.release()
	h.order, h.region, h.head = nil, hugeRegion{}, 0
	return out
}

// find returns the index in h.order of the stream created as seq.
func (h *handOn) find(seq int) (int, bool) {
	if h.head < len(h.order) && h.order[h.head].seq == seq {
		return h.head, true // the oldest: at the end, every stream in turn
	}
	i, ok := slices.BinarySearchFunc(h.order[h.head:], seq, func(p pending, seq int) int { return p.seq - seq })
	return h.head + i, ok
}

// release lets go of what h holds; nothing waits any longer.
func (h *handOn) release() {
	h.store.release()
	h.region.release()
	h.order, h.region = nil, hugeRegion{}
}

// growDouble returns l with room for n more values, its capacity at least
// doubled when it grows: append grows a large slice by a quarter, which
// allocates about five times its final size on the way to it, all of it
// garbage but the last.
func growDouble[T any](l []T, n int) []T {
	if len(l)+n <= cap(l) {
		return l
	}
	return slices.Grow(l, max(n, cap(l)))
}
