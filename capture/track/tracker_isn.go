package track

import "math/bits"

// isnTable maps sequence numbers to the live stream whose first SYN last
// had each (summary mode's noteSYN): an open-addressing table probed
// linearly from the slot the number's Fibonacci hash gives, so that
// noting a SYN, or forgetting a stream's, takes one probe where a map
// takes two. Deletion shifts the entries that follow back, so there are
// no tombstones.
type isnTable struct {
	slots []synSeen // a power of two long; seq is 0 in an empty slot
	shift uint      // 32 minus the log2 of len(slots)
	n     int
}

// synSeen is a stream's first SYN: its sequence number, the stream (by
// its creation order, stream.seq, never 0), the SYN's time, the stream's
// client direction as the SYN showed it, the low 16 bits of the hashes of
// its client and server ends (Key.EndHash), which tell most streams that
// share neither end apart without reading their keys, and where the
// Tracker keeps a copy of its key (Tracker.synKeys) and its orientation.
// The table holds no pointer into the shards' stores: a shard may park a
// closed stream (park.go) and reuse its memory while the stream's first
// SYN is still noted.
type synSeen struct {
	seq        int
	t          int64
	isn        uint32
	kref       uint32
	cliH, srvH uint16
	cd         int8
	aHi        bool
}

// home returns the slot isn's probe starts from.
func (tb *isnTable) home(isn uint32) uint32 {
	return (isn * 0x9e3779b1) >> tb.shift
}

// find returns the index of isn's slot, or of the empty slot where it
// would go; -1 when the table has no slots.
func (tb *isnTable) find(isn uint32) int {
	if len(tb.slots) == 0 {
		return -1
	}
	mask := uint32(len(tb.slots) - 1)
	for i := tb.home(isn); ; i = (i + 1) & mask {
		if sl := &tb.slots[i]; sl.seq == 0 || sl.isn == isn {
			return int(i)
		}
	}
}

// note returns the entry isn had (seq 0 when none) and makes e its entry.
func (tb *isnTable) note(e synSeen) synSeen {
	if (tb.n+1)*4 > len(tb.slots)*3 {
		tb.grow()
	}
	sl := &tb.slots[tb.find(e.isn)]
	old := *sl
	if old.seq == 0 {
		tb.n++
	}
	*sl = e
	return old
}

// forget removes isn's entry if it is that of the stream created as seq,
// and returns the entry removed (seq 0 when none).
func (tb *isnTable) forget(isn uint32, seq int) synSeen {
	i := tb.find(isn)
	if i < 0 || tb.slots[i].seq != seq {
		return synSeen{}
	}
	gone := tb.slots[i]
	mask := len(tb.slots) - 1
	// Shift back the entries after i that probed past it.
	for j := (i + 1) & mask; tb.slots[j].seq != 0; j = (j + 1) & mask {
		home := int(tb.home(tb.slots[j].isn))
		if (j-home)&mask >= (j-i)&mask {
			tb.slots[i] = tb.slots[j]
			i = j
		}
	}
	tb.slots[i] = synSeen{}
	tb.n--
	return gone
}

func (tb *isnTable) grow() {
	old := tb.slots
	size := max(64, 2*len(old))
	tb.slots = make([]synSeen, size)
	writeFirst(tb.slots)
	tb.shift = uint(32 - bits.Len(uint(size-1)))
	tb.n = 0
	for _, e := range old {
		if e.seq != 0 {
			tb.slots[tb.find(e.isn)] = e
			tb.n++
		}
	}
}
