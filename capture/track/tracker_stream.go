package track

import (
	"math/bits"
	"net/netip"
	"time"
	"unsafe"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/model"
)

// maxSegs bounds how many SYN, SYN/ACK and RST segments an attempt keeps
// frame by frame; counts go on past it.
const maxSegs = 32

// seg is a segment as a stream keeps it: its tracker time, and where it
// is, in pos: its frame and file, or, for a segment whose place does not
// fit there (a line of text, a frame past 2^40, a file past 2^19), the
// index of its segPos in the stream's streamExtra; and, for the segments
// a stream lists, their kind and direction.
type seg struct {
	ns  int64
	pos uint64
}

// The fields of seg.pos.
const (
	posFrameBits = 40
	posFileBits  = 19
	posFrameMask = 1<<posFrameBits - 1
	posFileMask  = 1<<posFileBits - 1
	posTagShift  = posFrameBits + posFileBits
	posIndirect  = 1 << 62 // the low bits index streamExtra.pos
)

// segPos is where a segment is, as tcpSeg gives it: its frame, line and
// file (an index in Tracker.files).
type segPos struct {
	frame int
	line  int32
	file  uint32
}

// fileMask bounds the index of a file in Tracker.files.
const fileMask = 1<<28 - 1

// Kinds of the segments a stream lists.
const (
	segSYN = iota
	segSYNACK
	segRST
)

func (g seg) tag() uint32 { return uint32(g.pos>>posTagShift) & 7 }

// seg returns p's seg in s. A position that does not fit in seg.pos is
// kept in s's streamExtra.
func (sh *shard) seg(s *stream, p *tcpSeg) seg {
	if p.line == 0 && uint64(p.frame) <= posFrameMask && p.file <= posFileMask {
		return seg{ns: p.ns, pos: uint64(p.frame) | uint64(p.file)<<posFrameBits}
	}
	x := sh.extraOf(s)
	x.pos = append(x.pos, segPos{p.frame, p.line, p.file})
	return seg{ns: p.ns, pos: posIndirect | uint64(len(x.pos)-1)}
}

// where returns the position of g, a seg of s, which its shard holds.
func (sh *shard) where(s *stream, g seg) segPos {
	if g.pos&posIndirect != 0 {
		return sh.extra[s.ref].pos[g.pos&posFrameMask]
	}
	return directPos(g)
}

// where returns the position of g, a seg of e.
func (e ended) where(g seg) segPos {
	if g.pos&posIndirect != 0 {
		return e.x.pos[g.pos&posFrameMask]
	}
	return directPos(g)
}

func directPos(g seg) segPos {
	return segPos{frame: int(g.pos & posFrameMask), file: uint32(g.pos>>posFrameBits) & posFileMask}
}

// segAt makes a packet's seg in a stream once it is needed, so that a
// packet whose place is kept in the stream's streamExtra is kept there
// only when the stream records it.
type segAt struct {
	sh *shard
	s  *stream
	p  *tcpSeg
	g  seg
	ok bool
}

func (a *segAt) get() seg {
	if !a.ok {
		a.g, a.ok = a.sh.seg(a.s, a.p), true
	}
	return a.g
}

// addSeg lists g as a segment of s of the kind sent in direction dir,
// unless maxSegs of them are listed already (n counts them, g included).
// The first two (a SYN and its SYN/ACK, or its RST) stay in the stream,
// the rest go with all of them to its streamExtra.
func (sh *shard) addSeg(s *stream, kind, dir int, n int32, g seg) {
	if n > maxSegs {
		return
	}
	g.pos |= uint64(kind<<1|dir) << posTagShift
	switch {
	case int(s.nSegs) < len(s.segBuf):
		s.segBuf[s.nSegs] = g
	case int(s.nSegs) == len(s.segBuf):
		x := sh.extraOf(s)
		x.segs = append(append(x.segs[:0], s.segBuf[:]...), g)
	default:
		x := sh.extraOf(s)
		x.segs = append(x.segs, g)
	}
	s.nSegs++
}

// segList returns the segments e lists.
func (e ended) segList() []seg {
	if int(e.nSegs) > len(e.segBuf) {
		return e.x.segs
	}
	return e.segBuf[:e.nSegs]
}

// synRetx returns how many times the client's first SYN was retransmitted,
// leaving out copies seen on another interface (model.IsSegmentCopy);
// beyond the SYNs listed, every one counts.
func (e ended) synRetx(cd int) int {
	tag := uint32(segSYN<<1 | cd)
	n, listed := 0, 0
	prev := int64(0)
	for _, g := range e.segList() {
		if g.tag() != tag {
			continue
		}
		if listed > 0 && (subNS(g.ns, prev) >= int64(model.MinSYNRetransmission) || g.ns == noTime || prev == noTime) {
			n++
		}
		prev = g.ns
		listed++
	}
	if extra := int(e.nSYN[cd]) - listed; extra > 0 {
		n += extra
	}
	return n
}

// firstSeg returns the first segment of the kind sent in direction dir.
func (e ended) firstSeg(kind, dir int) (seg, bool) {
	tag := uint32(kind<<1 | dir)
	for _, g := range e.segList() {
		if g.tag() == tag {
			return g, true
		}
	}
	return seg{}, false
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
//
// A stream holds no pointer, so that the garbage collector never reads the
// chunks of a shard's streamStore: its activity list neighbours are refs
// into the store, and what holds pointers is in its streamExtra.
type stream struct {
	// Fields are ordered by size, largest first, so that a stream packs
	// into as few bytes as it can.
	seq      int // creation order: attempts are returned in it
	_        [intPad]byte
	segBuf   [2]seg // SYN, SYN/ACK and RST segments, tagged with kind and direction (then in streamExtra)
	first    seg
	fin      [2]seg // frame and line 0 until seen
	firstAck seg
	last     int64 // the last packet's time, of those with one (noTime for none)
	lastNow  int64 // Tracker time when the last packet came (the activity lists' order)
	lastIdx  int   // the last packet's index (tcpSeg.idx)
	_        [intPad]byte
	packets  int
	_        [intPad]byte
	bytes    [2]int64
	data     [2]dataSizes // each direction's data segments, when hasData has its bit

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
	mss      [2]uint16 // the MSS option of each side's first SYN or SYN/ACK that has one
	cliRST   [2]int32  // RSTs counted once the client is known, as the truth files count them
	histSeen uint32
	hash     uint32 // key's hash, the streamTable's
	ref      uint32 // the stream's ref in its shard's store
	prev     uint32 // the activity list's neighbours' refs, 0 for none
	next     uint32
	// saAck is, for each direction, the ack of its first SYN/ACK when the
	// SYN it answers was not seen (saSet): the peer's ISN plus one.
	saAck [2]uint32

	key     decode.Key
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
	saSet   [2]bool
	nextSet [2]bool
	rttSet  bool
	finSeen [2]bool
	ackSeen bool
	icmp    bool // an ICMP error quotes the stream

	shard    uint8 // the index of the shard whose store holds s
	nSegs    uint8 // segments listed
	hasData  uint8 // bit dir set once direction dir sent data
	hasExtra bool  // the shard keeps a streamExtra for s
}

// isn returns the client's initial sequence number: its SYN's, or, when
// only the server's SYN/ACK was seen, the one that acknowledges.
func (s *stream) isn(cd int) uint32 {
	if !s.synSeen[cd] && s.saAck[1-cd] != 0 {
		return s.saAck[1-cd] - 1
	}
	return s.synISN[cd]
}

// closed tells whether s has seen FIN both ways or an RST.
func (s *stream) closed() bool {
	return (s.finSeen[0] && s.finSeen[1]) || s.nRST[0]+s.nRST[1] > 0
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
// Each letter is recorded once per side, in the order of the constants
// above within a packet: most packets add none, and cost a mask test.
func (s *stream) addHistory(dir int, p *tcpSeg) {
	ev := flagEvents[p.Flags]
	if p.Payload > 0 {
		ev |= 1 << (hData * 2)
	}
	for add := ev << (uint(dir) & 1) &^ s.histSeen; add != 0 && int(s.nHist) < len(s.history); add &= add - 1 {
		bit := bits.TrailingZeros32(add) // e*2 + dir
		s.histSeen |= 1 << bit
		s.history[s.nHist] = byte(bit)
		s.nHist++
	}
}

// flagEvents gives, for each combination of TCP flags, the history events
// e it shows (but data) as bits e*2.
var flagEvents = func() (t [256]uint32) {
	for f := range t {
		f8 := uint8(f)
		switch {
		case f8&(decode.SYN|decode.ACK) == decode.SYN:
			t[f] = 1 << (hSYN * 2)
		case f8&(decode.SYN|decode.ACK) == decode.SYN|decode.ACK:
			t[f] = 1 << (hSYNACK * 2)
		case f8&decode.ACK != 0 && f8&decode.RST == 0:
			t[f] = 1 << (hACK * 2)
		}
		if f8&decode.FIN != 0 {
			t[f] |= 1 << (hFIN * 2)
		}
		if f8&decode.RST != 0 {
			t[f] |= 1 << (hRST * 2)
		}
	}
	return t
}()

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
	return s.key.End(dir)
}

// endHash returns the low 16 bits of the hash of s's end in direction dir
// (decode.Key.EndHash).
func (s *stream) endHash(dir int) uint16 {
	if s.aHi {
		dir = 1 - dir
	}
	return uint16(s.key.EndHash(dir))
}

// historyLetters appends s's history letters to b, those of the client
// (direction cd) upper case, as Zeek writes them.
func (s *stream) historyLetters(b []byte, cd int) []byte {
	const letters = "ShADFR"
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
	return b
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

// outer returns the outer addresses of e's overlay, nil when it has none.
func (e ended) outer() *model.Tuple {
	if e.x == nil {
		return nil
	}
	return e.x.outer
}

// intPad pads an int of a stream to 8 bytes where an int takes 4, so that
// a stream is laid out in the same words on every platform (park.go
// encodes it word by word).
const intPad = 8 - unsafe.Sizeof(int(0))
