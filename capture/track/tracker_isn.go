package track

import "math/bits"

// isnTable maps sequence numbers to the live stream whose first SYN last
// had each (summary mode's noteSYN): an open-addressing table probed
// linearly from the slot the number's Fibonacci hash gives, so that
// noting a SYN, or forgetting a stream's, takes one probe where a map
// takes two. Deletion shifts the entries that follow back, so there are
// no tombstones.
type isnTable struct {
	slots []synSeen // a power of two long; s is nil in an empty slot
	shift uint      // 32 minus the log2 of len(slots)
	n     int
}

// synSeen is a stream's first SYN: its sequence number, the stream, the
// SYN's time, the stream's client direction as the SYN showed it, and the
// low 16 bits of the hashes of its client and server ends (Key.EndHash),
// which tell most streams that share neither end apart without reading
// them. (Only the stream's immutable key is read through s: its shard may
// be changing the rest.)
type synSeen struct {
	s          *stream
	t          int64
	isn        uint32
	cliH, srvH uint16
	cd         int8
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
		if sl := &tb.slots[i]; sl.s == nil || sl.isn == isn {
			return int(i)
		}
	}
}

// note returns the entry isn had (s nil when none) and makes e its entry.
func (tb *isnTable) note(e synSeen) synSeen {
	if (tb.n+1)*4 > len(tb.slots)*3 {
		tb.grow()
	}
	sl := &tb.slots[tb.find(e.isn)]
	old := *sl
	if old.s == nil {
		tb.n++
	}
	*sl = e
	return old
}

// forget removes isn's entry if it is s's.
func (tb *isnTable) forget(isn uint32, s *stream) {
	i := tb.find(isn)
	if i < 0 || tb.slots[i].s != s {
		return
	}
	mask := len(tb.slots) - 1
	// Shift back the entries after i that probed past it.
	for j := (i + 1) & mask; tb.slots[j].s != nil; j = (j + 1) & mask {
		home := int(tb.home(tb.slots[j].isn))
		if (j-home)&mask >= (j-i)&mask {
			tb.slots[i] = tb.slots[j]
			i = j
		}
	}
	tb.slots[i] = synSeen{}
	tb.n--
}

func (tb *isnTable) grow() {
	old := tb.slots
	size := max(64, 2*len(old))
	tb.slots = make([]synSeen, size)
	tb.shift = uint(32 - bits.Len(uint(size-1)))
	tb.n = 0
	for _, e := range old {
		if e.s != nil {
			tb.slots[tb.find(e.isn)] = e
			tb.n++
		}
	}
}
