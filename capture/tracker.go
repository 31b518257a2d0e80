package capture

import (
	"math"
	"net/netip"
	"slices"
	"sort"
	"time"

	"github.com/netmortem/netmortem/model"
)

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
	keepFailed int // refused, and unanswered, attempts kept per server when summarizing (Summary.FailedSample)
	finishing  bool
	series     bool // packets come from several files: segments name theirs
	stats      map[statKey]*endpointAcc
	failKept   map[statKey]int32  // failed attempts kept one by one, per server and per host (port 0)
	synISN     map[uint32]synSeen // summary mode: the live stream whose first SYN last had each sequence number
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

// NewTracker returns a Tracker whose evidence points into file, set up as
// opts say: opts.Node names the node the packets were captured on ("" when
// unknown), opts.Summary whether and how attempts are summarized.
func NewTracker(file string, opts Options) *Tracker {
	return &Tracker{file: file, node: opts.Node, streams: make(map[tupleKey]*stream), now: noTime, files: []string{""},
		summarize: opts.Summary.Enabled, keepFailed: opts.Summary.sample()}
}

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
	t.forgetSYN(s)
	if t.summarize && s.outer == nil {
		// Folded straight from the stream: no attempt is built for it.
		switch outcome {
		case model.OutcomeEstablished:
			switch s.connState(s.clientDir()) {
			case "SF", "S1", "S2", "S3":
				if !s.largeRetx() && !s.icmp { // a stalled transfer, or one an ICMP error quotes, is kept for the rules
					t.fold(s, outcome)
					return
				}
			}
		case model.OutcomeRefused, model.OutcomeUnanswered:
			if !s.icmp && !s.natCopy {
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
