package track

import (
	"math"
	"sync"
	"unsafe"

	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/model"
)

// A capture is read in three stages. The reading goroutine decodes frames
// and prepares them (Stage.Hot, Stage.Add) into windows of batchSize
// packets, cut at the same packet numbers whatever the number of shards;
// each shard's goroutine folds the window's packets whose 4-tuples hash to
// it, and, where a window ends a sweep interval, retires its streams closed
// or idle long enough and parks closed ones (park.go), whose memory goes
// back to it through the Tracker, like that of the streams the Tracker
// finalizes, once nothing settled reads them; the calling goroutine then
// settles the window in capture order (Tracker.settle, Tracker.settleSwept)
// while the shards go on with the next ones (settleLag). The shards share
// no stream, and what the Tracker does across streams it does in one order,
// so that the Result is the same for any number of shards, one included.

// window is a batch of prepared packets on its way through the stages.
type window struct {
	// segs holds the TCP segments, and the quotes of ICMP errors quoting
	// one, in capture order. Entries are overwritten when the window is
	// reused, never cleared: they hold no pointer but overlays'.
	segs []tcpSeg
	// owner holds, for each segment of segs, the index of the shard that
	// tracks its 4-tuple; each shard lists its own (own) as it starts
	// folding the window.
	owner []uint8
	own   [][]int32 // per shard, the indices in segs of its segments
	marks [][]mark  // per shard, what it left to settle, in capture order
	// full holds the packets the Tracker settles whole (ICMP errors, ARP),
	// in capture order.
	full []fullPacket
	// outers holds the outer tuples of the overlays segments came in
	// (tcpSeg.outer).
	outers []*model.Tuple
	sweep  bool       // the last packet ends a sweep interval
	now    int64      // the tracker's time after the last packet
	idx    int        // how many packets the tracker was given
	swept  []sweepOut // per shard, what its sweep left: the stream ends of the streams it retired, those it parked
	born   [][]int    // per shard, the streams it created (Tracker.hand), in order
	// recycled holds, per shard, the refs of the streams of its store the
	// Tracker finalized before the window set out, for it to use again.
	recycled [][]uint32
	done     chan struct{} // a token per shard that has folded the window
}

// newWindow returns an empty window for n shards.
func newWindow(n int) *window {
	w := &window{segs: make([]tcpSeg, 0, batchSize), owner: make([]uint8, 0, batchSize), own: make([][]int32, n), marks: make([][]mark, n),
		swept: make([]sweepOut, n), born: make([][]int, n), recycled: make([][]uint32, n), done: make(chan struct{}, n)}
	return w
}

// windowPool holds the windows of the Feeds that are over, for the next
// Feed of any Tracker: a rotated series is read file by file, and again
// as one timeline, and batch reads a capture after another in one
// process. Each Feed goes round maxWindows windows of half a megabyte;
// made anew, those of a ten-file series were 88 MB of garbage that the
// collector, run rarely (GOGC=400), left on the heap. The windows for n
// shards are in windowPool[n].
var windowPool [maxShards + 1]sync.Pool

// getWindow returns an empty window for n shards, from windowPool when
// it holds one.
func getWindow(n int) *window {
	if w, ok := windowPool[n].Get().(*window); ok {
		return w
	}
	return newWindow(n)
}

// putWindow empties w, which no stage reads any longer, into windowPool.
// What it held points to nothing then: a Tracker done with is not kept
// alive by its windows.
func putWindow(w *window) {
	w.reset()
	for i := range w.own {
		o := &w.swept[i]
		for l := range o.ends {
			clear(o.ends[l])
			o.ends[l] = o.ends[l][:0]
		}
		o.parked = o.parked[:0]
		w.born[i], w.recycled[i] = w.born[i][:0], w.recycled[i][:0]
	}
	windowPool[len(w.own)].Put(w)
}

// reset empties w for reuse.
func (w *window) reset() {
	w.segs, w.owner = w.segs[:0], w.owner[:0]
	for i := range w.own {
		clear(w.marks[i]) // the streams they point to may be recycled
		w.own[i], w.marks[i] = w.own[i][:0], w.marks[i][:0]
	}
	clear(w.full) // drop the ICMP and ARP events the packets point to
	w.full = w.full[:0]
	clear(w.outers)
	w.outers = w.outers[:0]
	w.sweep, w.now, w.idx = false, 0, 0
}

// nextSeg returns the next entry of w.segs to fill, at index n.
func (w *window) nextSeg() (g *tcpSeg, n int) {
	n = len(w.segs)
	if n < cap(w.segs) {
		w.segs = w.segs[:n+1]
	} else {
		w.segs = append(w.segs, tcpSeg{})
	}
	return &w.segs[n], n
}

// own gives the segment at index n, the last of w.segs, to the shard that
// tracks its 4-tuple. Every segment kept in a window is given: w.owner
// runs alongside w.segs.
//
// The reading stage writes a byte a segment, one after the other, and
// each shard lists its own from them (listOwn): appending the index to
// the shard's list took a third of the reading stage's loop on the bench
// capture, most of it waiting for lines of the list the other core had
// read.
func (t *Tracker) own(w *window, n int) {
	w.owner = append(w.owner, uint8(t.shardOf(w.segs[n].Hash)))
}

// listOwn lists in w.own[i] the indices of the segments of w that shard i
// tracks, in order, and returns the list. It writes every index and
// counts only shard i's, with no branch on the owner: a shard's segments
// come in no order a branch could predict.
func (w *window) listOwn(i int) []int32 {
	own := w.own[i]
	if cap(own) < len(w.owner) {
		own = make([]int32, len(w.owner), batchSize)
	}
	own = own[:len(w.owner)]
	// own[k] is written unchecked: k never passes j, an index of owner,
	// which own is as long as.
	p, k, me := unsafe.Pointer(unsafe.SliceData(own)), uintptr(0), uint8(i)
	for j, o := range w.owner {
		*(*int32)(unsafe.Add(p, 4*k)) = int32(j)
		if o == me {
			k++
		}
	}
	w.own[i] = own[:k]
	return w.own[i]
}

// seal records, once the reading stage has filled w, whether w ends a
// sweep interval.
func (t *Tracker) seal(w *window) {
	t.lone.ok = false // its segment leaves the reading stage
	w.sweep = t.packets%sweepEvery == 0
	w.now, w.idx = t.now, t.packets
}

// fullPacket is a packet the Tracker settles whole, on its way through a
// window.
type fullPacket struct {
	decode.Packet
	idx   int   // the packet's order among those the tracker was given
	quote int32 // the index among the window's segments of the lookup of the TCP segment it quotes, -1 for none
}

// batchSize is how many decoded packets go from the reading stage to the
// tracking stage at once (a window); windows end at the multiples of
// batchSize among the packets a tracker is given, and so at each sweep
// (sweepEvery is a multiple of it).
const batchSize = 4096

// maxWindows is how many windows a capture read goes round with: enough
// for one being filled, those queued for the shards and the settleLag
// ones folded ahead of the settling. Going round a few keeps the
// allocations of a read independent of its length, and its memory
// bounded.
const maxWindows = 8

// settleLag is how many windows the shards may fold ahead of the one
// being settled. With one, a shard slower on a window (one that ends a
// sweep) held up the settling, and through it the reading; three keep
// both cores busy. Memory the settling gives back (Tracker.recycled) only
// reaches the shards through a window it settled, so a stream a window
// still to settle points to is not reused before that window is settled.
const settleLag = 3

// Feed folds the packets read gives it, through the stages above: read
// runs on a goroutine of its own and hands each packet, in capture order,
// to the Stage it is given, while the shards fold them and the calling
// goroutine settles them. Feed returns read's error once all it handed on
// is settled; a read that fails leaves its last window unsettled.
func (t *Tracker) Feed(read func(s *Stage) error) error {
	windows := make(chan *window, 4)
	free := make(chan *window, maxWindows)
	var readErr error
	s := &Stage{t: t, w: getWindow(len(t.shards)), windows: windows, free: free, made: 1}
	t.filling = s.w
	defer func() { t.filling = nil }()
	go func() {
		defer close(windows)
		readErr = t.readStage(s, read)
	}()
	t.track(windows, free)
	t.reclaim(free, s.w)
	t.flushCounts()
	return readErr
}

// readStage is the reading stage: it runs read, which hands each packet
// to s, and sends the last window, unless read fails. It is a method of
// its own, so that profiles name the stage (make bench's summary).
func (t *Tracker) readStage(s *Stage, read func(s *Stage) error) error {
	if err := read(s); err != nil {
		return err
	}
	if len(s.w.segs) > 0 || len(s.w.full) > 0 {
		t.seal(s.w)
		s.windows <- s.w
		s.w = nil // settled, and on free
	}
	return nil
}

// reclaim hands the shards the streams the windows of a Feed still hold
// for them once it is over: those on free, and the reading stage's last
// window, last unsent, unless it is nil; the windows then go to
// windowPool. Without this, each file of a series would leave up to
// maxWindows windows' worth of finalized streams unused, and the stores
// would grow with the files.
func (t *Tracker) reclaim(free <-chan *window, last *window) {
	give := func(w *window) {
		for i, sh := range t.shards {
			sh.free = append(sh.free, w.recycled[i]...)
		}
		putWindow(w)
	}
	if last != nil {
		give(last)
	}
	for {
		select {
		case w := <-free:
			give(w)
		default:
			return
		}
	}
}

// Stage is the reading stage of Feed: it takes the packets of a capture,
// in capture order, into windows for the shards. It is used by the read
// function Feed runs, and only there.
type Stage struct {
	t       *Tracker
	w       *window // the window being filled
	windows chan<- *window
	free    <-chan *window
	made    int // windows made; at most maxWindows are, then they go round
}

// Hot reads the frame data, of link type link, at unix nanoseconds since
// 1970 and with cut bytes on the wire past those captured, straight into
// the window through decode.HotTCP, and reports whether it took it: a
// plain TCP segment it did, and frame is its number. A frame it does not
// take is to be decoded and given to Add.
func (s *Stage) Hot(link layers.LinkType, data []byte, cut, frame int, unix int64) bool {
	t, w := s.t, s.w
	if !t.hotTimes() {
		return false
	}
	g, n := w.nextSeg()
	if !decode.HotTCP(link, data, cut, &g.Segment) {
		w.segs = w.segs[:n]
		return false
	}
	t.prepareHot(g, frame, unix)
	t.own(w, n)
	if t.packets%batchSize == 0 {
		s.send()
	}
	return true
}

// Add takes a decoded packet, whose Pos gives its frame or line.
func (s *Stage) Add(p *decode.Packet) {
	t, w := s.t, s.w
	quote := int32(-1)
	if g, n := w.nextSeg(); t.prepare(p, g, &w.outers) {
		t.own(w, n)
		if g.lookup {
			quote = int32(n)
		}
	} else {
		w.segs = w.segs[:n]
	}
	if p.ICMP != nil || p.ARP != nil || p.Proto == "arp" || p.BadChecksum {
		w.full = append(w.full, fullPacket{Packet: *p, idx: t.packets, quote: quote})
	}
	if t.packets%batchSize == 0 {
		s.send()
	}
}

// send hands the full window on to the shards and takes the next one.
func (s *Stage) send() {
	s.t.seal(s.w)
	s.windows <- s.w
	select {
	case s.w = <-s.free:
	default:
		if s.made < maxWindows {
			s.w, s.made = getWindow(len(s.t.shards)), s.made+1
		} else {
			s.w = <-s.free
		}
	}
	s.t.filling = s.w
}

// track runs the shards and the settling stage over the windows the
// reading stage sends on windows, returning each settled window on free
// (when there is room). It returns once windows is closed and everything
// sent on it is settled.
func (t *Tracker) track(windows <-chan *window, free chan<- *window) {
	var wg sync.WaitGroup
	in := make([]chan *window, len(t.shards))
	for i, sh := range t.shards {
		in[i] = make(chan *window, settleLag+1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range in[i] {
				sh.free = append(sh.free, w.recycled[i]...)
				sh.born = w.born[i][:0]
				sh.outers = w.outers
				w.marks[i] = sh.fold(w.segs, w.listOwn(i), w.marks[i])
				sh.outers = nil
				w.born[i], sh.born = sh.born, nil
				if w.sweep {
					sh.sweep(w.now, w.idx, &w.swept[i])
				}
				w.done <- struct{}{}
			}
		}()
	}
	settle := func(w *window) {
		for range t.shards {
			<-w.done
		}
		if t.hand != nil {
			t.hand.noteMerged(w.born)
		}
		t.settleMarked(w)
		if w.sweep {
			t.settleSwept(w.swept)
		}
		w.reset()
		for i := range t.recycled {
			w.recycled[i] = append(w.recycled[i][:0], t.recycled[i]...)
			t.recycled[i] = t.recycled[i][:0]
		}
		offer(free, w)
	}
	queue := make([]*window, 0, settleLag) // folding or folded, not yet settled
	for w := range windows {
		for i := range in {
			in[i] <- w
		}
		if len(queue) == settleLag {
			settle(queue[0])
			queue = append(queue[:0], queue[1:]...)
		}
		queue = append(queue, w)
	}
	for _, w := range queue {
		settle(w)
	}
	for i := range in {
		close(in[i])
	}
	wg.Wait()
}

// settleMarked settles, in capture order, what the shards left in w's
// marks and the packets of w.full: the other packets leave nothing to
// settle.
func (t *Tracker) settleMarked(w *window) {
	var at [maxShards]int
	f := 0
	for {
		from, idx := -1, math.MaxInt
		for i, l := range w.marks {
			if at[i] < len(l) && l[at[i]].idx < idx {
				from, idx = i, l[at[i]].idx
			}
		}
		if f < len(w.full) && w.full[f].idx < idx {
			p := &w.full[f]
			attemptFrame := 0
			if p.quote >= 0 {
				attemptFrame = w.segs[p.quote].found
			}
			t.settle(&p.Packet, attemptFrame)
			f++
			continue
		}
		if from < 0 {
			return
		}
		t.settleMark(&w.marks[from][at[from]])
		at[from]++
	}
}
