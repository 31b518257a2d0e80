package capture

import (
	"encoding/binary"

	"github.com/netmortem/netmortem/model"
)

// tcpSeg is a TCP segment as a shard folds it, or the TCP segment an ICMP
// error quotes, for its shard to look the stream up: the 4-tuple ordered
// and hashed, the time in tracker time, and the header fields the tracking
// reads. The reading stage fills it straight from the frame (hotTCP), or
// from a decoded Packet (Tracker.prepare). It holds one pointer, which is
// nil but for overlays, so that windows of them are written and reused
// without clearing.
type tcpSeg struct {
	key      tupleKey
	srcHi    bool // the source is the key's hi end
	lookup   bool // an ICMP error's quote: only looked up
	flags    uint8
	short    bool
	hash     uint32 // hashKey(&key)
	seq, ack uint32
	mss      uint16
	file     uint32 // index in Tracker.files
	line     int32
	payload  int32
	frame    int
	idx      int   // Packet.idx
	ns       int64 // the packet's time, in tracker time
	now      int64 // the latest TCP time up to the packet, in tracker time
	outer    *model.Tuple
	// found is set by a lookup's shard: the first frame, or line, of the
	// stream quoted, 0 when it is not tracked.
	found int
}

// mark is what a shard leaves for the Tracker to settle in capture order
// after folding a segment: a stream the segment's SYN ended by reusing
// its 4-tuple, a first SYN to note for summary mode.
type mark struct {
	idx     int     // the segment's Packet.idx
	ns      int64   // its time
	retired ended   // the stream its SYN retired
	noted   *stream // the stream whose first SYN in a direction this is (summary mode)
	noteISN uint32  // that SYN's sequence number (a SYN/ACK's ack minus one)
	noteCli int8    // that stream's client direction, as the SYN shows it
}

// setKey sets g's 4-tuple, ordered as orderedKey orders it, and its hash.
func (g *tcpSeg) setKey(k tupleKey, srcHi bool) {
	g.key, g.srcHi = k, srcHi
	g.hash = hashKey(&g.key)
}

// setKey4 is setKey for an IPv4 4-tuple, whose addresses are given as the
// four bytes of each (big-endian), written straight into g.key.
func (g *tcpSeg) setKey4(src, dst []byte, sport, dport uint16) {
	s, d := binary.BigEndian.Uint32(src), binary.BigEndian.Uint32(dst)
	g.srcHi = s > d || (s == d && sport > dport)
	if g.srcHi {
		src, dst, sport, dport = dst, src, dport, sport
	}
	k := &g.key
	k.lo, k.hi = v4Prefix, v4Prefix
	copy(k.lo[12:], src[:4])
	copy(k.hi[12:], dst[:4])
	k.loPort, k.hiPort, k.v4 = sport, dport, true
	// hashKey of the key, from the address bytes rather than from the
	// key just written (reading it back stalls).
	le := binary.LittleEndian
	g.hash = hashWords(0, 0xffff0000|uint64(le.Uint32(src))<<32, 0, 0xffff0000|uint64(le.Uint32(dst))<<32, sport, dport)
}

// v4Prefix is the IPv4-mapped IPv6 prefix, as netip.Addr.As16 gives an
// IPv4 address.
var v4Prefix = [16]byte{10: 0xff, 11: 0xff}

// setKey6 is setKey4 for IPv6 addresses, given as their 16 bytes.
func (g *tcpSeg) setKey6(src, dst []byte, sport, dport uint16) {
	s1, s2 := binary.BigEndian.Uint64(src[:8]), binary.BigEndian.Uint64(src[8:16])
	d1, d2 := binary.BigEndian.Uint64(dst[:8]), binary.BigEndian.Uint64(dst[8:16])
	g.srcHi = s1 > d1 || (s1 == d1 && (s2 > d2 || (s2 == d2 && sport > dport)))
	if g.srcHi {
		src, dst, sport, dport = dst, src, dport, sport
	}
	k := &g.key
	copy(k.lo[:], src[:16])
	copy(k.hi[:], dst[:16])
	k.loPort, k.hiPort, k.v4 = sport, dport, false
	le := binary.LittleEndian
	g.hash = hashWords(le.Uint64(src[:8]), le.Uint64(src[8:16]), le.Uint64(dst[:8]), le.Uint64(dst[8:16]), sport, dport)
}
