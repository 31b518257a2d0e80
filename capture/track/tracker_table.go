package track

import "github.com/netmortem/netmortem/capture/decode"

// streamTable maps 4-tuples to a shard's live streams: an open-addressing
// table probed linearly from the slot the tuple's hash (tcpSeg.hash, made
// once when the packet is prepared) gives, each slot that hash and the
// stream's ref in the shard's store, whose key settles a match. Slots are
// 8 bytes and hold no pointer, so that a lookup reads one slot's cache
// line, then the stream it needs anyway, and the garbage collector never
// reads the table. Deletion shifts the entries that follow back, so there
// are no tombstones.
type streamTable struct {
	slots  []tableSlot // a power of two long
	region hugeRegion  // the slots' memory advised to use huge pages
	n      int
	st     *streamStore
}

type tableSlot struct {
	h   uint32
	ref uint32 // 0: empty
}

const minTable = 64

// get returns the stream of k, whose hash is h, or nil.
func (tb *streamTable) get(k *decode.Key, h uint32) *stream {
	if tb.n == 0 {
		return nil
	}
	mask := uint32(len(tb.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := tb.slots[i]
		if sl.ref == 0 {
			return nil
		}
		if sl.h == h {
			if s := tb.st.at(sl.ref); s.key.Equal(k) {
				return s
			}
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
		if sl.ref == 0 {
			*sl = tableSlot{h, s.ref}
			tb.n++
			return
		}
		if sl.h == h && tb.st.at(sl.ref).key.Equal(&s.key) {
			sl.ref = s.ref
			return
		}
	}
}

// remove takes s, whose key hashes to h, out of the table if it is there.
func (tb *streamTable) remove(s *stream, h uint32) {
	if tb.n == 0 || s.ref == 0 {
		return
	}
	mask := uint32(len(tb.slots) - 1)
	i := h & mask
	for ; tb.slots[i].ref != s.ref; i = (i + 1) & mask {
		if tb.slots[i].ref == 0 {
			return
		}
	}
	// Shift back the entries after i that probed past it.
	for j := (i + 1) & mask; tb.slots[j].ref != 0; j = (j + 1) & mask {
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
	old, oldRegion := tb.slots, tb.region
	tb.slots, tb.region = makeLarge[tableSlot](max(minTable, 2*len(old)))
	tb.n = 0
	for _, sl := range old {
		if sl.ref != 0 {
			tb.put(tb.st.at(sl.ref), sl.h)
		}
	}
	oldRegion.release()
}

// len returns how many streams the table holds.
func (tb *streamTable) len() int { return tb.n }

// reset empties the table, keeping its slots when they are few.
func (tb *streamTable) reset() {
	if len(tb.slots) > 1<<16 {
		tb.region.release()
		tb.slots, tb.region = nil, hugeRegion{}
	} else {
		clear(tb.slots)
	}
	tb.n = 0
}
