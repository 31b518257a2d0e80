package capture

import (
	"net/netip"

	"github.com/netmortem/netmortem/model"
)

// settleMark does, in capture order, what a shard left in m: it
// finalizes the stream a SYN ended by reusing its 4-tuple, and notes a
// first SYN for summary mode.
func (t *Tracker) settleMark(m *mark) {
	if m.retired.stream != nil {
		t.finalize(m.retired)
		m.retired = ended{}
	}
	if m.noted != nil {
		t.noteSYN(m.noted, m.noteISN, m.ns, m.noteCli)
		m.noted = nil
	}
}

// settle records, in capture order, ICMP errors and ARP claims, which
// concern the whole capture.
func (t *Tracker) settle(p *Packet) {
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
}

// settleSwept finalizes the streams the shards' sweeps retired, in the
// order one shard would have retired them: the open list's before the
// closed list's, each in the order of the streams' last packets. It empties
// swept.
func (t *Tracker) settleSwept(swept [][2][]ended) {
	var at [maxShards]int
	for l := range 2 {
		clear(at[:])
		for {
			var next ended
			from := -1
			for i := range swept {
				if q := swept[i][l]; at[i] < len(q) && (next.stream == nil || q[at[i]].lastIdx < next.lastIdx) {
					next, from = q[at[i]], i
				}
			}
			if next.stream == nil {
				break
			}
			at[from]++
			t.finalize(next)
		}
	}
	for i := range swept {
		for l := range 2 {
			clear(swept[i][l])
			swept[i][l] = swept[i][l][:0]
		}
	}
}

// doneChunk is how many finalized attempts are kept per chunk.
const doneChunk = 4096

// finalize turns s, retired by its shard, into an attempt (or folds it
// into its endpoint's counters) and forgets it.
func (t *Tracker) finalize(e ended) {
	t.conclude(e)
	t.recycled[e.shard] = append(t.recycled[e.shard], e.stream)
}

// finishStreams finalizes every stream still live, in the order one shard
// would have retired them all (the open list's, then the closed list's,
// each in the order of the streams' last packets), straight from the
// shards' activity lists. Nothing comes after: the streams are not
// recycled.
func (t *Tracker) finishStreams() {
	for l := range 2 {
		for {
			var next *stream
			var from *shard
			for _, sh := range t.shards {
				if h := sh.lists[l].head; h != 0 {
					if s := sh.store.at(h); next == nil || s.lastIdx < next.lastIdx {
						next, from = s, sh
					}
				}
			}
			if next == nil {
				break
			}
			from.unlink(next)
			t.conclude(ended{next, from.takeExtra(next)})
		}
	}
	for _, sh := range t.shards {
		sh.streams.reset()
	}
}

// giveBack hands the recycled streams back to their shards.
func (t *Tracker) giveBack() {
	for i, l := range t.recycled {
		if len(l) > 0 {
			sh := t.shards[i]
			sh.free = append(sh.free, l...)
			clear(l)
			t.recycled[i] = l[:0]
		}
	}
}

// conclude is finalize but for the recycling.
func (t *Tracker) conclude(e ended) {
	s := e.stream
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
	if t.summarize && e.outer() == nil {
		// Folded straight from the stream: no attempt is built for it.
		switch outcome {
		case model.OutcomeEstablished:
			switch s.connState(s.clientDir()) {
			case "SF", "S1", "S2", "S3":
				if !e.largeRetx() && !s.icmp { // a stalled transfer, or one an ICMP error quotes, is kept for the rules
					t.fold(e, outcome)
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
					t.foldInto(t.acc(hk.server, outcome), e)
					return
				case hostFull || int(t.failKept[ek]) >= t.keepFailed:
					t.foldInto(t.acc(server, outcome), e)
					return
				}
				t.failKept[ek]++
				t.failKept[hk]++
			}
		}
	}
	a := t.attempt(e)
	if n := len(t.done); n == 0 || len(t.done[n-1]) == cap(t.done[n-1]) {
		t.done = append(t.done, make([]model.Attempt, 0, doneChunk))
	}
	last := &t.done[len(t.done)-1]
	*last = append(*last, a)
	t.nDone++
	t.doneSeq = append(t.doneSeq, s.seq)
}
