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
	slot int32 // notFinal, passed (folded: no attempt), or the index in handOn.pool of its attempt
}

const (
	notFinal int32 = -1 // the stream is live
	passed   int32 = -2 // finalized without an attempt
)

// handOn is the reorder buffer of a Tracker that hands attempts on.
type handOn struct {
	each  func(model.Attempt)
	order []pending // from head, in creation order
	head  int
	pool  []model.Attempt
	free  []int32 // indices of pool free for reuse
}

// note adds the streams created as seqs, in creation order, after those
// noted before.
func (h *handOn) note(seqs ...int) {
	h.order = append(h.order, make([]pending, len(seqs))...)
	o := h.order[len(h.order)-len(seqs):]
	for i, s := range seqs {
		o[i] = pending{seq: s, slot: notFinal}
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

// done hands on the attempt a of the stream created as seq (nil when the
// stream was folded), or keeps it until the streams created before it are
// finalized.
func (h *handOn) done(seq int, a *model.Attempt) {
	live := h.order[h.head:]
	i, ok := slices.BinarySearchFunc(live, seq, func(p pending, seq int) int { return p.seq - seq })
	if !ok {
		// Not noted: handed on as it comes rather than lost.
		if a != nil {
			h.each(*a)
		}
		return
	}
	if i > 0 {
		switch {
		case a == nil:
			live[i].slot = passed
		case len(h.free) > 0:
			n := len(h.free) - 1
			live[i].slot = h.free[n]
			h.free = h.free[:n]
			h.pool[live[i].slot] = *a
		default:
			live[i].slot = int32(len(h.pool))
			h.pool = append(h.pool, *a)
		}
		return
	}
	if a != nil {
		h.each(*a)
	}
	h.head++
	for h.head < len(h.order) {
		p := &h.order[h.head]
		if p.slot == notFinal {
			break
		}
		if p.slot >= 0 {
			h.each(h.pool[p.slot])
			h.pool[p.slot] = model.Attempt{}
			h.free = append(h.free, p.slot)
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

// waiting returns how many attempts wait in the pool.
func (h *handOn) waiting() int { return len(h.pool) - len(h.free) }
