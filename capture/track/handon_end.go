package track

import "github.com/netmortem/netmortem/model"

// waitFeed builds, at the end of a capture whose attempts are handed on,
// the attempts of the finalized streams that wait in the reorder buffer
// for older ones (handOn.finished), in their creation order, on a
// goroutine of its own, in batches, while the Tracker hands on the live
// streams' attempts, which the shards' end feeds build (endFeed). From
// its start, the goroutine alone reads the buffer's pool and store.
type waitFeed struct {
	out  chan *waitBatch // the batches built, in order
	free chan *waitBatch // those the Tracker is done with
	cur  *waitBatch
	at   int
}

// waitBatch is a run of attempts a waitFeed built, the creation orders of
// their streams, and what the attempts point to.
type waitBatch struct {
	seq []int
	a   []model.Attempt
	r   []model.Row // the rows, when they are handed on (Options.EachRow)
	batchMemory
}

// waitBatchLen is how many attempts a waitBatch holds.
const waitBatchLen = 256

// startWaitFeed starts building the attempts of rest, the finalized
// streams handOn.finished returned, with the Tracker's files and clock;
// the attempts are lent when the Tracker's are.
func (t *Tracker) startWaitFeed(rest []pending) *waitFeed {
	f := &waitFeed{out: make(chan *waitBatch, 2), free: make(chan *waitBatch, 4)}
	h, b, lend, rows := t.hand, t.endBuilder(), t.lend, t.hand.rows != nil
	go func() {
		defer close(f.out)
		var wb *waitBatch
		var s stream
		for _, p := range rest {
			if p.slot < 0 {
				continue
			}
			if wb == nil {
				wb = f.batch(lend, rows)
			}
			w := &h.pool[p.slot]
			h.takeWaiting(w, &s)
			b.node, b.file, b.segs, b.sizes = w.node, w.file, &wb.segs, &wb.sizes
			e := ended{&s, w.x}
			if rows {
				wb.r = wb.r[:len(wb.r)+1] // written whole by rowOf
				b.rowOf(&wb.r[len(wb.r)-1], e, func() *model.Attempt { return appendZero(&wb.a) })
			} else {
				b.attemptInto(appendZero(&wb.a), e)
			}
			wb.seq = append(wb.seq, p.seq)
			*w = waiting{}
			if len(wb.seq) == waitBatchLen {
				f.out <- wb
				wb = nil
			}
		}
		if wb != nil {
			f.out <- wb
		}
	}()
	return f
}

// batch returns an empty batch, one the Tracker is done with if there is
// one; with room for rows when rows is set.
func (f *waitFeed) batch(lend, rows bool) *waitBatch {
	select {
	case b := <-f.free:
		b.again(lend)
		b.seq, b.a, b.r = b.seq[:0], b.a[:0], b.r[:0]
		return b
	default:
		b := &waitBatch{seq: make([]int, 0, waitBatchLen), a: make([]model.Attempt, 0, waitBatchLen)}
		if rows {
			b.r = make([]model.Row, 0, waitBatchLen)
		}
		return b
	}
}

// handOnBefore hands on, in their order, the attempts f built for
// streams created before the stream created as seq.
func (t *Tracker) handOnBefore(f *waitFeed, seq int) {
	for {
		if f.cur != nil && f.at == len(f.cur.seq) {
			// Not cleared, as endFeed.peek does not clear its batches:
			// the feed writes over the attempts.
			offer(f.free, f.cur)
			f.cur = nil
		}
		if f.cur == nil {
			b, ok := <-f.out
			if !ok {
				return
			}
			f.cur, f.at = b, 0
		}
		if f.cur.seq[f.at] >= seq {
			return
		}
		if t.hand.rows != nil {
			t.hand.rows(&f.cur.r[f.at])
		} else {
			t.hand.each(f.cur.a[f.at])
		}
		f.at++
	}
}
