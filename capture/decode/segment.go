package decode

import (
	"encoding/binary"
	"math"
	"math/bits"
	"net/netip"
)

// Key identifies a TCP or UDP 4-tuple whatever its direction: its two ends
// ordered, lo before hi. It holds no pointers, so that a table of them
// costs the garbage collector nothing to scan. Keys compare with ==.
type Key struct {
	lo, hi         [16]byte
	loPort, hiPort uint16
	v4             bool
}

// KeyOf returns the key of the 4-tuple from a to b, and whether a is the
// key's hi end.
func KeyOf(a, b netip.AddrPort) (k Key, swapped bool) {
	if a.Compare(b) > 0 {
		a, b, swapped = b, a, true
	}
	return Key{lo: a.Addr().As16(), hi: b.Addr().As16(), loPort: a.Port(), hiPort: b.Port(), v4: a.Addr().Is4()}, swapped
}

// End returns the key's lo (0) or hi (1) end as an address and port.
func (k *Key) End(i int) netip.AddrPort {
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

// Equal reports whether k and o are the same key, as k == o does, in
// five loads a side where == compares the struct's bytes through a call.
func (k *Key) Equal(o *Key) bool {
	le := binary.LittleEndian
	return le.Uint64(k.lo[:8]) == le.Uint64(o.lo[:8]) && le.Uint64(k.lo[8:]) == le.Uint64(o.lo[8:]) &&
		le.Uint64(k.hi[:8]) == le.Uint64(o.hi[:8]) && le.Uint64(k.hi[8:]) == le.Uint64(o.hi[8:]) &&
		k.loPort == o.loPort && k.hiPort == o.hiPort && k.v4 == o.v4
}

// EndHash hashes the key's lo (0) or hi (1) end: two ends with different
// hashes are different addresses or ports (the converse does not hold).
func (k *Key) EndHash(i int) uint32 {
	b, port := &k.lo, k.loPort
	if i == 1 {
		b, port = &k.hi, k.hiPort
	}
	le := binary.LittleEndian
	h := le.Uint64(b[:8])*0x9e3779b97f4a7c15 ^ le.Uint64(b[8:])*0xc2b2ae3d27d4eb4f ^ uint64(port)*0xff51afd7ed558ccd
	h ^= h >> 31
	h *= 0x94d049bb133111eb
	return uint32(h >> 32)
}

// Hash hashes the key, the same for both directions of a 4-tuple: stream
// tracking picks a shard, and a slot of its table, by it.
func (k *Key) Hash() uint32 {
	le := binary.LittleEndian
	return hashWords(le.Uint64(k.lo[:8]), le.Uint64(k.lo[8:]), le.Uint64(k.hi[:8]), le.Uint64(k.hi[8:]), k.loPort, k.hiPort)
}

// hashWords is Key.Hash of a key whose addresses read, as little-endian
// 64-bit words, lo1 lo2 and hi1 hi2.
func hashWords(lo1, lo2, hi1, hi2 uint64, loPort, hiPort uint16) uint32 {
	h := lo1*0x9e3779b97f4a7c15 ^ lo2*0xc2b2ae3d27d4eb4f ^ hi1*0x165667b19e3779f9 ^ hi2*0xd6e8feb86659fd93 ^
		(uint64(loPort)<<16|uint64(hiPort))*0xff51afd7ed558ccd
	h ^= h >> 31
	h *= 0x94d049bb133111eb
	h ^= h >> 29
	return uint32(h)
}

// Segment is the part of a TCP segment that stream tracking reads: its
// 4-tuple, keyed and hashed, and the header fields. HotTCP fills one
// straight from a frame; Set fills one from a decoded Packet. It holds no
// pointer, so that arrays of them are written and reused without
// clearing.
type Segment struct {
	Key   Key    // the 4-tuple
	SrcHi bool   // the source is the key's hi end
	Flags uint8  // as Packet.Flags
	Short bool   // as Packet.Short
	Hash  uint32 // Key.Hash, as Set and HotTCP compute it
	Seq   uint32 // as Packet.Seq
	Ack   uint32 // as Packet.Ack
	MSS   uint16 // as Packet.MSS
	// Payload is the TCP payload length, as Packet.Payload.
	Payload int32
}

// SetKey sets s's 4-tuple, ordered as KeyOf orders it, and its hash.
func (s *Segment) SetKey(k Key, srcHi bool) {
	s.Key, s.SrcHi = k, srcHi
	s.Hash = k.Hash()
}

// Set fills s from p, a decoded TCP segment, as HotTCP fills it from the
// frame p was decoded from.
func (s *Segment) Set(p *Packet) {
	s.SetKey(KeyOf(p.Src, p.Dst))
	s.Flags, s.Seq, s.Ack, s.MSS, s.Short = p.Flags, p.Seq, p.Ack, p.MSS, p.Short
	s.Payload = int32(min(max(p.Payload, math.MinInt32), math.MaxInt32))
}

// setKey4 is SetKey for an IPv4 4-tuple, whose addresses are given as
// their four bytes read big-endian, written straight into s.Key.
func (s *Segment) setKey4(src, dst uint32, sport, dport uint16) {
	s.SrcHi = src > dst || (src == dst && sport > dport)
	if s.SrcHi {
		src, dst, sport, dport = dst, src, dport, sport
	}
	// The addresses as IPv4-mapped IPv6 ones (as netip.Addr.As16 gives
	// them: ten zero bytes, two 0xff, the four), written as the
	// little-endian words the hash reads: the
	// hash is taken from the words rather than from the key just written
	// (reading it back stalls).
	lo := 0xffff0000 | uint64(bits.ReverseBytes32(src))<<32
	hi := 0xffff0000 | uint64(bits.ReverseBytes32(dst))<<32
	k := &s.Key
	le := binary.LittleEndian
	le.PutUint64(k.lo[:8], 0)
	le.PutUint64(k.lo[8:], lo)
	le.PutUint64(k.hi[:8], 0)
	le.PutUint64(k.hi[8:], hi)
	k.loPort, k.hiPort, k.v4 = sport, dport, true
	s.Hash = hashWords(0, lo, 0, hi, sport, dport)
}

// setKey6 is setKey4 for IPv6 addresses, given as their 16 bytes.
func (s *Segment) setKey6(src, dst []byte, sport, dport uint16) {
	s1, s2 := binary.BigEndian.Uint64(src[:8]), binary.BigEndian.Uint64(src[8:16])
	d1, d2 := binary.BigEndian.Uint64(dst[:8]), binary.BigEndian.Uint64(dst[8:16])
	s.SrcHi = s1 > d1 || (s1 == d1 && (s2 > d2 || (s2 == d2 && sport > dport)))
	if s.SrcHi {
		src, dst, sport, dport = dst, src, dport, sport
	}
	k := &s.Key
	copy(k.lo[:], src[:16])
	copy(k.hi[:], dst[:16])
	k.loPort, k.hiPort, k.v4 = sport, dport, false
	le := binary.LittleEndian
	s.Hash = hashWords(le.Uint64(src[:8]), le.Uint64(src[8:16]), le.Uint64(dst[:8]), le.Uint64(dst[8:16]), sport, dport)
}
