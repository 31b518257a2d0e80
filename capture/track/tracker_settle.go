package track

import (
	"cmp"
	"math"
	"net/netip"
	"slices"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/model"
)

// settleMark does, in capture order, what a shard left in m: it
// finalizes the stream a SYN ended by reusing its 4-tuple, and notes a
// first SYN for summary mode.
func (t *Tracker) settleMark(m *mark) {
	if m.retired.stream != nil {
		v := streamEndOf(m.retired, t.summarize)
		t.finalize(&v)
		m.retired = ended{}
	}
	if m.noted != nil {
		t.noteSYN(m.noted, m.noteISN, m.ns, m.noteCli)
		m.noted = nil
	}
}

// settle records, in capture order, ICMP errors and ARP claims, which
// concern the whole capture.
func (t *Tracker) settle(p *decode.Packet, attemptFrame int) {
	switch {
	case p.ICMP != nil:
		t.addICMP(p, attemptFrame)
	case p.ARP != nil:
		t.addARP(p)
	case p.BadChecksum:
		t.badSums = append(t.badSums, model.ChecksumError{Pos: t.pos(p), Time: p.Time, Node: t.node, Proto: p.Proto,
			Src: p.Src, Dst: p.Dst})
	}
	if p.Proto == "arp" {
		t.counts.ARP++
		if p.GratuitousARP {
			t.counts.ARPGratuitous++
		}
	}
}

// settleSwept finalizes the streams the shards' sweeps retired, in the
// order one shard would have retired them: the open list's before the
// closed list's, each in the order of the streams' last packets. It empties
// swept, handing the streams parked back to their shards for new ones.
func (t *Tracker) settleSwept(swept []sweepOut) {
	var at [maxShards]int
	for l := range 2 {
		clear(at[:])
		for {
			var next *streamEnd
			from := -1
			for i := range swept {
				if q := swept[i].ends[l]; at[i] < len(q) && (next == nil || q[at[i]].idx < next.idx) {
					next, from = &q[at[i]], i
				}
			}
			if next == nil {
				break
			}
			at[from]++
			t.finalize(next)
		}
	}
	for i := range swept {
		o := &swept[i]
		for l := range 2 {
			clear(o.ends[l])
			o.ends[l] = o.ends[l][:0]
		}
		t.recycled[i] = append(t.recycled[i], o.parked...)
		o.parked = o.parked[:0]
	}
}

// doneChunk is how many finalized attempts are kept per chunk.
const doneChunk = 4096

// finalize turns a stream its shard retired, from its streamEnd, into an
// attempt (or folds it into its endpoint's counters), and hands it back
// to its shard for a new one.
func (t *Tracker) finalize(v *streamEnd) {
	t.settleEnd(v)
	t.recycled[v.e.shard] = append(t.recycled[v.e.shard], v.e.ref)
}

// finishStreams finalizes every stream still live, in the order one shard
// would have retired them all (the open list's, then the closed list's,
// each in the order of the streams' last packets), straight from the
// shards' activity lists. Each shard works out the stream ends of its
// streams on a goroutine of its own while the Tracker settles them.
// Nothing comes after: the streams are not recycled.
//
// When attempts are handed on and not summarized, the streams are
// finalized in their creation order instead, so that each attempt is
// handed on at once rather than wait for older ones: finalizing a stream
// then counts its outcome and builds its attempt, which no other stream
// changes, so that the order changes nothing else. When attempts are not
// summarized, every stream has one, and each shard's goroutine builds
// those of its streams (endFeed.build) while the Tracker hands on or
// keeps the ones before, and, when they are handed on, another goroutine
// those of the finalized streams that waited for older ones (waitFeed):
// at the end of a large capture, building the attempts is most of the
// work, and the Tracker's goroutine alone would hold up the others.
func (t *Tracker) finishStreams() {
	bySeq := t.hand != nil && !t.summarize
	var waits *waitFeed // when bySeq, the attempts of the finalized streams not yet handed on
	if bySeq {
		waits = t.startWaitFeed(t.hand.finished())
	}
	feeds := make([]endFeed, len(t.shards))
	for i, sh := range t.shards {
		if !t.summarize {
			// Every stream has an attempt: its feed builds it.
			feeds[i].build, feeds[i].lend = t.endBuilder(), t.lend
			feeds[i].rows = t.hand != nil && t.hand.rows != nil
		}
		feeds[i].start(sh, t.summarize, bySeq)
	}
	for l := range 2 {
		for {
			var next *streamEnd
			from := -1
			for i := range feeds {
				if v := feeds[i].peek(l); v != nil && (next == nil || !bySeq && v.idx < next.idx || bySeq && v.seq < next.seq) {
					next, from = v, i
				}
			}
			if next == nil {
				break
			}
			if bySeq {
				t.handOnBefore(waits, next.seq)
			}
			t.settleEnd(next)
			feeds[from].pop()
		}
	}
	if bySeq {
		t.handOnBefore(waits, math.MaxInt)
	}
	for _, sh := range t.shards {
		sh.streams.reset()
	}
}

// endFeed is a shard's live streams, retired and worked out in the
// order of its activity lists by a goroutine of their own, in batches.
type endFeed struct {
	out  chan *endBatch // the batches worked out, in order
	free chan *endBatch // those the Tracker is done with
	cur  *endBatch
	at   int
	// build, when set, builds each stream's attempt too, into the
	// memory of its batch, which lend says is used again by the batches
	// after it (Options.LendAttempts): the Tracker then hands on, or
	// keeps, attempts built while it settled the streams before them.
	build *builder
	lend  bool
	rows  bool // build works out rows (Options.EachRow)
}

// endBatch is a run of stream ends of one activity list, the streams
// brought back from the shard's parkStore for them, and, when their feed
// builds them, their attempts and what those point to.
type endBatch struct {
	list int
	v    []streamEnd
	st   []stream
	a    []model.Attempt
	r    []model.Row // the rows, when the feed works them out
	batchMemory
}

// batchMemory is what the attempts of a batch built at the end of a
// capture point to: their segments and data sizes.
type batchMemory struct {
	segs  slab[model.Seg]
	sizes slab[model.DataSizes]
}

// again readies m for the next batch's attempts, every attempt of the
// last one handed on: its memory is used again when they were lent, and
// left to them when they were given.
func (m *batchMemory) again(lend bool) {
	if lend {
		m.segs.reuse()
		m.sizes.reuse()
	} else {
		*m = batchMemory{}
	}
}

// offer gives b back to free, to be used again, unless free is full.
func offer[T any](free chan<- T, b T) {
	select {
	case free <- b:
	default:
	}
}

// batch returns an empty batch of list l, one the Tracker is done with if
// there is one.
func (f *endFeed) batch(l int) *endBatch {
	var b *endBatch
	select {
	case b = <-f.free:
		b.again(f.lend)
	default:
		b = &endBatch{v: make([]streamEnd, 0, endBatchLen)}
		if f.build != nil {
			b.a = make([]model.Attempt, 0, endBatchLen)
		}
		if f.rows {
			b.r = make([]model.Row, 0, endBatchLen)
		}
	}
	b.list, b.v, b.a, b.r = l, b.v[:0], b.a[:0], b.r[:0]
	return b
}

// buildLast builds the attempt of the last stream end of b, or works out
// its row, when f builds them.
func (f *endFeed) buildLast(b *endBatch) {
	v := &b.v[len(b.v)-1]
	f.build.segs, f.build.sizes = &b.segs, &b.sizes
	if f.rows {
		// Not zeroed first: rowOf writes the row whole.
		b.r = b.r[:len(b.r)+1]
		v.row = &b.r[len(b.r)-1]
		v.built = f.build.rowOf(v.row, v.e, func() *model.Attempt { return appendZero(&b.a) })
		return
	}
	v.built = appendZero(&b.a)
	f.build.attemptInto(v.built, v.e)
}

const endBatchLen = 512

// start sets the feed's goroutine to retire sh's live streams, in the
// order of its activity lists, or in their creation order (on the first
// list) when bySeq is set.
func (f *endFeed) start(sh *shard, summarize, bySeq bool) {
	f.out, f.free = make(chan *endBatch, 2), make(chan *endBatch, 4)
	go func() {
		defer close(f.out)
		if bySeq {
			f.bySeq(sh, summarize)
			return
		}
		for l := range 2 {
			var b *endBatch
			batch := func() {
				if b == nil {
					b = f.batch(l)
				}
			}
			add := func(s *stream) {
				b.v = append(b.v, streamEndOf(ended{s, sh.takeExtra(s)}, summarize))
				if f.build != nil {
					f.buildLast(b)
				}
				if len(b.v) == cap(b.v) {
					f.out <- b
					b = nil
				}
			}
			// The parked streams come first on the closed list, the
			// oldest; each is decoded into the batch that takes it.
			for l == listClosed-1 {
				id, _, ok := sh.park.first()
				if !ok {
					break
				}
				batch()
				if b.st == nil {
					b.st = make([]stream, endBatchLen)
				}
				s := &b.st[len(b.v)]
				sh.park.load(id, s)
				s.ref, s.shard = parkedRef|id, sh.index
				sh.park.kill(id)
				add(s)
			}
			for sh.lists[l].head != 0 {
				batch()
				s := sh.store.at(sh.lists[l].head)
				sh.unlink(s)
				add(s)
			}
			if b != nil {
				f.out <- b
			}
		}
	}()
}

// bySeq sends the stream ends of sh's live streams, parked ones
// included, in their creation order, as those of the first list.
func (f *endFeed) bySeq(sh *shard, summarize bool) {
	// Each live stream as its creation order and ref in one number
	// (liveKey), 8 bytes a stream at the end of a large capture.
	keys := make([]uint64, 0, sh.streams.len()+int(sh.park.n))
	wide := false
	for l := range sh.lists {
		for ref := sh.lists[l].head; ref != 0; {
			s := sh.store.at(ref)
			keys, wide = append(keys, liveKey(s.seq, ref)), wide || !narrowSeq(s.seq)
			ref = s.next
		}
	}
	for i, n := 0, sh.park.n; i < n; i++ {
		id := (sh.park.head + uint32(i)) & parkIDs
		if !sh.park.ent(id).dead {
			seq := sh.park.seq(id)
			keys, wide = append(keys, liveKey(seq, parkedRef|id)), wide || !narrowSeq(seq)
		}
	}
	creationOrder(keys, wide, func(ref uint32) int {
		if ref&parkedRef != 0 {
			return sh.park.seq(ref & parkIDs)
		}
		return sh.store.at(ref).seq
	})
	var b *endBatch
	for _, k := range keys {
		ref := uint32(k)
		if b == nil {
			b = f.batch(0)
		}
		var s *stream
		if ref&parkedRef == 0 {
			s = sh.store.at(ref)
		} else {
			if b.st == nil {
				b.st = make([]stream, endBatchLen)
			}
			s = &b.st[len(b.v)]
			sh.park.load(ref&parkIDs, s)
			s.ref, s.shard = ref, sh.index
		}
		b.v = append(b.v, streamEndOf(ended{s, sh.takeExtra(s)}, summarize))
		if f.build != nil {
			f.buildLast(b)
		}
		if len(b.v) == cap(b.v) {
			f.out <- b
			b = nil
		}
	}
	if b != nil {
		f.out <- b
	}
}

// peek returns the next stream end of list l, nil when the list has no more.
func (f *endFeed) peek(l int) *streamEnd {
	if f.cur != nil && f.at == len(f.cur.v) {
		// The batch is not cleared: the feed writes over its stream
		// ends and attempts as it fills it again, and until then what
		// they point to stays alive, a batch's worth, as the batch
		// itself does. Clearing would cost the Tracker, whose goroutine
		// is the busiest at the end of a capture, a pass over 300 KB a
		// batch.
		offer(f.free, f.cur)
		f.cur = nil
	}
	if f.cur == nil {
		b, ok := <-f.out
		if !ok {
			return nil
		}
		f.cur, f.at = b, 0
	}
	if f.cur.list != l {
		return nil
	}
	return &f.cur.v[f.at]
}

// pop moves past the stream end peek returned.
func (f *endFeed) pop() { f.at++ }

// giveBack hands the recycled streams back to their shards.
func (t *Tracker) giveBack() {
	for i, l := range t.recycled {
		if len(l) > 0 {
			sh := t.shards[i]
			sh.free = append(sh.free, l...)
			t.recycled[i] = l[:0]
		}
	}
}

// streamEnd is what finalizing a stream takes from the stream alone: its
// outcome, whether summary mode folds it whole, and what folding it
// counts. Working it out reads only what the stream's shard wrote, so a
// shard can do it for the streams it retires while the Tracker settles
// others; settleEnd then does, in capture order, what concerns the
// whole capture.
type streamEnd struct {
	e     ended
	built *model.Attempt // the stream's attempt, when its endFeed built it
	row   *model.Row     // the stream's row, when its endFeed worked it out (Options.EachRow)
	idx   int            // the stream's last packet (tcpSeg.idx)
	// seq is the stream's creation order (stream.seq), copied so that
	// the Tracker orders and hands on the streams a shard retired
	// without reading the streams, which another core wrote last.
	seq     int
	outcome model.Outcome
	// fold is set when summary mode folds the stream whole: established,
	// ended normally (SF, S1, S2, S3), with no large retransmission, no
	// ICMP error quoting it and no overlay.
	fold bool
	// counts is set when the fields after it hold what folding the stream
	// counts: when it folds, or when it was refused or unanswered in
	// summary mode.
	counts   bool
	synackOK bool
	port     uint16 // the server's
	server   netip.AddrPort
	client   netip.Addr
	first    int64 // the first packet's tracker time
	packets  int
	bytes    [2]int64 // the client's, the server's
	synRetx  int
	synack   time.Duration
}

// streamEndOf works out the streamEnd of e.
func streamEndOf(e ended, summarize bool) streamEnd {
	s := e.stream
	v := streamEnd{e: e, idx: s.lastIdx, seq: s.seq, outcome: s.outcome()}
	if !summarize || e.outer() != nil {
		return v
	}
	cd := s.clientDir()
	switch v.outcome {
	case model.OutcomeEstablished:
		switch s.connState(cd) {
		case "SF", "S1", "S2", "S3":
			// A stalled transfer, or one an ICMP error quotes, is kept
			// for the rules.
			v.fold = !e.largeRetx() && !s.icmp
		}
		if !v.fold {
			return v
		}
	case model.OutcomeRefused, model.OutcomeUnanswered:
	default:
		return v
	}
	v.counts = true
	v.server, v.client = s.end(1-cd), s.end(cd).Addr()
	v.port = v.server.Port()
	v.first, v.packets = s.first.ns, s.packets
	v.bytes = [2]int64{s.bytes[cd], s.bytes[1-cd]}
	v.synRetx = e.synRetx(cd)
	syn, ok1 := e.firstSeg(segSYN, cd)
	sa, ok2 := e.firstSeg(segSYNACK, 1-cd)
	if ok1 && ok2 {
		v.synack, v.synackOK = timeTo(sa.ns, syn.ns)
	}
	return v
}

// settleEnd finalizes a stream from its streamEnd: it counts its
// outcome, forgets its sequence numbers, and folds it into its endpoint's
// counters or keeps its attempt.
func (t *Tracker) settleEnd(v *streamEnd) {
	s := v.e.stream
	outcome := v.outcome
	countOutcome(&t.counts, outcome)
	if t.series {
		// The file of the connection's first packet counts it.
		t.countFileOutcome(v.e.where(s.first).file, outcome)
	}
	t.forgetSYN(s)
	natCopy := t.summarize && t.natCopy(s.seq)
	if v.fold {
		// Folded straight from the stream: no attempt is built for it.
		t.foldInto(t.acc(v.server, outcome), v)
		t.passOn(v.seq)
		return
	}
	if v.counts && !s.icmp && !natCopy {
		ek := statKey{v.server, outcome}
		hk := statKey{netip.AddrPortFrom(v.server.Addr(), 0), outcome} // all the host's ports
		if t.failKept == nil {
			t.failKept = map[statKey]int32{}
		}
		hostFull := int(t.failKept[hk]) >= hostSampleFactor*t.keepFailed
		switch {
		case hostFull && t.failKept[ek] == 0:
			// A port first seen once the host's sample is full (a
			// scan): counted with the host's other such ports.
			t.foldInto(t.acc(hk.server, outcome), v)
			t.passOn(v.seq)
			return
		case hostFull || int(t.failKept[ek]) >= t.keepFailed:
			t.foldInto(t.acc(v.server, outcome), v)
			t.passOn(v.seq)
			return
		}
		t.failKept[ek]++
		t.failKept[hk]++
	}
	if t.hand != nil {
		t.handOn(v.e, v.seq, v.built, v.row)
		return
	}
	a := t.attemptOf(v.e, v.built)
	if n := len(t.done); n == 0 || len(t.done[n-1]) == cap(t.done[n-1]) {
		t.done = append(t.done, make([]model.Attempt, 0, doneChunk))
	}
	last := &t.done[len(t.done)-1]
	*last = append(*last, a)
	t.nDone++
	t.doneSeq = append(t.doneSeq, s.seq)
}

// countOutcome counts a connection's outcome in c.
func countOutcome(c *model.Counts, outcome model.Outcome) {
	switch outcome {
	case model.OutcomeEstablished:
		c.Established++
	case model.OutcomeRefused:
		c.Refused++
	case model.OutcomeUnanswered:
		c.Unanswered++
	case model.OutcomeSynAckClientRST:
		c.SYNACKClientRST++
	}
}

// liveKey is a live stream as creationOrder sorts it: its creation
// order (seq) in the high half, its ref in the low one.
func liveKey(seq int, ref uint32) uint64 { return uint64(seq)<<32 | uint64(ref) }

// narrowSeq reports whether liveKey keeps seq whole.
func narrowSeq(seq int) bool { return seq >= 0 && uint64(seq) <= math.MaxUint32 }

// creationOrder sorts keys, the liveKeys of streams whose creation orders
// are all distinct, in that order: as numbers, rather than with a function
// comparing two (two thirds of the instructions, on a shard's hundreds of
// thousands of streams), unless wide says a creation order did not fit,
// when they are sorted by what seq gives for their refs. Either way, a
// key's low half is its ref.
func creationOrder(keys []uint64, wide bool, seq func(ref uint32) int) {
	if !wide {
		slices.Sort(keys)
		return
	}
	for i := range keys {
		keys[i] &= math.MaxUint32
	}
	slices.SortFunc(keys, func(a, b uint64) int { return cmp.Compare(seq(uint32(a)), seq(uint32(b))) })
}
