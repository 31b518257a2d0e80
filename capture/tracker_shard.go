package capture

import (
	"time"

	"github.com/netmortem/netmortem/model"
)

// shard tracks the TCP streams whose 4-tuples hash to it (Tracker.shardOf).
// A Tracker has one shard per core when it reads a capture, one goroutine
// each, and folds what they finish in one deterministic order, so that its
// Result does not depend on how many shards there were.
type shard struct {
	streams streamTable
	// lists holds the live streams, open ones (listOpen) and closed ones
	// (listClosed) apart, each least recently active first, so that streams
	// long closed or idle are finalized as the capture goes and memory
	// follows the live connections: a closed stream never waits behind an
	// open one that lingers longer. Both are in the order of the streams'
	// last packets, in every shard as in the whole capture.
	lists     [2]activity
	counts    model.Counts // the TCP counts: segments, SYNs, SYN/ACKs, RSTs, retransmitted SYNs
	free      []*stream    // finalized streams given back by the Tracker, for new ones
	slab      slab[stream] // where new streams come from
	dataSlab  slab[dataSizes]
	created   int
	summarize bool
}

func newShard(summarize bool) *shard {
	return &shard{summarize: summarize}
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
	if s := sh.streams.get(&g.key, g.hash); s != nil {
		s.icmp = true
		g.found = s.first.frame
		if g.found == 0 {
			g.found = int(s.first.line)
		}
	}
	return false
}

// fold folds a window's segments at the indices own into the shard,
// appending what they leave to settle to marks.
func (sh *shard) fold(segs []tcpSeg, own []int32, marks []mark) []mark {
	var m mark
	for _, j := range own {
		if sh.add(&segs[j], &m) {
			marks = append(marks, m)
		}
	}
	return marks
}

// alloc returns a stream to fill: a recycled one when there is one.
func (sh *shard) alloc() *stream {
	if n := len(sh.free); n > 0 {
		s := sh.free[n-1]
		sh.free[n-1] = nil
		sh.free = sh.free[:n-1]
		return s
	}
	return sh.slab.alloc()
}

// activity is a list of live streams, least recently active first.
type activity struct{ head, tail *stream }

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
	if l.tail == s {
		return
	}
	sh.unlink(s)
	s.list = want
	s.prev, s.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = s
	} else {
		l.head = s
	}
	l.tail = s
}

func (sh *shard) unlink(s *stream) {
	if s.list == listNone {
		return
	}
	l := &sh.lists[s.list-1]
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		l.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		l.tail = s.prev
	}
	s.prev, s.next, s.list = nil, nil, listNone
}

// retire takes s out of the shard: the Tracker finalizes it.
func (sh *shard) retire(s *stream) {
	sh.unlink(s)
	sh.streams.remove(s, s.hash)
}

// sweep retires the streams at the heads of the activity lists that have
// been closed or idle long enough at time now, and appends them to out,
// each list's in its order.
func (sh *shard) sweep(now int64, out *[2][]*stream) {
	for i, linger := range [2]time.Duration{idleLinger, closedLinger} {
		l := &sh.lists[i]
		for s := l.head; s != nil && sub(now, s.lastNow) > linger; s = l.head {
			sh.retire(s)
			out[i] = append(out[i], s)
		}
	}
}
