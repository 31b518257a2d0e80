package capture

import (
	"runtime"
	"sync"
)

// A capture is read in three stages. The reading goroutine decodes frames
// and prepares them (Tracker.prepare) into windows of batchSize packets,
// cut at the same packet numbers whatever the number of shards; each shard's
// goroutine folds the window's packets whose 4-tuples hash to it, and,
// where a window ends a sweep interval, retires its streams closed or idle
// long enough; the calling goroutine then settles the window in capture
// order (Tracker.settle, Tracker.settleSwept) while the shards go on with
// the next one. The shards share no stream, and what the Tracker does
// across streams it does in one order, so that the Result is the same for
// any number of shards, one included.

// window is a batch of prepared packets on its way through the stages.
type window struct {
	pkts  []Packet
	own   [][]int32      // per shard, the indices in pkts of its packets
	marks [][]int32      // per shard, the indices of the packets it left something on to settle
	other []int32        // the indices of the ICMP and ARP packets
	sweep bool           // the last packet ends a sweep interval
	now   int64          // the tracker's time after the last packet
	swept [][2][]*stream // per shard, the streams its sweep retired
	// recycled holds streams the Tracker finalized before the window set
	// out: each shard takes its share.
	recycled []*stream
	done     chan struct{} // a token per shard that has folded the window
}

// newWindow returns an empty window for n shards.
func newWindow(n int) *window {
	w := &window{pkts: make([]Packet, 0, batchSize), own: make([][]int32, n), marks: make([][]int32, n),
		swept: make([][2][]*stream, n), done: make(chan struct{}, n)}
	return w
}

// reset empties w for reuse.
func (w *window) reset() {
	clear(w.pkts) // drop the pointers the packets hold
	w.pkts = w.pkts[:0]
	for i := range w.own {
		w.own[i], w.marks[i] = w.own[i][:0], w.marks[i][:0]
	}
	w.other = w.other[:0]
	w.sweep, w.now = false, 0
}

// seal records, once the reading stage has filled w, which shard gets
// each packet and whether w ends a sweep interval.
func (t *Tracker) seal(w *window) {
	for i := range w.pkts {
		p := &w.pkts[i]
		if p.Proto == "tcp" || p.lookup {
			w.own[p.shard] = append(w.own[p.shard], int32(i))
		}
		if p.ICMP != nil || p.ARP != nil || p.Proto == "arp" {
			w.other = append(w.other, int32(i))
		}
	}
	w.sweep = t.packets%sweepEvery == 0
	w.now = t.now
}

// shards returns how many shards a capture read with o is tracked by.
func (o Options) shards() int {
	if o.Shards > 0 {
		return o.Shards
	}
	return runtime.GOMAXPROCS(0)
}

// track runs the shards and the settling stage over the windows the
// reading stage sends on windows, returning each settled window on free
// (when there is room). It returns once windows is closed and everything
// sent on it is settled.
func (t *Tracker) track(windows <-chan *window, free chan<- *window) {
	var wg sync.WaitGroup
	in := make([]chan *window, len(t.shards))
	for i, sh := range t.shards {
		in[i] = make(chan *window, 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range in[i] {
				n := len(w.recycled)
				sh.free = append(sh.free, w.recycled[i*n/len(in):(i+1)*n/len(in)]...)
				for _, j := range w.own[i] {
					p := &w.pkts[j]
					sh.add(p)
					if p.retired != nil || p.noted != nil {
						w.marks[i] = append(w.marks[i], j)
					}
				}
				if w.sweep {
					sh.sweep(w.now, false, &w.swept[i])
				}
				w.done <- struct{}{}
			}
		}()
	}
	settle := func(w *window) {
		for range t.shards {
			<-w.done
		}
		t.settleMarked(w)
		if w.sweep {
			t.settleSwept(w.swept)
		}
		w.reset()
		clear(w.recycled)
		w.recycled = append(w.recycled[:0], t.recycled...)
		clear(t.recycled)
		t.recycled = t.recycled[:0]
		select {
		case free <- w:
		default:
		}
	}
	var prev *window
	for w := range windows {
		for i := range in {
			in[i] <- w
		}
		if prev != nil {
			settle(prev)
		}
		prev = w
	}
	if prev != nil {
		settle(prev)
	}
	for i := range in {
		close(in[i])
	}
	wg.Wait()
}

// settleMarked settles, in capture order, the packets of w that the shards
// or the reading stage marked: the others leave nothing to settle.
func (t *Tracker) settleMarked(w *window) {
	var at [maxShards + 1]int
	for {
		next, from := w.other, len(w.marks) // the reading stage's list, then each shard's
		if at[from] >= len(next) {
			next = nil
		}
		for i, l := range w.marks {
			if at[i] < len(l) && (next == nil || l[at[i]] < next[at[from]]) {
				next, from = l, i
			}
		}
		if next == nil {
			return
		}
		t.settle(&w.pkts[next[at[from]]])
		at[from]++
	}
}
