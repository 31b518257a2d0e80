package track

import (
	"encoding/binary"
	"math/bits"
	"time"
	"unsafe"
)

// When a Tracker's shards hold more than parkBudget streams whole, a
// closed stream that has had no packet for parkAfter (capture time), or
// for the last parkPackets packets (a capture's time may go back, as in
// files concatenated), is parked at a sweep: its state is encoded into a
// few bytes of its shard's parkStore and its 424-byte slot goes back to
// the store for a new stream. A capture whose connections all close
// within the two minutes a closed stream lingers would otherwise hold
// every one of them whole until the end.
//
// Parking loses nothing: a packet, a reuse of its 4-tuple or the end of
// the lingering brings the stream back (unpark) exactly as it was, and it
// goes on as if it had never left. Parked streams keep their place in the
// closed activity list: they are its oldest, in its order, ahead of the
// closed streams still whole.
//
// Encoding and decoding a stream costs about as much CPU as the memory
// it frees costs the kernel to hand over, so that parking pays only where
// memory matters: streams are parked only beyond the budget (28 MB of
// them), which a capture whose connections come and go never reaches.
//
// They are variables so that tests can park every closed stream at once.
var (
	parkAfter   = time.Second
	parkPackets = 65536 // 16 sweeps
	parkBudget  = 65536 // streams, each shard a share
)

// parkedRef marks a streamTable slot's ref as a parked stream's: its low
// bits are the stream's id in its shard's parkStore.
const (
	parkedRef = 1 << 31
	parkIDs   = parkedRef - 1
)

// The words of a stream, as parkStore encodes it.
const streamWords = int(streamSize / 8)

// A stream is encoded as whole words: it must be a multiple of 8 bytes.
var _ = [1]int{}[streamSize%8]

// Each word of a parked stream is written as its significant bytes, after
// a transform that makes most of them few: the times of its segments and
// its activity as differences from its first packet's (the tracker's time
// at its last packet from that packet's), their places as differences
// from its first packet's, rotated to put the kind of the segment in the
// low bits, its last packet's index as the difference from its creation
// order, its sequence numbers as differences from each direction's
// first (the SYNs' with their halves swapped: most streams have one SYN,
// the client's, and the server's half holds the difference from 0), and
// the other words XORed with those of the first stream its shard parked
// (the template), which most streams share much of: their flags, history
// letters, options, addresses. The words of the key's addresses have
// their bytes reversed first, so that the last bytes of an address, where
// a capture's addresses differ, are the low ones.
const (
	wordRaw = iota
	wordTime
	wordPos
	wordIdx
	wordSeqs
	wordSince // the tracker's time at the last packet
	wordISNs  // the SYNs' sequence numbers
	wordAddr  // a word of the key's addresses
)

// The words of a stream the transforms read or change, by their index.
// A seg is two words, its time and its place.
const (
	wordSeq      = int(unsafe.Offsetof(stream{}.seq) / 8)
	wordFirstNS  = int(unsafe.Offsetof(stream{}.first) / 8)
	wordFirstPos = wordFirstNS + 1
	wordSegBuf   = int(unsafe.Offsetof(stream{}.segBuf) / 8)
	wordFin      = int(unsafe.Offsetof(stream{}.fin) / 8)
	wordFirstAck = int(unsafe.Offsetof(stream{}.firstAck) / 8)
	wordLast     = int(unsafe.Offsetof(stream{}.last) / 8)
	wordLastNow  = int(unsafe.Offsetof(stream{}.lastNow) / 8)
	wordLastIdx  = int(unsafe.Offsetof(stream{}.lastIdx) / 8)
	wordNextTime = int(unsafe.Offsetof(stream{}.nextTime) / 8)
	wordMruSYN   = int(unsafe.Offsetof(stream{}.mruSYN) / 8)
	wordNextSeqs = int(unsafe.Offsetof(stream{}.nextSeq) / 8)
	wordBase     = int(unsafe.Offsetof(stream{}.base) / 8)
	wordSynISNs  = int(unsafe.Offsetof(stream{}.synISN) / 8)
	wordKey      = int(unsafe.Offsetof(stream{}.key) / 8)
)

// The words must start whole words, a seg's place be the word after its
// time, and the pairs of sequence numbers be a word each, for the
// transforms to apply.
var _ = [1]int{}[unsafe.Offsetof(stream{}.first)%8+unsafe.Offsetof(stream{}.segBuf)%8+unsafe.Offsetof(stream{}.fin)%8+
	unsafe.Offsetof(stream{}.firstAck)%8+unsafe.Offsetof(stream{}.base)%8+unsafe.Offsetof(stream{}.nextSeq)%8+
	unsafe.Offsetof(stream{}.synISN)%8+unsafe.Offsetof(stream{}.key)%8+unsafe.Offsetof(stream{}.nextTime)%8+
	(unsafe.Offsetof(seg{}.pos)-8)+(unsafe.Sizeof(stream{}.nextSeq)-8)+(unsafe.Sizeof(stream{}.base)-8)+(unsafe.Sizeof(stream{}.synISN)-8)]

// wordKind is the transform of each word of a stream, as transform
// applies it.
var wordKind = func() (k [streamWords]uint8) {
	for _, g := range []int{wordSegBuf, wordSegBuf + 2, wordFin, wordFin + 2, wordFirstAck} {
		k[g], k[g+1] = wordTime, wordPos
	}
	for _, i := range []int{wordLast, wordNextTime, wordNextTime + 1, wordMruSYN} {
		k[i] = wordTime
	}
	k[wordLastNow], k[wordLastIdx], k[wordNextSeqs], k[wordSynISNs] = wordSince, wordIdx, wordSeqs, wordISNs
	for i := range 4 {
		k[wordKey+i] = wordAddr
	}
	return k
}()

// parkHeader is the length of a record's header: a nibble per word, its
// count of significant bytes.
const parkHeader = (streamWords + 1) / 2

// parkMax bounds a record's length, with the 8 bytes past its end that
// encoding and decoding read and write whole words into.
const parkMax = parkHeader + streamWords*8 + 8

// parkChunk is the length of the parkStore's chunks: as much as two huge
// pages hold.
const parkChunk = 2*hugePageSize - 1

// parkStore holds a shard's parked streams, oldest first, their records in
// chunks of bytes written in the same order, so that the records of the
// streams retired from its head free whole chunks. Neither the records
// nor the entries hold a pointer: the garbage collector never reads them.
type parkStore struct {
	// ents holds the parked streams in chunks of parkEntChunk, oldest
	// first: n of them from index at of the first chunk, the first one
	// of id head. A chunk the oldest entries leave goes to spareEnts, and
	// the chunks are never copied: a doubled ring would be, and the
	// memory of each copy first touched anew.
	ents      [][]parkEnt
	spareEnts [][]parkEnt
	at, n     int
	head      uint32
	chunks    [][]byte // chunks[0] is chunk number chunk0
	chunk0    uint32
	tail      int // bytes written in the last chunk
	spare     [][]byte
	regions   []hugeRegion
	live      int    // entries not dead
	scratch   stream // a stream being encoded
	tmpl      [streamWords]uint64
}

// parkEntChunk is how many entries a chunk of parkStore.ents holds (96
// KiB).
const parkEntChunk = 4096

// parkEnt is a parked stream: where its record is, its last activity and
// its key's hash, and flags.
type parkEnt struct {
	lastNow int64
	chunk   uint32 // the chunk's number
	off     uint32
	hash    uint32
	dead    bool // brought back: the record is no longer the stream's
	icmp    bool // an ICMP error quoted it while it was parked
}

// len returns how many streams are parked.
func (pk *parkStore) len() int { return pk.live }

// first returns the oldest parked stream's id and entry, skipping and
// dropping the dead ones; ok is false when none is parked.
func (pk *parkStore) first() (id uint32, e *parkEnt, ok bool) {
	for pk.n > 0 {
		if e := &pk.ents[0][pk.at]; !e.dead {
			return pk.head, e, true
		}
		pk.pop()
	}
	return 0, nil, false
}

// pop drops the oldest entry, and the chunks no entry needs any longer.
func (pk *parkStore) pop() {
	if !pk.ents[0][pk.at].dead {
		pk.live--
	}
	pk.ents[0][pk.at] = parkEnt{}
	pk.at++
	pk.n--
	if pk.at == parkEntChunk || pk.n == 0 {
		// The first chunk is done with (or all of them are empty).
		pk.spareEnts = append(pk.spareEnts, pk.ents[0])
		pk.ents[0] = nil
		pk.ents, pk.at = pk.ents[1:], 0
		if pk.n == 0 {
			pk.spareEnts = append(pk.spareEnts, pk.ents...)
			pk.ents = pk.ents[:0]
		}
	}
	pk.head = (pk.head + 1) & parkIDs
	keep := uint32(len(pk.chunks) - 1) // the last chunk, being written
	if pk.n > 0 {
		keep = pk.ents[0][pk.at].chunk - pk.chunk0
	}
	for range keep {
		pk.spare = append(pk.spare, pk.chunks[0])
		pk.chunks[0] = nil
		pk.chunks = pk.chunks[1:]
		pk.chunk0++
	}
}

// ent returns the entry of id.
func (pk *parkStore) ent(id uint32) *parkEnt {
	i := pk.at + int((id-pk.head)&parkIDs)
	return &pk.ents[i/parkEntChunk][i%parkEntChunk]
}

// park encodes s, which lingers closed and has no packet for a while, and
// returns its id.
func (pk *parkStore) park(s *stream) uint32 {
	if len(pk.chunks) == 0 || pk.tail+parkMax > len(pk.chunks[len(pk.chunks)-1]) {
		pk.grow()
	}
	if pk.at+pk.n == len(pk.ents)*parkEntChunk {
		var c []parkEnt
		if k := len(pk.spareEnts); k > 0 {
			c, pk.spareEnts = pk.spareEnts[k-1], pk.spareEnts[:k-1]
		} else {
			c = make([]parkEnt, parkEntChunk)
		}
		pk.ents = append(pk.ents, c)
	}
	c := pk.chunks[len(pk.chunks)-1]
	n := encodeStream(c[pk.tail:], s, &pk.scratch, &pk.tmpl)
	id := (pk.head + uint32(pk.n)) & parkIDs
	i := pk.at + pk.n
	pk.ents[i/parkEntChunk][i%parkEntChunk] = parkEnt{lastNow: s.lastNow, chunk: pk.chunk0 + uint32(len(pk.chunks)-1),
		off: uint32(pk.tail), hash: s.hash}
	pk.n++
	pk.tail += n
	pk.live++
	return id
}

// grow starts a new chunk.
func (pk *parkStore) grow() {
	var c []byte
	if n := len(pk.spare); n > 0 {
		c = pk.spare[n-1]
		pk.spare[n-1] = nil
		pk.spare = pk.spare[:n-1]
	} else {
		var r hugeRegion
		c, r = makeLarge[byte](parkChunk)
		if r.p != nil {
			pk.regions = append(pk.regions, r)
		}
	}
	if len(pk.chunks) == 0 {
		pk.chunk0 = 0
	}
	pk.chunks = append(pk.chunks, c)
	pk.tail = 0
}

// load decodes the stream of id into s, as it was parked, with the ICMP
// error that may have quoted it since.
func (pk *parkStore) load(id uint32, s *stream) {
	e := pk.ent(id)
	decodeStream(pk.chunks[e.chunk-pk.chunk0][e.off:], s, &pk.tmpl)
	s.icmp = s.icmp || e.icmp
}

// seq returns the creation order (stream.seq) of the stream of id.
func (pk *parkStore) seq(id uint32) int {
	e := pk.ent(id)
	return recordSeq(pk.chunks[e.chunk-pk.chunk0][e.off:], &pk.tmpl)
}

// recordSeq returns the creation order (stream.seq) of the stream
// encodeStream wrote at the start of b, decoding only that word.
func recordSeq(b []byte, tmpl *[streamWords]uint64) int {
	nibble := func(i int) int { return int(b[i/2]>>(4*(i%2))) & 15 }
	at := parkHeader
	for i := range wordSeq {
		at += nibble(i)
	}
	var v uint64
	for k := range nibble(wordSeq) {
		v |= uint64(b[at+k]) << (8 * k)
	}
	v ^= tmpl[wordSeq]
	return *(*int)(unsafe.Pointer(&v)) // where the stream holds it, whatever the int's size and byte order
}

// kill marks id's entry dead: its stream is back in the store.
func (pk *parkStore) kill(id uint32) {
	pk.ent(id).dead = true
	pk.live--
}

// release lets go of the parked streams and of the chunks' memory.
func (pk *parkStore) release() {
	for _, r := range pk.regions {
		r.release()
	}
	*pk = parkStore{}
}

// words returns s as words.
func words(s *stream) *[streamWords]uint64 {
	return (*[streamWords]uint64)(unsafe.Pointer(s))
}

// bases are the words the transforms of a stream's other words count
// from.
type bases struct{ ns, pos, seq, seqs uint64 }

// transform makes the words of w that are not raw what they are encoded
// as (a raw word is then XORed with the template), each by its index, as
// wordKind lists them. The bases were read from w before.
func transform(w *[streamWords]uint64, b *bases) {
	tm := func(v uint64) uint64 { return zigzag(v - b.ns) }
	pos := func(v uint64) uint64 { return bits.RotateLeft64(v-b.pos, 5) }
	w[wordSegBuf], w[wordSegBuf+1] = tm(w[wordSegBuf]), pos(w[wordSegBuf+1])
	w[wordSegBuf+2], w[wordSegBuf+3] = tm(w[wordSegBuf+2]), pos(w[wordSegBuf+3])
	w[wordFin], w[wordFin+1] = tm(w[wordFin]), pos(w[wordFin+1])
	w[wordFin+2], w[wordFin+3] = tm(w[wordFin+2]), pos(w[wordFin+3])
	w[wordFirstAck], w[wordFirstAck+1] = tm(w[wordFirstAck]), pos(w[wordFirstAck+1])
	w[wordLastNow] = zigzag(w[wordLastNow] - w[wordLast]) // from last, before it changes
	w[wordLast] = tm(w[wordLast])
	w[wordNextTime], w[wordNextTime+1], w[wordMruSYN] = tm(w[wordNextTime]), tm(w[wordNextTime+1]), tm(w[wordMruSYN])
	w[wordLastIdx] = zigzag(w[wordLastIdx] - b.seq)
	w[wordNextSeqs] = pairSub(w[wordNextSeqs], b.seqs)
	w[wordSynISNs] = bits.RotateLeft64(pairSub(w[wordSynISNs], b.seqs), 32)
	for i := wordKey; i < wordKey+4; i++ {
		w[i] = bits.ReverseBytes64(w[i])
	}
}

// untransform undoes transform.
func untransform(w *[streamWords]uint64, b *bases) {
	tm := func(v uint64) uint64 { return unzigzag(v) + b.ns }
	pos := func(v uint64) uint64 { return bits.RotateLeft64(v, -5) + b.pos }
	w[wordSegBuf], w[wordSegBuf+1] = tm(w[wordSegBuf]), pos(w[wordSegBuf+1])
	w[wordSegBuf+2], w[wordSegBuf+3] = tm(w[wordSegBuf+2]), pos(w[wordSegBuf+3])
	w[wordFin], w[wordFin+1] = tm(w[wordFin]), pos(w[wordFin+1])
	w[wordFin+2], w[wordFin+3] = tm(w[wordFin+2]), pos(w[wordFin+3])
	w[wordFirstAck], w[wordFirstAck+1] = tm(w[wordFirstAck]), pos(w[wordFirstAck+1])
	w[wordLast] = tm(w[wordLast])
	w[wordLastNow] = unzigzag(w[wordLastNow]) + w[wordLast] // from last, once it is back
	w[wordNextTime], w[wordNextTime+1], w[wordMruSYN] = tm(w[wordNextTime]), tm(w[wordNextTime+1]), tm(w[wordMruSYN])
	w[wordLastIdx] = unzigzag(w[wordLastIdx]) + b.seq
	w[wordNextSeqs] = pairAdd(w[wordNextSeqs], b.seqs)
	w[wordSynISNs] = pairAdd(bits.RotateLeft64(w[wordSynISNs], -32), b.seqs)
	for i := wordKey; i < wordKey+4; i++ {
		w[i] = bits.ReverseBytes64(w[i])
	}
}

// pairSub subtracts the two 32-bit halves of b from those of a, each
// apart; pairAdd undoes it.
func pairSub(a, b uint64) uint64 {
	return uint64(uint32(a)-uint32(b)) | uint64(uint32(a>>32)-uint32(b>>32))<<32
}

func pairAdd(a, b uint64) uint64 {
	return uint64(uint32(a)+uint32(b)) | uint64(uint32(a>>32)+uint32(b>>32))<<32
}

func zigzag(v uint64) uint64   { return v<<1 ^ uint64(int64(v)>>63) }
func unzigzag(v uint64) uint64 { return v>>1 ^ -(v & 1) }

// normalize clears what s holds that its shard would not read before
// writing it again: its place in the shard (ref and activity list), which
// it has none of while parked, and the segments past those each direction
// still waits to have acknowledged.
func normalize(s *stream) {
	s.ref, s.prev, s.next, s.list = 0, 0, 0, listNone
	for d := range s.data {
		clear(s.data[d].out[s.data[d].nOut:])
	}
}

// le is the byte order a record's words are written in: their
// significant bytes first.
var le = binary.LittleEndian

// byteMask holds, for each count of bytes a word is written in, the
// mask of those low bytes.
var byteMask = [16]uint64{0, 1<<8 - 1, 1<<16 - 1, 1<<24 - 1, 1<<32 - 1, 1<<40 - 1, 1<<48 - 1, 1<<56 - 1, 1<<64 - 1}

// byteLen returns how many low bytes of v are not zero, up to the last.
func byteLen(v uint64) uintptr { return uintptr(bits.Len64(v)+7) >> 3 }

// encodeStream writes s into b, which has at least parkMax bytes, and
// returns the record's length; scratch is a stream it may change, tmpl
// the shard's template (the raw words of the first stream it parked, 0
// for the others, which this sets when it is all zero).
//
// The words are written a pair at a time, each whole and little-endian
// whatever the machine's order, at the offset the ones before leave,
// which moves on by their significant bytes, the low ones: the next word
// overwrites the zero bytes past them.
func encodeStream(b []byte, s, scratch *stream, tmpl *[streamWords]uint64) int {
	_ = b[parkMax-1]
	c := scratch
	*c = *s
	normalize(c)
	w := words(c)
	if tmpl[wordSeq] == 0 {
		for i := range w {
			switch wordKind[i] {
			case wordRaw:
				tmpl[i] = w[i]
			case wordAddr:
				tmpl[i] = bits.ReverseBytes64(w[i])
			}
		}
	}
	bs := bases{ns: w[wordFirstNS], pos: w[wordFirstPos], seq: w[wordSeq], seqs: w[wordBase]}
	transform(w, &bs)
	hdr := (*[parkHeader]byte)(b)
	p := unsafe.Pointer(unsafe.SliceData(b))
	at := uintptr(parkHeader)
	for i := range streamWords / 2 {
		v0, v1 := w[2*i]^tmpl[2*i], w[2*i+1]^tmpl[2*i+1]
		n0, n1 := byteLen(v0), byteLen(v1)
		le.PutUint64((*[8]byte)(unsafe.Add(p, at))[:], v0) // b has room: parkMax
		at += n0
		le.PutUint64((*[8]byte)(unsafe.Add(p, at))[:], v1)
		at += n1
		hdr[i] = byte(n0 | n1<<4)
	}
	if streamWords%2 == 1 {
		const i = streamWords - 1
		v := w[i] ^ tmpl[i]
		le.PutUint64((*[8]byte)(unsafe.Add(p, at))[:], v)
		n := byteLen(v)
		at += n
		hdr[i/2] = byte(n)
	}
	return int(at)
}

// decodeStream reads the stream encodeStream wrote at the start of b,
// which extends at least 8 bytes past the record, into s.
func decodeStream(b []byte, s *stream, tmpl *[streamWords]uint64) {
	_ = b[parkMax-1]
	w := words(s)
	hdr := (*[parkHeader]byte)(b)
	p := unsafe.Pointer(unsafe.SliceData(b))
	at := uintptr(parkHeader)
	for i := range streamWords / 2 {
		h := hdr[i]
		n0, n1 := uintptr(h&15), uintptr(h>>4)
		w[2*i] = le.Uint64((*[8]byte)(unsafe.Add(p, at))[:])&byteMask[n0] ^ tmpl[2*i]
		at += n0
		w[2*i+1] = le.Uint64((*[8]byte)(unsafe.Add(p, at))[:])&byteMask[n1] ^ tmpl[2*i+1]
		at += n1
	}
	if streamWords%2 == 1 {
		const i = streamWords - 1
		w[i] = le.Uint64((*[8]byte)(unsafe.Add(p, at))[:])&byteMask[hdr[i/2]&15] ^ tmpl[i]
	}
	// The raw words hold the bases.
	bs := bases{ns: w[wordFirstNS], pos: w[wordFirstPos], seq: w[wordSeq], seqs: w[wordBase]}
	untransform(w, &bs)
}
