package capture

import (
	"math"
	"math/bits"
	"net/netip"
	"slices"
	"sort"
	"time"

	"github.com/netmortem/netmortem/model"
)

// maxSegs bounds how many SYN, SYN/ACK and RST segments an attempt keeps
// frame by frame; counts go on past it.
const maxSegs = 32

// Tracker folds packets, in capture order, into connection attempts, ICMP
// events and ARP claims. Feed it with Add and collect with Finish. The
// capture reader and the tcpdump/tshark text readers share it, so a pasted
// capture and a pcap of the same traffic give the same attempts.
//
// Streams follow Wireshark's tcp.stream: a SYN whose sequence number differs
// from the first one seen in its direction starts a new attempt on the same
// 4-tuple; a SYN with the same sequence number is a retransmission.
// Outcomes follow the counting rules in docs/capture.md.
type Tracker struct {
	file, node string
	streams    map[tupleKey]*stream
	// lists holds the live streams, open ones (listOpen) and closed ones
	// (listClosed) apart, each least recently active first, so that streams
	// long closed or idle are finalized as the capture goes and memory
	// follows the live connections: a closed stream never waits behind an
	// open one that lingers longer.
	lists      [2]activity
	done       [][]model.Attempt // in chunks, so that growing never copies them all
	nDone      int
	doneSeq    []int // each done attempt's stream creation order
	created    int
	now        int64     // latest packet time (noTime before any)
	base       time.Time // tracker times count from it
	baseSet    bool
	files      []string // names segments point to in a series; files[0] is ""
	summarize  bool
	keepFailed int // refused, and unanswered, attempts kept per server when summarizing
	finishing  bool
	series     bool // packets come from several files: segments name theirs
	stats      map[statKey]*endpointAcc
	failKept   map[statKey]int32 // failed attempts kept one by one, per server and per host (port 0)
	statOrder  []statKey
	counts     model.Counts
	icmp       []model.ICMPEvent
	arp        []model.ARPEvent
	askers     map[netip.Addr]netip.Addr // the last host that asked for each address
	arpAnswers arpAnswers
	// Summary mode's sampling of identical events (as many as keepFailed).
	arpKept  map[arpKey]int
	arpLast  map[arpKey]int
	lastMAC  map[netip.Addr]string // the MAC that last claimed each address
	icmpKept map[icmpKey]int
	icmpLast map[icmpKey]int
	first    time.Time
	last     time.Time
}

// NewTracker returns a Tracker whose evidence points into file; node names
// the node the packets were captured on ("" when unknown).
func NewTracker(file, node string) *Tracker {
	return &Tracker{file: file, node: node, streams: make(map[tupleKey]*stream), now: noTime, files: []string{""},
		keepFailed: FailedSample}
}

// Summarize makes the tracker fold attempts into per-server counters
// (Result.Endpoints) instead of returning each of them, so that memory
// follows the live connections, not the capture's size: established
// attempts that ended normally (Zeek SF, S1, S2, S3) all, and refused and
// unanswered ones (REJ, S0) beyond the first FailedSample (see KeepFailed)
// to each server endpoint, or beyond ten times that to each host, all its
// ports together, which are kept one by one as evidence. The ports of a
// host first tried once its sample is full (a scan) are counted per host
// (a server port of 0, with the ports listed). Attempts an ICMP error
// answers, attempts inside an overlay and every other outcome are always
// kept.
func (t *Tracker) Summarize(on bool) { t.summarize = on }

// KeepFailed sets how many refused, and how many unanswered, attempts to
// one server endpoint a summarizing tracker keeps one by one (FailedSample
// unless set; 0 keeps none but those an ICMP error answers).
func (t *Tracker) KeepFailed(n int) { t.keepFailed = max(n, 0) }

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

// tupleKey identifies a 4-tuple whatever its direction. It holds no
// pointers, so the stream map costs the garbage collector nothing to scan
// but its values.
type tupleKey struct {
	lo, hi         [16]byte
	loPort, hiPort uint16
	v4             bool
}

func keyOf(a, b netip.AddrPort) tupleKey {
	k, _ := orderedKey(a, b)
	return k
}

// orderedKey is keyOf that also tells whether a is the key's hi end.
func orderedKey(a, b netip.AddrPort) (k tupleKey, swapped bool) {
	if a.Compare(b) > 0 {
		a, b, swapped = b, a, true
	}
	return tupleKey{lo: a.Addr().As16(), hi: b.Addr().As16(), loPort: a.Port(), hiPort: b.Port(), v4: a.Addr().Is4()}, swapped
}

// end returns the key's lo (0) or hi (1) end as an address and port.
func (k *tupleKey) end(i int) netip.AddrPort {
	b, port := k.lo, k.loPort
	if i == 1 {
		b, port = k.hi, k.hiPort
	}
	addr := netip.AddrFrom16(b)
	if k.v4 {
		addr = addr.Unmap()
	}
	return netip.AddrPortFrom(addr, port)
}

// Times inside the tracker are nanoseconds since the first packet's time
// (pasted text may carry only the time of day), with noTime for a packet
// without one, so that a stream holds no pointers for them and stays
// small: a capture can hold hundreds of thousands of live streams.
const noTime = math.MinInt64

func (t *Tracker) toNS(tm time.Time) int64 {
	if tm.IsZero() {
		return noTime
	}
	if !t.baseSet {
		t.base, t.baseSet = tm, true
	}
	return int64(tm.Sub(t.base))
}

// sub is b's time to a, as time.Time.Sub would give it (a missing time is
// earlier than any other).
func sub(a, b int64) time.Duration {
	switch {
	case a == b:
		return 0
	case b == noTime:
		return math.MaxInt64
	case a == noTime:
		return math.MinInt64
	}
	return time.Duration(a - b)
}

// time converts a tracker time back.
func (t *Tracker) time(ns int64) time.Time {
	if ns == noTime {
		return time.Time{}
	}
	return t.base.Add(time.Duration(ns))
}

// seg is a model.Seg as the tracker keeps it.
type seg struct {
	ns    int64
	frame int
	line  int32
	// file holds the index in Tracker.files (0 for the tracker's own
	// file) in its low fileBits, and in its top bits, for the segments of
	// stream.segs, the kind (seg*) and direction of the segment.
	file uint32
}

const (
	fileBits = 28
	fileMask = 1<<fileBits - 1
)

// Kinds of the segments a stream lists.
const (
	segSYN = iota
	segSYNACK
	segRST
)

func (g seg) tag() uint32 { return g.file >> fileBits }

func (t *Tracker) modelSeg(g seg) model.Seg {
	return model.Seg{Frame: g.frame, Line: int(g.line), Time: t.time(g.ns), File: t.files[g.file&fileMask]}
}

// addSeg lists g as a segment of the kind sent in direction dir, unless
// maxSegs of them are listed already (n counts them, g included).
func (s *stream) addSeg(kind, dir int, n int32, g seg) {
	if n > maxSegs {
		return
	}
	if s.segs == nil {
		s.segs = make([]seg, 0, 2) // a SYN and its SYN/ACK, or its RST
	}
	g.file |= uint32(kind<<1|dir) << fileBits
	s.segs = append(s.segs, g)
}

// synRetx returns how many times the client's first SYN was retransmitted,
// leaving out copies seen on another interface (model.IsSegmentCopy);
// beyond the SYNs listed, every one counts.
func (s *stream) synRetx(cd int) int {
	tag := uint32(segSYN<<1 | cd)
	n, listed := 0, 0
	prev := int64(0)
	for _, g := range s.segs {
		if g.tag() != tag {
			continue
		}
		if listed > 0 && (g.ns-prev >= int64(model.MinSYNRetransmission) || g.ns == noTime || prev == noTime) {
			n++
		}
		prev = g.ns
		listed++
	}
	if extra := int(s.nSYN[cd]) - listed; extra > 0 {
		n += extra
	}
	return n
}

// firstSeg returns the first segment of the kind sent in direction dir.
func (s *stream) firstSeg(kind, dir int) (seg, bool) {
	tag := uint32(kind<<1 | dir)
	for _, g := range s.segs {
		if g.tag() == tag {
			return g, true
		}
	}
	return seg{}, false
}

// modelSegs returns the segments of the kind sent in direction dir, nil
// when there are none.
func (t *Tracker) modelSegs(s *stream, kind, dir int) []model.Seg {
	tag := uint32(kind<<1 | dir)
	var out []model.Seg
	for _, g := range s.segs {
		if g.tag() == tag {
			out = append(out, t.modelSeg(g))
		}
	}
	return out
}

// Reuse of a 4-tuple, as Attempt.Reused names it.
const (
	reuseNone uint8 = iota
	reuseOpen
	reuseClosed
	reuseTimeWait
)

var reuseNames = [...]string{"", "open", "closed", "time-wait"}

// stream is the tracking state of one attempt. Directions are indexed from
// the first packet seen: 0 is its sender.
type stream struct {
	// Fields are ordered by size, largest first, so that a stream packs
	// into as few bytes as it can.
	prev, next *stream // the tracker's activity list
	seq        int     // creation order: attempts are returned in it
	outer      *model.Tuple
	segs       []seg // SYN, SYN/ACK and RST segments, tagged with kind and direction
	first      seg
	fin        [2]seg // frame and line 0 until seen
	firstAck   seg
	last       int64
	packets    int
	bytes      [2]int64

	// Wireshark's sequence analysis, enough to tell a retransmitted SYN
	// from an out-of-order one.
	nextTime [2]int64
	mruSYN   int64 // noTime until a SYN
	firstRTT time.Duration
	nextSeq  [2]uint32

	base     [2]uint32
	synISN   [2]uint32
	nSYN     [2]int32
	nSYNACK  [2]int32
	nRST     [2]int32
	cliRST   [2]int32 // RSTs counted once the client is known, as the truth files count them
	histSeen uint32

	key     tupleKey
	history [12]byte // each letter at most once per side
	nHist   uint8

	// Counting-rule state (see docs/capture.md).
	cliDir    int8 // direction of the first SYN-only packet, -1 if none
	satoDir   int8 // destination direction of a SYN/ACK seen before any SYN, -1 if none
	gotSA     bool
	cFirst    uint8 // client's first packet after the SYN/ACK: 0 none, 1 ack, 2 rst
	sFirstRST bool
	srvOther  bool
	cliAck    bool

	aHi     bool  // the first packet's source is the key's hi end
	list    uint8 // list*: the activity list s is on
	reused  uint8 // reuse*
	baseSet [2]bool
	synSeen [2]bool
	nextSet [2]bool
	rttSet  bool
	finSeen [2]bool
	ackSeen bool
	icmp    bool // an ICMP error quotes the stream
}

// Add folds one packet into the tracker. Packets must come in capture order.
func (t *Tracker) Add(p *Packet) {
	t.counts.Packets++
	if !p.Time.IsZero() {
		if t.first.IsZero() || p.Time.Before(t.first) {
			t.first = p.Time
		}
		if t.last.IsZero() || p.Time.After(t.last) {
			t.last = p.Time // text times of day count from year 0, before the zero Time
		}
	}
	switch {
	case p.ICMP != nil:
		t.addICMP(p)
	case p.ARP != nil:
		t.addARP(p)
	}
	if p.Proto == "arp" {
		t.counts.ARP++
		if p.GratuitousARP {
			t.counts.ARPGratuitous++
		}
	}
	if p.Proto == "tcp" {
		t.addTCP(p)
	}
	if t.counts.Packets%sweepEvery == 0 {
		t.sweep()
	}
}

// activity is a list of live streams, least recently active first.
type activity struct{ head, tail *stream }

const (
	listNone   = iota // not listed
	listOpen          // lingers idleLinger after its last packet
	listClosed        // FIN both ways or an RST: lingers closedLinger
)

// closed tells whether s has seen FIN both ways or an RST.
func (s *stream) closed() bool {
	return (s.finSeen[0] && s.finSeen[1]) || s.nRST[0]+s.nRST[1] > 0
}

// touch moves s to the tail of the list its state puts it on.
func (t *Tracker) touch(s *stream) {
	want := uint8(listOpen)
	if s.closed() {
		want = listClosed
	}
	l := &t.lists[want-1]
	if l.tail == s {
		return
	}
	t.unlink(s)
	s.list = want
	s.prev, s.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = s
	} else {
		l.head = s
	}
	l.tail = s
}

func (t *Tracker) unlink(s *stream) {
	if s.list == listNone {
		return
	}
	l := &t.lists[s.list-1]
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

// sweep finalizes the streams at the heads of the activity lists that
// have been closed or idle long enough.
func (t *Tracker) sweep() {
	for i, linger := range [2]time.Duration{idleLinger, closedLinger} {
		l := &t.lists[i]
		for s := l.head; s != nil && sub(t.now, s.last) > linger; s = l.head {
			t.finalize(s)
		}
	}
}

// finalize turns s into an attempt (or folds it into its endpoint's
// counters) and forgets it.
func (t *Tracker) finalize(s *stream) {
	t.unlink(s)
	if !t.finishing && t.streams[s.key] == s {
		delete(t.streams, s.key)
	}
	outcome := s.outcome()
	c := &t.counts
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
	if t.summarize && s.outer == nil {
		// Folded straight from the stream: no attempt is built for it.
		switch outcome {
		case model.OutcomeEstablished:
			switch s.connState(s.clientDir()) {
			case "SF", "S1", "S2", "S3":
				t.fold(s, outcome)
				return
			}
		case model.OutcomeRefused, model.OutcomeUnanswered:
			if !s.icmp {
				server := s.end(1 - s.clientDir())
				ek := statKey{server, outcome}
				hk := statKey{netip.AddrPortFrom(server.Addr(), 0), outcome} // all the host's ports
				if t.failKept == nil {
					t.failKept = map[statKey]int32{}
				}
				hostFull := int(t.failKept[hk]) >= hostSampleFactor*t.keepFailed
				switch {
				case hostFull && t.failKept[ek] == 0:
					// A port first seen once the host's sample is full
					// (a scan): counted with the host's other such ports.
					t.foldInto(t.acc(hk.server, outcome), s)
					return
				case hostFull || int(t.failKept[ek]) >= t.keepFailed:
					t.foldInto(t.acc(server, outcome), s)
					return
				}
				t.failKept[ek]++
				t.failKept[hk]++
			}
		}
	}
	a := t.attempt(s)
	if n := len(t.done); n == 0 || len(t.done[n-1]) == cap(t.done[n-1]) {
		t.done = append(t.done, make([]model.Attempt, 0, doneChunk))
	}
	last := &t.done[len(t.done)-1]
	*last = append(*last, a)
	t.nDone++
	t.doneSeq = append(t.doneSeq, s.seq)
}

// doneChunk is how many finalized attempts are kept per chunk.
const doneChunk = 4096

// pos returns the packet's position in the tracker's file.
func (t *Tracker) pos(p *Packet) model.Pos {
	pos := p.Pos
	if pos.File == "" {
		pos.File = t.file
	}
	return pos
}

func (t *Tracker) seg(p *Packet, ns int64) seg {
	sg := seg{ns: ns, frame: p.Pos.Frame, line: int32(p.Pos.Line)}
	if t.series {
		sg.file = t.fileIndex(t.pos(p).File)
	}
	return sg
}

// fileIndex returns name's index in t.files, adding it when new. A series
// has a handful of files, the last one the most asked for.
func (t *Tracker) fileIndex(name string) uint32 {
	for i := len(t.files) - 1; i > 0; i-- {
		if t.files[i] == name {
			return uint32(i)
		}
	}
	if len(t.files) > fileMask {
		// 2^28 files in one series: more than any run opens.
		return fileMask
	}
	t.files = append(t.files, name)
	return uint32(len(t.files) - 1)
}

func (t *Tracker) addICMP(p *Packet) {
	ev := *p.ICMP
	ev.Node, ev.Pos, ev.Time = t.node, t.pos(p), p.Time
	switch {
	case !ev.V6 && ev.Type == 3:
		t.counts.ICMPUnreach++
	case !ev.V6 && ev.Type == 5:
		t.counts.ICMPRedirect++
	case ev.V6 && ev.Type == 1:
		t.counts.ICMP6Unreach++
	case ev.V6 && ev.Type == 137:
		t.counts.ICMP6Redirect++
	}
	if ev.QuotedProto == "tcp" {
		if s := t.streams[keyOf(ev.Quoted.Src, ev.Quoted.Dst)]; s != nil {
			s.icmp = true
			ev.AttemptFrame = s.first.frame
			if ev.AttemptFrame == 0 {
				ev.AttemptFrame = int(s.first.line)
			}
		}
	}
	if n := len(t.icmp); n > 0 {
		prev := t.icmp[n-1]
		ev.Copy = isCopy(prev.Time, ev.Time) && prev.From == ev.From && prev.To == ev.To && prev.Type == ev.Type &&
			prev.Code == ev.Code && prev.Quoted == ev.Quoted && prev.QuotedProto == ev.QuotedProto
	}
	if t.summarize {
		k := icmpKey{ev.From, ev.To, ev.Type, ev.Code, ev.Quoted.Dst, ev.QuotedProto, ev.V6, ev.Copy, netip.AddrPort{}}
		if ev.QuotedProto == "tcp" {
			k.src = ev.Quoted.Src // each attempt's errors apart: the rules cite the attempts they answer
		}
		if last, ok := t.icmpLast[k]; ok && t.icmpKept[k] >= t.keepFailed {
			t.icmp[last].Repeats++
			return
		}
		if t.icmpKept == nil {
			t.icmpKept, t.icmpLast = map[icmpKey]int{}, map[icmpKey]int{}
		}
		t.icmpKept[k]++
		t.icmpLast[k] = len(t.icmp)
	}
	t.icmp = append(t.icmp, ev)
}

func (t *Tracker) addARP(p *Packet) {
	ev := *p.ARP
	ev.Node, ev.Pos, ev.Time = t.node, t.pos(p), p.Time
	// tcpdump's text of a reply ("Reply X is-at MAC") does not name whom
	// it answers: the last host that asked for X.
	switch {
	case ev.Op == "request" && !ev.Gratuitous && ev.Target.IsValid():
		if t.askers == nil {
			t.askers = map[netip.Addr]netip.Addr{}
		}
		t.askers[ev.Target] = ev.IP
	case ev.Op == "reply" && !ev.Target.IsValid():
		ev.Target = t.askers[ev.IP]
	}
	if ev.Gratuitous && (ev.Op == "request" || ev.Op == "reply") {
		t.counts.ARPGratuitous++
	}
	if n := len(t.arp); n > 0 {
		prev := t.arp[n-1]
		ev.Copy = isCopy(prev.Time, ev.Time) && prev.Op == ev.Op && prev.IP == ev.IP && prev.MAC == ev.MAC &&
			prev.Target == ev.Target && prev.Gratuitous == ev.Gratuitous
	}
	t.arpAnswers.claim(t.arp, ev.IP, ev.Time)
	if t.summarize {
		k := arpKey{ev.Op, ev.IP, ev.Target, ev.MAC, ev.Gratuitous, ev.Copy}
		changes := ev.MAC != "" && t.lastMAC[ev.IP] != ev.MAC
		if last, ok := t.arpLast[k]; ok && !changes && t.arpKept[k] >= t.keepFailed {
			t.arp[last].Repeats++
			t.arp[last].LastRepeat = ev.Time
			return
		}
		if t.arpKept == nil {
			t.arpKept, t.arpLast, t.lastMAC = map[arpKey]int{}, map[arpKey]int{}, map[netip.Addr]string{}
		}
		t.arpKept[k]++
		t.arpLast[k] = len(t.arp)
		if ev.MAC != "" {
			t.lastMAC[ev.IP] = ev.MAC
		}
	}
	t.arp = append(t.arp, ev)
	t.arpAnswers.ask(t.arp, len(t.arp)-1)
}

// isCopy reports whether an event at t, identical to one at prev, is that
// packet seen again on another interface (model.CopyWindow).
func isCopy(prev, t time.Time) bool {
	if prev.IsZero() || t.IsZero() {
		return false
	}
	d := t.Sub(prev)
	return d >= 0 && d < model.CopyWindow
}

func (t *Tracker) addTCP(p *Packet) {
	c := &t.counts
	c.TCPPackets++
	syn, ack, rst, fin := p.Flags&SYN != 0, p.Flags&ACK != 0, p.Flags&RST != 0, p.Flags&FIN != 0
	synOnly := syn && !ack
	switch {
	case synOnly:
		c.SYNOnly++
	case syn && ack:
		c.SYNACK++
	}
	if rst {
		c.RST++
	}

	pns := t.toNS(p.Time)
	k, srcHi := orderedKey(p.Src, p.Dst)
	s := t.streams[k]
	dir := 0
	if s != nil {
		if srcHi != s.aHi {
			dir = 1
		}
		// Wireshark: a SYN with a new sequence number reuses the ports
		// for a new conversation.
		if synOnly && s.baseSet[dir] && p.Seq != s.base[dir] {
			s = nil
		}
	}
	if s == nil {
		reused := reuseNone
		if old := t.streams[k]; old != nil {
			reused = reuseOpen
			if old.closed() {
				reused = reuseClosed
				if sub(pns, old.last) < timeWait {
					reused = reuseTimeWait
				}
			}
			t.finalize(old) // the tuple is reused: the old attempt is over
		}
		s = &stream{seq: t.created, key: k, aHi: srcHi, outer: p.Outer, first: t.seg(p, pns), mruSYN: noTime, cliDir: -1, satoDir: -1, reused: reused}
		t.streams[k] = s
		t.created++
		dir = 0
	}
	if pns > t.now {
		t.now = pns
	}
	od := 1 - dir
	sg := t.seg(p, pns)
	s.packets++
	s.last = pns
	if !s.baseSet[dir] {
		s.baseSet[dir], s.base[dir] = true, p.Seq
		if !syn {
			s.base[dir] = p.Seq - 1
		}
	}
	if p.Payload > 0 {
		s.bytes[dir] += int64(p.Payload)
	}

	if synOnly {
		if s.cliDir < 0 {
			s.cliDir = int8(dir)
			if s.satoDir == int8(dir) {
				s.gotSA = true
			}
		}
		if !p.Short && s.retransmitted(dir, p, pns) {
			c.SYNRetx++
		}
		s.synSeen[dir], s.synISN[dir] = true, p.Seq
		s.mruSYN = pns
		s.nSYN[dir]++
		s.addSeg(segSYN, dir, s.nSYN[dir], sg)
	}
	if syn && ack {
		if s.cliDir < 0 && s.satoDir < 0 {
			s.satoDir = int8(od)
		}
		if s.cliDir >= 0 && dir != int(s.cliDir) {
			s.gotSA = true
		}
		s.nSYNACK[dir]++
		s.addSeg(segSYNACK, dir, s.nSYNACK[dir], sg)
	}
	if rst {
		s.nRST[dir]++
		s.addSeg(segRST, dir, s.nRST[dir], sg)
		if s.cliDir >= 0 {
			s.cliRST[dir]++
		}
		if s.cliDir >= 0 && s.gotSA && s.cFirst == 0 {
			if dir == int(s.cliDir) {
				s.cFirst = 2
			} else {
				s.sFirstRST = true
			}
		}
	}
	if p.Flags&(SYN|ACK) == ACK && s.mruSYN != noTime && !s.rttSet {
		s.firstRTT, s.rttSet = sub(pns, s.mruSYN), true
	}
	if !rst && !p.Short {
		nxt := p.Seq + uint32(p.Payload)
		if syn || fin {
			nxt++
		}
		if !s.nextSet[dir] || int32(nxt-s.nextSeq[dir]) > 0 {
			s.nextSeq[dir], s.nextSet[dir], s.nextTime[dir] = nxt, true, pns
		}
	}
	if fin && !s.finSeen[dir] {
		s.fin[dir], s.finSeen[dir] = sg, true
	}
	if s.cliDir >= 0 {
		fromCli := dir == int(s.cliDir)
		if fromCli && s.gotSA && ack && !syn && !rst && s.cFirst == 0 {
			s.cFirst = 1
			s.firstAck, s.ackSeen = sg, true
		}
		if fromCli && ack && !syn && !rst {
			s.cliAck = true
		}
		if !fromCli && !(syn && ack) && !rst {
			s.srvOther = true
		}
	}
	s.addHistory(dir, p)
	t.touch(s)
}

// retransmitted tells whether a SYN repeats one already sent in its
// direction, as Wireshark's tcp.analysis.retransmission does: its sequence
// number does not advance the direction's next expected one, and it is not
// an out-of-order segment (one arriving within a round trip of the segment
// that advanced it, 3 ms before the first round trip is known).
func (s *stream) retransmitted(dir int, p *Packet, pns int64) bool {
	if !s.nextSet[dir] || int32(p.Seq-s.nextSeq[dir]) >= 0 {
		return false
	}
	thres := 3 * time.Millisecond
	if s.rttSet {
		thres = s.firstRTT
	}
	if sub(pns, s.nextTime[dir]) < thres && s.nextSeq[dir] != p.Seq+1 {
		return false // out of order
	}
	return true
}

// History letters, as Zeek writes them for the originator; the responder's
// are lower case.
const (
	hSYN = iota
	hSYNACK
	hACK
	hData
	hFIN
	hRST
)

// addHistory records Zeek-style history letters by direction of the first
// packet; they are re-cased for the originator when the attempt is built.
func (s *stream) addHistory(dir int, p *Packet) {
	var buf [4]int
	ev := buf[:0]
	switch {
	case p.Flags&(SYN|ACK) == SYN:
		ev = append(ev, hSYN)
	case p.Flags&(SYN|ACK) == SYN|ACK:
		ev = append(ev, hSYNACK)
	case p.Flags&ACK != 0 && p.Flags&RST == 0:
		ev = append(ev, hACK)
	}
	if p.Payload > 0 {
		ev = append(ev, hData)
	}
	if p.Flags&FIN != 0 {
		ev = append(ev, hFIN)
	}
	if p.Flags&RST != 0 {
		ev = append(ev, hRST)
	}
	for _, e := range ev {
		bit := uint32(1) << (e*2 + dir)
		if s.histSeen&bit != 0 || int(s.nHist) == len(s.history) {
			continue
		}
		s.histSeen |= bit
		s.history[s.nHist] = byte(e<<1 | dir)
		s.nHist++
	}
}

// Finish returns everything folded so far: the attempts in the order their
// first packets were seen, the ICMP events and ARP claims, the counts, and,
// when summarizing, the per-server counters of the attempts folded.
func (t *Tracker) Finish() *Result {
	t.finishing = true // the map is dropped whole below
	for i := range t.lists {
		for t.lists[i].head != nil {
			t.finalize(t.lists[i].head)
		}
	}
	t.finishing = false
	clear(t.streams)
	t.arpAnswers.finish(t.arp, t.last)
	res := &Result{ICMP: t.icmp, ARP: t.arp}
	// Chunks are let go as they are copied, so that the attempts are not
	// held twice.
	res.Attempts = make([]model.Attempt, 0, t.nDone)
	for i := range t.done {
		res.Attempts = append(res.Attempts, t.done[i]...)
		t.done[i] = nil
	}
	if !slices.IsSorted(t.doneSeq) {
		// Streams finalized out of creation order (closed ones before
		// older idle ones): put the attempts back in capture order.
		sort.Sort(bySeq{res.Attempts, t.doneSeq})
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

// arpAnswers matches ARP requests and neighbor solicitations with the
// claims of their targets (a reply, an announcement, or any packet the
// target sent) as the events come: a request is pending until a claim of
// its target arrives, and unanswered if that is later than
// model.ARPAnswerWindow. Requests closer than that to the capture's end are
// left unflagged: their answer may just be missing from the capture.
// Gratuitous requests, copies and probes from an unset address ask nobody.
type arpAnswers struct {
	pending map[netip.Addr][]int // requests (indices) waiting for each target
}

// claim notes that ip showed itself at t (a reply, an announcement, any
// packet it sent), answering the requests for it.
func (a *arpAnswers) claim(evs []model.ARPEvent, ip netip.Addr, t time.Time) {
	if list := a.pending[ip]; len(list) > 0 {
		for _, j := range list {
			evs[j].Unanswered = t.Sub(evs[j].Time) > model.ARPAnswerWindow
		}
		delete(a.pending, ip)
	}
}

// ask notes evs[i] as a request waiting for its answer, if it asks anyone.
func (a *arpAnswers) ask(evs []model.ARPEvent, i int) {
	e := &evs[i]
	if (e.Op == "request" || e.Op == "ns") && !e.Gratuitous && !e.Copy && e.Target.IsValid() && !e.Target.IsUnspecified() &&
		e.IP.IsValid() && !e.IP.IsUnspecified() && e.Target != e.IP && !e.Time.IsZero() {
		if a.pending == nil {
			a.pending = map[netip.Addr][]int{}
		}
		a.pending[e.Target] = append(a.pending[e.Target], i)
	}
}

// finish judges the requests still pending at the capture's end.
func (a *arpAnswers) finish(evs []model.ARPEvent, end time.Time) {
	for _, list := range a.pending {
		for _, j := range list {
			evs[j].Unanswered = !end.IsZero() && end.Sub(evs[j].Time) >= model.ARPAnswerWindow
		}
	}
	a.pending = nil
}

// A summarizing tracker keeps as many identical ICMP errors (same sender,
// type, code and quoted destination) or identical ARP packets one by one
// as failed attempts to one server (KeepFailed, FailedSample unless set);
// the next ones add to the last kept one's Repeats, so that a flood keeps
// memory bounded. An ARP packet that changes the MAC claiming an address
// is always kept.

type arpKey struct {
	op         string
	ip, target netip.Addr
	mac        string
	grat, copy bool
}

type icmpKey struct {
	from, to  netip.Addr
	typ, code int
	dst       netip.AddrPort
	proto     string
	v6, copy  bool
	src       netip.AddrPort
}

// bySeq sorts attempts by their streams' creation order.
type bySeq struct {
	a   []model.Attempt
	seq []int
}

func (b bySeq) Len() int           { return len(b.a) }
func (b bySeq) Less(i, j int) bool { return b.seq[i] < b.seq[j] }
func (b bySeq) Swap(i, j int) {
	b.a[i], b.a[j] = b.a[j], b.a[i]
	b.seq[i], b.seq[j] = b.seq[j], b.seq[i]
}

// statKey names the attempts one endpointAcc counts: those to one server
// with one outcome.
type statKey struct {
	server  netip.AddrPort
	outcome model.Outcome
}

// endpointAcc accumulates the attempts folded for one server endpoint and
// outcome.
type endpointAcc struct {
	st      model.EndpointStats
	clients map[netip.Addr]struct{}
	synack  []time.Duration // a bounded sample, for the median
	// ports is the set of server ports of a host's counters (port 0),
	// which count the ports that failed after the host's sample was full.
	ports *[1 << 16 / 64]uint64
}

// hostSampleFactor times FailedSample is how many refused, and how many
// unanswered, attempts to one host, all its ports together, a summarizing
// tracker keeps one by one: a scan of every port keeps that many, and
// counts the rest per host with the ports they went to.
const hostSampleFactor = 10

// maxSamples bounds the time-to-SYN/ACK sample kept per endpoint.
const maxSamples = 1024

// acc returns the counters of s's server and outcome, made on first use.
func (t *Tracker) acc(server netip.AddrPort, outcome model.Outcome) *endpointAcc {
	k := statKey{server, outcome}
	acc := t.stats[k]
	if acc == nil {
		if t.stats == nil {
			t.stats = map[statKey]*endpointAcc{}
		}
		acc = &endpointAcc{st: model.EndpointStats{Node: t.node, File: t.file, Server: k.server, Outcome: outcome},
			clients: map[netip.Addr]struct{}{}}
		t.stats[k] = acc
		t.statOrder = append(t.statOrder, k)
	}
	return acc
}

func (t *Tracker) fold(s *stream, outcome model.Outcome) {
	t.foldInto(t.acc(s.end(1-s.clientDir()), outcome), s)
}

// foldInto counts s in acc.
func (t *Tracker) foldInto(acc *endpointAcc, s *stream) {
	cd := s.clientDir()
	client := s.end(cd)
	first := t.time(s.first.ns)
	if acc.st.Server.Port() == 0 { // a host's counters: which ports
		if acc.ports == nil {
			acc.ports = new([1 << 16 / 64]uint64)
		}
		p := s.end(1 - cd).Port()
		acc.ports[p/64] |= 1 << (p % 64)
	}
	st := &acc.st
	if st.Attempts == 0 {
		st.First = first
	}
	st.Attempts++
	st.Packets += s.packets
	st.ClientBytes += s.bytes[cd]
	st.ServerBytes += s.bytes[1-cd]
	st.SYNRetx += s.synRetx(cd)
	if first.Before(st.First) {
		st.First = first
	}
	if first.After(st.Last) || st.Attempts == 1 {
		st.Last = first
	}
	if _, seen := acc.clients[client.Addr()]; !seen && len(acc.clients) < 65536 {
		acc.clients[client.Addr()] = struct{}{}
		if len(st.ClientAddrs) < model.MaxClientAddrs {
			st.ClientAddrs = append(st.ClientAddrs, client.Addr())
		}
	}
	syn, ok1 := s.firstSeg(segSYN, cd)
	sa, ok2 := s.firstSeg(segSYNACK, 1-cd)
	if ok1 && ok2 {
		d := sub(sa.ns, syn.ns)
		if len(acc.synack) < maxSamples {
			acc.synack = append(acc.synack, d)
		} else {
			acc.synack[st.Attempts%maxSamples] = d
		}
	}
}

func (acc *endpointAcc) stats() model.EndpointStats {
	st := acc.st
	st.Clients = len(acc.clients)
	if acc.ports != nil {
		for w, word := range acc.ports {
			for ; word != 0; word &= word - 1 {
				st.Ports = append(st.Ports, uint16(w*64+bits.TrailingZeros64(word)))
			}
		}
	}
	if n := len(acc.synack); n > 0 {
		slices.Sort(acc.synack)
		st.MedianSYNACK = acc.synack[n/2]
	}
	return st
}

func (s *stream) outcome() model.Outcome {
	switch {
	case s.cliDir < 0:
		if s.nSYNACK[0]+s.nSYNACK[1] > 0 {
			return model.OutcomeSynAckOnly
		}
		return model.OutcomeMidstream
	case s.gotSA:
		switch {
		case s.cFirst == 1:
			return model.OutcomeEstablished
		case s.cFirst == 2:
			return model.OutcomeSynAckClientRST
		case s.sFirstRST:
			return model.OutcomeSynAckServerRST
		}
		return model.OutcomeSynAckNoAck
	case s.cliRST[1-s.cliDir] > 0:
		return model.OutcomeRefused
	case s.cliRST[s.cliDir] > 0:
		return model.OutcomeSynClientRST
	case s.srvOther:
		return model.OutcomeOther
	case s.cliAck:
		return model.OutcomeClientOnly
	}
	return model.OutcomeUnanswered
}

// clientDir is the direction of the client: the first SYN's sender, else
// the receiver of a lone SYN/ACK, else the first packet's sender.
func (s *stream) clientDir() int {
	switch {
	case s.cliDir >= 0:
		return int(s.cliDir)
	case s.satoDir >= 0:
		return int(s.satoDir)
	}
	return 0
}

// end returns the first packet's source (0) or destination (1).
func (s *stream) end(dir int) netip.AddrPort {
	if s.aHi {
		dir = 1 - dir
	}
	return s.key.end(dir)
}

func (t *Tracker) attempt(s *stream) model.Attempt {
	cd := s.clientDir()
	sd := 1 - cd
	file := t.file
	if s.first.file != 0 {
		file = t.files[s.first.file]
	}
	segPtr := func(g seg, ok bool) *model.Seg {
		if !ok {
			return nil
		}
		m := t.modelSeg(g)
		return &m
	}
	a := model.Attempt{
		Node:        t.node,
		Pos:         model.Pos{File: file, Frame: s.first.frame, Line: int(s.first.line)},
		Client:      s.end(cd),
		Server:      s.end(sd),
		Outcome:     s.outcome(),
		Start:       t.time(s.first.ns),
		End:         t.time(s.last),
		SYN:         t.modelSegs(s, segSYN, cd),
		SYNACK:      t.modelSegs(s, segSYNACK, sd),
		ClientRST:   t.modelSegs(s, segRST, cd),
		ServerRST:   t.modelSegs(s, segRST, sd),
		FirstAck:    segPtr(s.firstAck, s.ackSeen),
		ClientFIN:   segPtr(s.fin[cd], s.finSeen[cd]),
		ServerFIN:   segPtr(s.fin[sd], s.finSeen[sd]),
		Packets:     s.packets,
		ClientBytes: s.bytes[cd],
		ServerBytes: s.bytes[sd],
		ISN:         s.synISN[cd],
		Reused:      reuseNames[s.reused],
		ICMP:        s.icmp,
	}
	if s.outer != nil {
		o := *s.outer
		a.Outer = &o
	}
	if s.first.file != 0 {
		for _, l := range [][]model.Seg{a.SYN, a.SYNACK, a.ClientRST, a.ServerRST} {
			for i := range l {
				if l[i].File == file {
					l[i].File = ""
				}
			}
		}
		for _, sp := range []*model.Seg{a.FirstAck, a.ClientFIN, a.ServerFIN} {
			if sp != nil && sp.File == file {
				sp.File = ""
			}
		}
	}
	a.History = s.historyString(cd)
	a.ConnState = s.connState(cd)
	return a
}

func (s *stream) historyString(cd int) string {
	const letters = "ShADFR"
	b := make([]byte, 0, s.nHist)
	for _, h := range s.history[:s.nHist] {
		e, dir := int(h>>1), int(h&1)
		c := letters[e]
		if e == hSYNACK {
			c = 'H'
		}
		if dir == cd {
			c = upper(c)
		} else {
			c = lower(c)
		}
		b = append(b, c)
	}
	return string(b)
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}

// connState is Zeek's conn_state for the attempt.
func (s *stream) connState(cd int) string {
	sd := 1 - cd
	origSYN := s.nSYN[cd] > 0
	respSA := s.nSYNACK[sd] > 0
	origRST, respRST := s.nRST[cd] > 0, s.nRST[sd] > 0
	origFIN, respFIN := s.finSeen[cd], s.finSeen[sd]
	switch {
	case origSYN && !respSA:
		switch {
		case respRST:
			return "REJ"
		case origRST:
			return "RSTOS0"
		case origFIN:
			return "SH"
		case s.srvOther:
			return "OTH"
		}
		return "S0"
	case !origSYN && respSA:
		switch {
		case respRST:
			return "RSTRH"
		case respFIN:
			return "SHR"
		}
		return "OTH"
	case !origSYN && !respSA:
		return "OTH"
	}
	switch {
	case origRST:
		return "RSTO"
	case respRST:
		return "RSTR"
	case origFIN && respFIN:
		return "SF"
	case origFIN:
		return "S2"
	case respFIN:
		return "S3"
	}
	return "S1"
}
