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

// Tracker folds packets, in capture order, into connection attempts, ICMP
// events and ARP claims. Give it packets one by one with Add, or a capture
// file's through Feed, and collect with Finish. The capture reader and the
// tcpdump/tshark text readers share it, so a pasted capture and a pcap of
// the same traffic give the same attempts.
//
// Streams follow Wireshark's tcp.stream: a SYN whose sequence number differs
// from the first one seen in its direction starts a new attempt on the same
// 4-tuple; a SYN with the same sequence number is a retransmission.
// Outcomes follow the counting rules in docs/capture.md.
type Tracker struct {
	file, node string
	// shards track the TCP streams, each those whose 4-tuples hash to it;
	// the Tracker settles what they leave on the packets and what they
	// retire, in capture order.
	shards []*shard
	swept  []sweepOut // what each shard's last sweep left
	// recycled holds, per shard, the refs of the streams of its store
	// finalized since the shards were last given them back (giveBack, or a
	// window of pipeline.go).
	recycled [][]uint32

	// The packets' order and clock, kept by prepare.
	packets int       // packets prepared
	now     int64     // latest TCP packet time (noTime before any)
	base    time.Time // tracker times count from it
	baseSet bool
	// baseUnix is base in nanoseconds since 1970, when baseUnixOK: the
	// reading stage's fast path counts tracker times from it.
	baseUnix   int64
	baseUnixOK bool
	// baseYears says base lies in the years captures are stamped in
	// (CaptureYear): a packet stamped outside them is then read without
	// its time.
	baseYears bool
	first     time.Time
	last      time.Time
	// The first and last times of the packets prepared by prepareHot
	// since the last syncTimes, in nanoseconds since 1970.
	hotFirst, hotLast int64
	hotSeen           bool
	curFile           uint32 // in a series, the index of the file being read
	created           int    // streams the shards made, as of the last flushCounts
	// far counts the packets read without their time because it lies
	// too far from base for the tracker's nanoseconds; farPos and
	// farTime are the first's. rebased says base is a later packet's
	// time, the first read without its own (lone, rebase).
	far     int
	farPos  model.Pos
	farTime time.Time
	rebased bool
	lone    lonePacket
	filling *window // the window the reading stage fills, in Feed

	done       [][]model.Attempt     // in chunks, so that growing never copies them all
	build      builder               // builds the attempts
	segs       slab[model.Seg]       // the attempts' segments (build.segs)
	sizeSlab   slab[model.DataSizes] // the attempts' data sizes (build.sizes)
	nDone      int
	doneSeq    []int    // each done attempt's stream creation order
	files      []string // names segments point to in a series; files[0] is ""
	summarize  bool
	hand       *handOn // set when attempts are handed on (Options.EachAttempt)
	lend       bool    // the attempts handed on are lent (Options.LendAttempts)
	keepFailed int     // refused, and unanswered, attempts kept per server when summarizing (Summary.FailedSample)
	series     bool    // packets come from several files: segments name theirs
	// fileOutcomes counts, in a series, the outcomes of the connections
	// whose first packet was in each file, by its index in files.
	fileOutcomes []model.Counts
	stats        map[statKey]*endpointAcc
	lastKey      statKey           // the key of the counters acc returned last,
	lastAcc      *endpointAcc      // those counters
	failKept     map[statKey]int32 // failed attempts kept one by one, per server and per host (port 0)
	synISN       *isnTable         // summary mode: the live stream whose first SYN last had each sequence number
	synKeys      keyStore          // the keys of the streams synISN names, by synSeen.kref
	freeKeys     []uint32          // indices of synKeys free for reuse
	natCopies    map[int]struct{}  // summary mode: the streams, by creation order, noteSYN found to be NAT copies
	statOrder    []statKey
	counts       model.Counts
	icmp         []model.ICMPEvent
	badSums      []model.ChecksumError
	arp          []model.ARPEvent
	askers       map[netip.Addr]netip.Addr // the last host that asked for each address
	arpAnswers   arpAnswers
	// Summary mode's sampling of identical events (as many as keepFailed).
	arpKept  map[arpKey]int
	arpLast  map[arpKey]int
	lastMAC  map[netip.Addr]string // the MAC that last claimed each address
	icmpKept map[icmpKey]int
	icmpLast map[icmpKey]int
}

// NewTracker returns a Tracker whose evidence points into file, set up as
// opts say: opts.Node names the node the packets were captured on ("" when
// unknown), opts.Summary whether and how attempts are summarized.
func NewTracker(file string, opts Options) *Tracker {
	t := &Tracker{file: file, node: opts.Node, now: noTime, files: []string{""},
		summarize: opts.Summary.Enabled, keepFailed: opts.Summary.sample()}
	switch {
	case opts.EachRow != nil:
		t.hand = &handOn{rows: opts.EachRow}
		t.lend = true
	case opts.EachAttempt != nil:
		t.hand = &handOn{each: opts.EachAttempt}
		t.lend = opts.LendAttempts
	}
	t.build = builder{lend: t.lend, segs: &t.segs, sizes: &t.sizeSlab}
	t.SetShards(1)
	return t
}

// SetShards gives t n shards (at most 64), each tracking the TCP streams
// whose 4-tuples hash to it on a goroutine of its own when t is fed by
// Feed. It is called before the first packet. The Result is the same
// whatever their number.
func (t *Tracker) SetShards(n int) {
	n = max(1, min(n, maxShards))
	if len(t.shards) == n {
		return
	}
	t.flushCounts()
	t.shards = make([]*shard, n)
	for i := range t.shards {
		t.shards[i] = newShard(uint8(i), t.summarize)
		t.shards[i].parkAbove = parkBudget / n
		t.shards[i].noteBorn = t.hand != nil
	}
	t.recycled = make([][]uint32, n)
	t.swept = make([]sweepOut, n)
}

// maxShards bounds how many shards a Tracker splits its streams into.
const maxShards = 64

// FailedSample is how many refused, and how many unanswered, attempts to
// one server endpoint a summarizing Tracker keeps one by one before it
// counts the rest.
const FailedSample = 100

// Streams stay in the tracker this long after their last packet, in capture
// time: a closed stream (FIN both ways, or an RST) for TIME-WAIT's two
// minutes, so that late retransmissions still find it; an open one for half
// an hour of silence.
const (
	closedLinger = 2 * time.Minute
	idleLinger   = 30 * time.Minute
	sweepEvery   = 4096 // packets between two sweeps of the activity list
	timeWait     = 60 * time.Second
)

// Times inside the tracker are nanoseconds since the first packet's time
// (pasted text may carry only the time of day), with noTime for a packet
// without one, so that a stream holds no pointers for them and stays
// small: a capture can hold hundreds of thousands of live streams.
const noTime = math.MinInt64

// sub is b's time to a, as time.Time.Sub would give it, saturated at the
// durations' ends (a missing time is earlier than any other).
func sub(a, b int64) time.Duration {
	switch {
	case a == b:
		return 0
	case b == noTime:
		return math.MaxInt64
	case a == noTime:
		return math.MinInt64
	}
	return time.Duration(subNS(a, b))
}

// timeTo is b's time to a when both are known and it is a duration
// (model.Attempt.TimeToSYNACK's rule), and false otherwise.
func timeTo(a, b int64) (time.Duration, bool) {
	if a == noTime || b == noTime {
		return 0, false
	}
	d := subNS(a, b)
	return time.Duration(d), !farNS(d)
}

// time converts a tracker time back.
func (t *Tracker) time(ns int64) time.Time {
	c := t.clock()
	return c.time(ns)
}

// SetNode names the node the packets from now on were captured on.
func (t *Tracker) SetNode(node string) { t.node = node }

// addSweepEvery is how many packets Add takes between two sweeps:
// sweepEvery, but for tests that sweep after every packet.
var addSweepEvery = sweepEvery

// Add folds one packet into the tracker, on the calling goroutine.
// Packets must come in capture order.
func (t *Tracker) Add(p *decode.Packet) {
	var g tcpSeg
	var outers []*model.Tuple
	attemptFrame := 0
	if t.prepare(p, &g, &outers) {
		var m mark
		sh := t.shards[t.shardOf(g.Hash)]
		sh.outers = outers
		added := sh.add(&g, &m)
		sh.outers = nil
		if t.hand != nil && len(sh.born) > 0 {
			t.hand.note(sh.born...)
			sh.born = sh.born[:0]
		}
		if added {
			t.settleMark(&m)
		}
		attemptFrame = g.found
	} else if e := p.ICMP; e != nil && portlessTooBig(e) {
		attemptFrame = t.quotedHosts(e.Quoted)
	}
	t.settle(p, attemptFrame)
	if t.packets%addSweepEvery == 0 {
		t.sweep(t.now, t.swept)
	}
	t.giveBack()
}

// prepare counts p, as the tracker's t.packets-th packet, and keeps the
// capture's clock. For a TCP segment, or
// an ICMP error quoting one, it fills g with what the segment's shard
// needs (its 4-tuple ordered and hashed, its tracker time, its file) and
// reports true; the outer tuple of an overlay's segment goes on outers.
func (t *Tracker) prepare(p *decode.Packet, g *tcpSeg, outers *[]*model.Tuple) bool {
	t.packets++
	ns, far := t.toNS(p.Time)
	if (far || t.lone.n == 1 && !t.baseYears) && t.rebase(p.Time) {
		ns, far = 0, false
	}
	if far {
		t.noteFar(t.pos(p), p.Time)
	} else if !p.Time.IsZero() {
		if t.lone.n < 2 {
			t.noteTimed(t.pos(p), p.Time)
		}
		if t.first.IsZero() || p.Time.Before(t.first) {
			t.first = p.Time
		}
		if t.last.IsZero() || p.Time.After(t.last) {
			t.last = p.Time // text times of day count from year 0, before the zero Time
		}
	}
	tcp := p.Proto == "tcp"
	if tcp && ns > t.now {
		t.now = ns
	}
	if !tcp && (p.ICMP == nil || p.ICMP.QuotedProto != "tcp") {
		return false
	}
	*g = tcpSeg{idx: t.packets, ns: ns, now: t.now, frame: p.Pos.Frame, line: int32(p.Pos.Line)}
	if t.series {
		g.file = t.curFile
		if p.Pos.File != "" {
			g.file = t.fileIndex(p.Pos.File)
		}
	}
	if !tcp {
		k, _ := decode.KeyOf(p.ICMP.Quoted.Src, p.ICMP.Quoted.Dst)
		g.SetKey(k, false)
		g.lookup = true
		return true
	}
	g.Set(p)
	if p.Outer != nil {
		*outers = append(*outers, p.Outer)
		g.outer = int32(len(*outers))
	}
	return true
}

// hotTimes reports whether prepareHot can count tracker times: from a
// base held in nanoseconds since 1970, or from the first packet.
func (t *Tracker) hotTimes() bool {
	return t.baseUnixOK || !t.baseSet
}

// prepareHot is prepare for a TCP segment that decode.HotTCP read
// straight from frame, at unix nanoseconds since 1970; hotTimes must hold.
func (t *Tracker) prepareHot(g *tcpSeg, frame int, unix int64) {
	t.packets++
	if !t.baseSet {
		t.base, t.baseSet = time.Unix(0, unix).UTC(), true
		t.baseUnix, t.baseUnixOK, t.baseYears = unix, true, unixInYears(unix)
	}
	ns := subNS(unix, t.baseUnix)
	if out := farNS(ns) || t.baseYears && !unixInYears(unix) && strayNS(ns); out || t.lone.n == 1 && !t.baseYears {
		switch tm := time.Unix(0, unix).UTC(); {
		case t.rebase(tm):
			ns = 0
		case out:
			ns = noTime
			t.noteFar(model.Pos{File: t.file, Frame: frame}, tm)
		}
	}
	if ns != noTime {
		if t.lone.n < 2 {
			t.noteTimed(model.Pos{File: t.file, Frame: frame}, time.Unix(0, unix).UTC())
		}
		switch {
		case !t.hotSeen:
			t.hotFirst, t.hotLast, t.hotSeen = unix, unix, true
		case unix < t.hotFirst:
			t.hotFirst = unix
		case unix > t.hotLast:
			t.hotLast = unix
		}
	}
	if ns > t.now {
		t.now = ns
	}
	g.idx, g.ns, g.now = t.packets, ns, t.now
	g.frame, g.line, g.file = frame, 0, t.curFile
	g.lookup, g.outer, g.found = false, 0, 0
}

// syncTimes folds the times prepareHot saw into t.first and t.last.
func (t *Tracker) syncTimes() {
	if !t.hotSeen {
		return
	}
	first, last := time.Unix(0, t.hotFirst).UTC(), time.Unix(0, t.hotLast).UTC()
	if t.first.IsZero() || first.Before(t.first) {
		t.first = first
	}
	if t.last.IsZero() || last.After(t.last) {
		t.last = last
	}
	t.hotSeen = false
}

// subNS is a-b, saturated as time.Time.Sub saturates.
func subNS(a, b int64) int64 {
	d := a - b
	if (b > 0 && d > a) || (b < 0 && d < a) {
		if a > b {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}

// shardOf returns the shard that tracks the 4-tuple whose hash is h: the
// hash's high bits pick it, and its low bits the slot in the shard's
// table.
func (t *Tracker) shardOf(h uint32) int {
	return int(uint64(h) * uint64(len(t.shards)) >> 32)
}

// sweep retires, in every shard, the streams closed or idle long enough
// at time now, into swept, and finalizes them; closed streams quiet for
// parkAfter are parked.
func (t *Tracker) sweep(now int64, swept []sweepOut) {
	for i, sh := range t.shards {
		sh.sweep(now, t.packets, &swept[i])
	}
	t.settleSwept(swept)
}

// flushCounts moves the shards' counts into t.counts.
func (t *Tracker) flushCounts() {
	t.syncTimes()
	c := &t.counts
	c.Packets = t.packets
	for _, sh := range t.shards {
		for f, n := range sh.flags {
			c.TCPPackets += n
			switch uint8(f) & (decode.SYN | decode.ACK) {
			case decode.SYN:
				c.SYNOnly += n
			case decode.SYN | decode.ACK:
				c.SYNACK += n
			}
			if uint8(f)&decode.RST != 0 {
				c.RST += n
			}
		}
		c.SYNRetx += sh.counts.SYNRetx
		t.created += sh.created
		sh.counts, sh.flags, sh.created = model.Counts{}, [256]int{}, 0
	}
	c.TCPStreams = t.created
}

// pos returns the packet's position in the tracker's file.
func (t *Tracker) pos(p *decode.Packet) model.Pos {
	pos := p.Pos
	if pos.File == "" {
		pos.File = t.file
	}
	return pos
}

// Finish returns everything folded so far: the attempts in the order their
// first packets were seen, the ICMP events and ARP claims, the counts, and,
// when summarizing, the per-server counters of the attempts folded.
func (t *Tracker) Finish() *Result {
	// No SYN comes after the last packet: the sequence numbers noteSYN
	// keeps are let go whole rather than stream by stream.
	t.synISN, t.freeKeys = nil, nil
	t.synKeys.release()
	t.gatherDone()
	t.finishStreams()
	t.flushCounts()
	t.recycled = nil
	for _, sh := range t.shards {
		sh.free = nil
		sh.store.release()
		sh.park.release()
	}
	t.arpAnswers.finish(t.arp, t.last)
	res := &Result{ICMP: t.icmp, ARP: t.arp, BadChecksums: t.badSums}
	if t.hand != nil {
		t.hand.release() // every stream is finalized: nothing waits
		t.hand = nil
	}
	// One slice mostly filled (gatherDone's) is the Result's as it is;
	// chunks are let go as they are copied, so that the attempts are not
	// held twice.
	if len(t.done) == 1 && 4*len(t.done[0]) >= 3*cap(t.done[0]) {
		res.Attempts = t.done[0]
	} else {
		res.Attempts = t.joinDone(0)
	}
	if !slices.IsSorted(t.doneSeq) {
		// Streams finalized out of creation order (closed ones before
		// older idle ones): put the attempts back in capture order.
		sortBySeq(res.Attempts, t.doneSeq)
	}
	t.done, t.doneSeq, t.nDone = nil, nil, 0
	c := &t.counts
	c.TCPStreams = t.created
	for _, k := range t.statOrder {
		if acc := t.stats[k]; acc.st.Attempts > 0 {
			res.Endpoints = append(res.Endpoints, acc.stats())
		}
	}
	res.Info = model.CaptureInfo{Node: t.node, File: t.file, Packets: c.Packets, First: t.first, Last: t.last, Counts: *c}
	return res
}

// gatherDone puts the attempts finalized so far in one slice, with room
// for one more per stream still live unless attempts are summarized, for
// finishStreams to add theirs: the attempts of the streams live at the end
// (all of a capture's, when its connections overlap) then go straight
// where the Result holds them, rather than into chunks copied after.
func (t *Tracker) gatherDone() {
	live := 0
	if !t.summarize && t.hand == nil {
		for _, sh := range t.shards {
			live += sh.streams.len()
		}
	}
	if live == 0 && len(t.done) <= 1 {
		return
	}
	all := t.joinDone(live)
	t.done = append(t.done[:0], all)
}

// joinDone returns the attempts finalized so far in one slice with room
// for extra more, letting go of each chunk as it is copied.
func (t *Tracker) joinDone(extra int) []model.Attempt {
	all := make([]model.Attempt, 0, t.nDone+extra)
	for i := range t.done {
		all = append(all, t.done[i]...)
		t.done[i] = nil
	}
	return all
}

// slab hands out the small values of the attempts a Tracker builds (their
// segments, their data sizes) from arrays allocated together, where
// allocating each would cost an allocation apiece, several an attempt.
// What it hands out keeps its array alive: the Tracker's attempts are
// kept together, in its Result. A Tracker that lends its attempts hands
// the same values out again for each (reuse), and an endFeed for each of
// its batches.
type slab[T any] struct {
	free []T
	cur  []T // the array free is cut from
	used int // the values handed out since the last reuse
}

// slabLen is how many values a slab's arrays hold, at least.
const slabLen = 1024

// take returns n values, in a slice of capacity n: appending to it does
// not write over the next values handed out. They are zero, or, after
// reuse, as they were left: whoever takes them writes each whole.
func (s *slab[T]) take(n int) []T {
	if len(s.free) < n {
		s.cur = make([]T, max(n, slabLen))
		s.free = s.cur
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	s.used += n
	return out
}

// reuse makes take hand out the values of its last array again: nothing
// reads those it handed out any longer. They are not zeroed, since each
// is written whole when it is taken again; until then they keep alive
// what they point to (file names, a few retransmissions), at most an
// array's worth. When they took more than one array, the next is one
// that holds them all, so that going round again allocates nothing.
func (s *slab[T]) reuse() {
	if s.used > len(s.cur) {
		s.cur = make([]T, s.used+s.used/4)
	}
	s.free, s.used = s.cur, 0
}

// sortBySeq puts the attempts a in the order of seq, their streams'
// creation order, moving each attempt once: the orders are sorted, then
// the attempts follow the permutation's cycles. (Sorting the attempts
// themselves would move their 400 bytes O(n log n) times.)
func sortBySeq(a []model.Attempt, seq []int) {
	type at struct {
		seq int
		i   int // the index in a of the attempt that goes here
	}
	order := make([]at, len(a))
	for i := range order {
		order[i] = at{seq[i], i}
	}
	slices.SortFunc(order, func(x, y at) int {
		if c := cmp.Compare(x.seq, y.seq); c != 0 {
			return c
		}
		return cmp.Compare(x.i, y.i)
	})
	for k := range order {
		if order[k].i == k {
			continue
		}
		tmp := a[k]
		j := k
		for {
			src := order[j].i
			order[j].i = j // moved
			if src == k {
				a[j] = tmp
				break
			}
			a[j] = a[src]
			j = src
		}
	}
	for i := range order {
		seq[i] = order[i].seq
	}
}
