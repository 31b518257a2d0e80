package capture

import "github.com/netmortem/netmortem/model"

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
	out        [4]outSeg
	nOut       uint8
	unreliable bool       // sequence numbers that do not follow on (relative ones after absolute ones)
	retx       *[]retxSeg // the retransmissions, at most maxRetxKept; nil until one
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
func (s *stream) noteData(dir int, p *tcpSeg, sg seg, sh *shard) {
	if p.short {
		return
	}
	if p.flags&ACK != 0 {
		if d := s.data[1-dir]; d != nil {
			d.acked(p.ack)
		}
	}
	if p.payload <= 0 || p.flags&(SYN|RST) != 0 {
		return
	}
	d := s.data[dir]
	if d == nil {
		if d = s.spare[dir]; d != nil {
			s.spare[dir] = nil
		} else {
			d = sh.dataSlab.alloc()
		}
		s.data[dir] = d
	}
	n := int32(p.payload)
	end := p.seq + uint32(p.payload)
	if off := int32(end - s.nextSeq[dir]); s.nextSet[dir] && (off > maxSeqJump || off < -maxSeqJump) {
		// Sequence numbers from another count: tcpdump's text gives the
		// SYN's absolutely and the data's relative to it.
		d.unreliable = true
		return
	}
	d.maxSent = max(d.maxSent, n)
	if s.nextSet[dir] && int32(end-s.nextSeq[dir]) <= 0 {
		if d.retx == nil {
			d.retx = new([]retxSeg)
		}
		if len(*d.retx) < maxRetxKept {
			*d.retx = append(*d.retx, retxSeg{len: n, at: sg})
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

// retxs returns the retransmissions d keeps.
func (d *dataSizes) retxs() []retxSeg {
	if d.retx == nil {
		return nil
	}
	return *d.retx
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

// sizes returns the model's view of d, nil for a direction without data.
func (t *Tracker) sizes(d *dataSizes) *model.DataSizes {
	if d == nil || d.unreliable {
		return nil
	}
	out := &model.DataSizes{MaxSent: int(d.maxSent), MaxAcked: int(d.maxAcked)}
	for _, r := range d.retxs() {
		if r.len <= d.maxAcked {
			continue
		}
		if out.LargeRetx == 0 {
			out.LargeRetxSize = int(r.len)
		}
		out.LargeRetx++
		if len(out.Retx) < 5 {
			out.Retx = append(out.Retx, t.modelSeg(r.at))
		}
	}
	return out
}

// largeRetx reports whether a direction of s retransmitted a segment
// larger than any the peer acknowledged (see model.DataSizes).
func (s *stream) largeRetx() bool {
	for _, d := range s.data {
		if d == nil || d.unreliable {
			continue
		}
		for _, r := range d.retxs() {
			if r.len > d.maxAcked {
				return true
			}
		}
	}
	return false
}
