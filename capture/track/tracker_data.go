package track

import "github.com/netmortem/netmortem/capture/decode"

// dataSizes follows one direction's data segments for model.DataSizes:
// the largest sent, the largest the peer acknowledged, and the
// retransmissions, to tell at the end which were never acknowledged at
// their size.
type dataSizes struct {
	maxSent, maxAcked int32
	// out holds the unacknowledged segments that could raise maxAcked,
	// oldest first. A segment no longer than one sent before it and not
	// yet acknowledged never could: any acknowledgment that covers it
	// covers the earlier one. So their lengths increase, and a handful
	// of them is all real traffic has (one per segment size in flight).
	out        [3]outSeg
	nOut       uint8
	unreliable bool // sequence numbers that do not follow on (relative ones after absolute ones)
	// The retransmissions, at most maxRetxKept, are in the stream's
	// streamExtra.
}

// maxSeqJump is how far a data segment's sequence numbers may lie from the
// direction's next expected one and still be compared with it.
const maxSeqJump = 1 << 24

// outSeg is a data segment waiting for its acknowledgment.
type outSeg struct {
	end uint32 // its last sequence number plus one
	len int32
}

// retxSeg is a retransmitted data segment.
type retxSeg struct {
	len int32
	at  seg
}

// maxRetxKept bounds the retransmissions a direction keeps.
const maxRetxKept = 16

// noteData records a packet of dir before its sequence numbers advance
// the stream: data sent (or sent again), and what the packet's ACK
// acknowledges of the other direction.
func (sh *shard) noteData(s *stream, dir int, p *tcpSeg, sg *segAt) {
	if p.Short {
		return
	}
	if p.Flags&decode.ACK != 0 && s.hasData&(1<<(1-dir)) != 0 {
		s.data[1-dir].acked(p.Ack)
	}
	if p.Payload <= 0 || p.Flags&(decode.SYN|decode.RST) != 0 {
		return
	}
	d := &s.data[dir]
	s.hasData |= 1 << dir
	n := int32(p.Payload)
	end := p.Seq + uint32(p.Payload)
	if off := int32(end - s.nextSeq[dir]); s.nextSet[dir] && (off > maxSeqJump || off < -maxSeqJump) {
		// Sequence numbers from another count: tcpdump's text gives the
		// SYN's absolutely and the data's relative to it.
		d.unreliable = true
		return
	}
	d.maxSent = max(d.maxSent, n)
	if s.nextSet[dir] && int32(end-s.nextSeq[dir]) <= 0 {
		if x := sh.extraOf(s); len(x.retx[dir]) < maxRetxKept {
			x.retx[dir] = append(x.retx[dir], retxSeg{len: n, at: sg.get()})
		}
		return
	}
	if n <= d.maxAcked || (d.nOut > 0 && n <= d.out[d.nOut-1].len) {
		return // its acknowledgment would not raise maxAcked
	}
	if int(d.nOut) == len(d.out) {
		copy(d.out[:], d.out[1:])
		d.nOut--
	}
	d.out[d.nOut] = outSeg{end: end, len: n}
	d.nOut++
}

// retx returns the retransmissions of direction dir that e keeps.
func (e ended) retx(dir int) []retxSeg {
	if e.x == nil {
		return nil
	}
	return e.x.retx[dir]
}

// acked takes the segments that ack covers as acknowledged.
func (d *dataSizes) acked(ack uint32) {
	k := 0
	for i := range int(d.nOut) {
		o := d.out[i]
		if int32(o.end-ack) <= 0 {
			d.maxAcked = max(d.maxAcked, o.len)
			continue
		}
		d.out[k] = o
		k++
	}
	d.nOut = uint8(k)
}

// largeRetx reports whether a direction of s retransmitted a segment
// larger than any the peer acknowledged (see model.DataSizes).
func (e ended) largeRetx() bool {
	if e.x == nil {
		return false
	}
	for dir := range e.data {
		d := &e.data[dir]
		if e.hasData&(1<<dir) == 0 || d.unreliable {
			continue
		}
		for _, r := range e.x.retx[dir] {
			if r.len > d.maxAcked {
				return true
			}
		}
	}
	return false
}
