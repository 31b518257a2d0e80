package capture

// streamTable maps 4-tuples to a shard's live streams: an open-addressing
// table probed linearly from the slot the tuple's hash (Packet.hash, made
// once when the packet is prepared) gives, each slot that hash's low bits
// and the stream, whose key settles a match. Slots are 16 bytes, so that a
// lookup reads one slot's cache line, then the stream it needs anyway; a
// Go map of 38-byte keys reads more. Deletion shifts the entries that
// follow back, so there are no tombstones.
type streamTable struct {
	slots []tableSlot // a power of two long
	n     int
}

type tableSlot struct {
	h uint32
	s *stream
}

const minTable = 64

// get returns the stream of k, whose hash is h, or nil.
func (tb *streamTable) get(k *tupleKey, h uint32) *stream {
	if tb.n == 0 {
		return nil
	}
	mask := uint32(len(tb.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := &tb.slots[i]
		if sl.s == nil {
			return nil
		}
		if sl.h == h && sl.s.key == *k {
			return sl.s
		}
	}
}

// put makes s, whose key hashes to h, the stream of its key, replacing
// the one there was.
func (tb *streamTable) put(s *stream, h uint32) {
	if (tb.n+1)*4 > len(tb.slots)*3 {
		tb.grow()
	}
	mask := uint32(len(tb.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := &tb.slots[i]
		if sl.s == nil {
			*sl = tableSlot{h, s}
			tb.n++
			return
		}
		if sl.h == h && sl.s.key == s.key {
			sl.s = s
			return
		}
	}
}

// remove takes s, whose key hashes to h, out of the table if it is there.
func (tb *streamTable) remove(s *stream, h uint32) {
	if tb.n == 0 {
		return
	}
	mask := uint32(len(tb.slots) - 1)
	i := h & mask
	for ; tb.slots[i].s != s; i = (i + 1) & mask {
		if tb.slots[i].s == nil {
			return
		}
	}
	// Shift back the entries after i that probed past it.
	for j := (i + 1) & mask; tb.slots[j].s != nil; j = (j + 1) & mask {
		home := tb.slots[j].h & mask
		if (j-home)&mask >= (j-i)&mask {
			tb.slots[i] = tb.slots[j]
			i = j
		}
	}
	tb.slots[i] = tableSlot{}
	tb.n--
}

func (tb *streamTable) grow() {
	old := tb.slots
	tb.slots = makeLarge[tableSlot](max(minTable, 2*len(old)))
	tb.n = 0
	for _, sl := range old {
		if sl.s != nil {
			tb.put(sl.s, sl.h)
		}
	}
}

// len returns how many streams the table holds.
func (tb *streamTable) len() int { return tb.n }

// reset empties the table, keeping its slots when they are few.
func (tb *streamTable) reset() {
	if len(tb.slots) > 1<<16 {
		tb.slots = nil
	} else {
		clear(tb.slots)
	}
	tb.n = 0
}
