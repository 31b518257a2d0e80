package track

import (
	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/model"
)

// shard tracks the TCP streams whose 4-tuples hash to it (Tracker.shardOf).
// A Tracker has one shard per core when it reads a capture, one goroutine
// each, and folds what they finish in one deterministic order, so that its
// Result does not depend on how many shards there were.
type shard struct {
	store   streamStore // the shard's streams, live and recycled
	park    parkStore   // the closed streams parked (park.go)
	streams streamTable // the live ones by 4-tuple, parked ones included
	// lists holds the live streams, open ones (listOpen) and closed ones
	// (listClosed) apart, each least recently active first, so that streams
	// long closed or idle are finalized as the capture goes and memory
	// follows the live connections: a closed stream never waits behind an
	// open one that lingers longer. Both are in the order of the streams'
	// last packets, in every shard as in the whole capture.
	lists  [2]activity
	counts model.Counts // the TCP counts: retransmitted SYNs
	flags  [256]int     // TCP segments by their flags, for the other TCP counts
	free   []uint32     // the refs of finalized streams given back by the Tracker, for new ones
	// extra holds, by ref, the streamExtra of the live streams that need
	// one (stream.hasExtra).
	extra     map[uint32]*streamExtra
	created   int
	parkAbove int   // parkBudget's share of the shard
	index     uint8 // the shard's in Tracker.shards
	summarize bool
	// noteBorn says whether the shard lists in born the streams it
	// creates (their seq, in order), for the Tracker's reorder buffer when
	// attempts are handed on.
	noteBorn bool
	born     []int
	// outers holds, while the shard folds a window, the window's outer
	// tuples (tcpSeg.outer).
	outers []*model.Tuple
}

func newShard(index uint8, summarize bool) *shard {
	sh := &shard{index: index, summarize: summarize}
	sh.streams.st, sh.streams.pk = &sh.store, &sh.park
	return sh
}

// streamExtra is the state of a stream that holds pointers and that few
// streams need, kept apart so that streams hold no pointer: its overlay's
// outer addresses, its segments once they overflow stream.segBuf, its
// retransmitted data segments.
type streamExtra struct {
	outer *model.Tuple
	segs  []seg // all the segments, once more than fit in segBuf
	retx  [2][]retxSeg
	pos   []segPos // the places of the segs that do not fit in seg.pos
}

// extraOf returns s's streamExtra, made on first use.
func (sh *shard) extraOf(s *stream) *streamExtra {
	if s.hasExtra {
		return sh.extra[s.ref]
	}
	if sh.extra == nil {
		sh.extra = map[uint32]*streamExtra{}
	}
	x := new(streamExtra)
	sh.extra[s.ref] = x
	s.hasExtra = true
	return x
}

// takeExtra returns s's streamExtra, nil when it has none, and lets go of
// it: s is retired.
func (sh *shard) takeExtra(s *stream) *streamExtra {
	if !s.hasExtra {
		return nil
	}
	x := sh.extra[s.ref]
	delete(sh.extra, s.ref)
	return x
}

// ended is a stream its shard retired, with its streamExtra (nil when it
// has none), as the Tracker finalizes it.
type ended struct {
	*stream
	x *streamExtra
}

// live returns how many streams t's shards track.
func (t *Tracker) live() int {
	n := 0
	for _, sh := range t.shards {
		n += sh.streams.len()
	}
	return n
}

// add folds g into the shard: a TCP segment into its stream, reporting
// whether it left m to settle; an ICMP error's quote marks the stream it
// quotes and sets g.found.
func (sh *shard) add(g *tcpSeg, m *mark) bool {
	if !g.lookup {
		return sh.addTCP(g, m)
	}
	sh.lookup(g)
	return false
}

// lookup marks the stream an ICMP error's quote g quotes, and sets
// g.found.
func (sh *shard) lookup(g *tcpSeg) {
	if i, _ := sh.streams.findStream(&g.Key, g.Hash); i >= 0 {
		g.found = sh.firstPlace(sh.quoted(sh.streams.slots[i].ref))
	}
}

// quoted marks the stream of ref, in the shard's table, as quoted by an
// ICMP error, and returns it: a parked one as sh.streams.loaded, which
// the table's lookup (findStream, keyAt) that gave ref decoded.
func (sh *shard) quoted(ref uint32) *stream {
	if ref&parkedRef != 0 {
		sh.park.ent(ref & parkIDs).icmp = true
		return &sh.streams.loaded
	}
	s := sh.streams.st.at(ref)
	s.icmp = true
	return s
}

// firstPlace returns the first frame of s, or its first line when it
// was read from text.
func (sh *shard) firstPlace(s *stream) int {
	w := sh.where(s, s.first)
	if w.frame != 0 {
		return w.frame
	}
	return int(w.line)
}

// fold folds a window's segments at the indices own into the shard,
// appending what they leave to settle to marks.
func (sh *shard) fold(segs []tcpSeg, own []int32, marks []mark) []mark {
	var m mark
	for _, j := range own {
		// As add, with the segment's kind tested here rather than in a
		// call for every segment.
		g := &segs[j]
		if g.lookup {
			sh.lookup(g)
		} else if sh.addTCP(g, &m) {
			marks = append(marks, m)
		}
	}
	return marks
}

// alloc returns an empty stream to fill: a recycled one, emptied here
// rather than when the Tracker finalized it, so that its memory is written
// by the core about to fill it, and only written (its ref comes from the
// free list, not from the stream: a read would wait for memory the writes
// need not); or a new one, empty already.
func (sh *shard) alloc() *stream {
	if n := len(sh.free); n > 0 {
		ref := sh.free[n-1]
		sh.free = sh.free[:n-1]
		s := sh.store.at(ref)
		*s = stream{ref: ref, shard: sh.index}
		return s
	}
	s := sh.store.alloc()
	s.shard = sh.index
	return s
}

// activity is a list of live streams, least recently active first, by
// their refs (0 for none).
type activity struct{ head, tail uint32 }

const (
	listNone   = iota // not listed
	listOpen          // lingers idleLinger after its last packet
	listClosed        // FIN both ways or an RST: lingers closedLinger
)

// touch moves s to the tail of the list its state puts it on.
func (sh *shard) touch(s *stream) {
	want := uint8(listOpen)
	if s.closed() {
		want = listClosed
	}
	l := &sh.lists[want-1]
	if l.tail == s.ref {
		return
	}
	sh.unlink(s)
	s.list = want
	s.prev, s.next = l.tail, 0
	if l.tail != 0 {
		sh.store.at(l.tail).next = s.ref
	} else {
		l.head = s.ref
	}
	l.tail = s.ref
}

func (sh *shard) unlink(s *stream) {
	if s.list == listNone {
		return
	}
	l := &sh.lists[s.list-1]
	if s.prev != 0 {
		sh.store.at(s.prev).next = s.next
	} else {
		l.head = s.next
	}
	if s.next != 0 {
		sh.store.at(s.next).prev = s.prev
	} else {
		l.tail = s.prev
	}
	s.prev, s.next, s.list = 0, 0, listNone
}

// retire takes s out of the shard, for the Tracker to finalize.
func (sh *shard) retire(s *stream) ended {
	sh.unlink(s)
	sh.streams.remove(s, s.hash)
	return ended{s, sh.takeExtra(s)}
}

// sweepOut is what a shard's sweep leaves the Tracker: the stream ends
// of the streams it retired, each activity list's in its order, and the
// streams it parked, whose memory the Tracker hands back for new streams
// once it no longer reads them.
type sweepOut struct {
	ends   [2][]streamEnd
	parked []uint32 // their refs in the store
}

// sweep retires the streams at the heads of the activity lists that have
// been closed or idle long enough at time now, and appends their stream ends
// to out, each list's in its order; then, while the shard holds more than
// parkAbove streams whole, it parks the closed streams that have had no
// packet for parkAfter, or for the last parkPackets of the idx packets the
// Tracker was given.
func (sh *shard) sweep(now int64, idx int, out *sweepOut) {
	l := &sh.lists[listOpen-1]
	for l.head != 0 {
		s := sh.store.at(l.head)
		if sub(now, s.lastNow) <= idleLinger {
			break
		}
		out.ends[0] = append(out.ends[0], streamEndOf(sh.retire(s), sh.summarize))
	}
	// The parked streams are the oldest closed ones, in order.
	for {
		id, e, ok := sh.park.first()
		if !ok || sub(now, e.lastNow) <= closedLinger {
			break
		}
		ref := parkedRef | id
		sh.streams.load(ref)
		s := sh.unpark(sh.streams.slotOf(e.hash, ref), ref)
		out.ends[1] = append(out.ends[1], streamEndOf(sh.retire(s), sh.summarize))
	}
	l = &sh.lists[listClosed-1]
	for l.head != 0 {
		s := sh.store.at(l.head)
		if sub(now, s.lastNow) <= closedLinger {
			break
		}
		out.ends[1] = append(out.ends[1], streamEndOf(sh.retire(s), sh.summarize))
	}
	for l.head != 0 && sh.streams.len()-sh.park.len() > sh.parkAbove {
		s := sh.store.at(l.head)
		if sub(now, s.lastNow) <= parkAfter && idx-s.lastIdx <= parkPackets {
			break
		}
		sh.unlink(s)
		ref := parkedRef | sh.park.park(s)
		sh.streams.slots[sh.streams.slotOf(s.hash, s.ref)].ref = ref
		sh.moveExtra(s, s.ref, ref)
		out.parked = append(out.parked, s.ref)
	}
}

// get returns the live stream of k, whose hash is h, or nil. A parked
// stream is brought back first.
func (sh *shard) get(k *decode.Key, h uint32) *stream {
	i, s := sh.streams.findStream(k, h)
	if s != nil || i < 0 {
		return s
	}
	ref := sh.streams.slots[i].ref
	return sh.unpark(i, ref)
}

// unpark brings back the parked stream of ref, at index i of the table,
// which sh.streams.loaded holds decoded, into a stream of the store, off
// the activity lists.
func (sh *shard) unpark(i int, ref uint32) *stream {
	s := sh.alloc()
	r := s.ref
	*s = sh.streams.loaded
	s.ref, s.shard, s.list, s.prev, s.next = r, sh.index, listNone, 0, 0
	sh.streams.slots[i].ref = r
	sh.park.kill(ref & parkIDs)
	sh.moveExtra(s, ref, r)
	return s
}

// moveExtra keeps s's streamExtra, if it has one, by ref to rather than
// from.
func (sh *shard) moveExtra(s *stream, from, to uint32) {
	if !s.hasExtra {
		return
	}
	x := sh.extra[from]
	delete(sh.extra, from)
	sh.extra[to] = x
}
