package track

import "github.com/netmortem/netmortem/capture/decode"

// streamTable maps 4-tuples to a shard's live streams: an open-addressing
// table probed linearly from the slot the tuple's hash (tcpSeg.hash, made
// once when the packet is prepared) gives, each slot that hash and the
// stream's ref in the shard's store, whose key settles a match. Slots are
// 8 bytes and hold no pointer, so that a lookup reads one slot's cache
// line, then the stream it needs anyway, and the garbage collector never
// reads the table. A parked stream's slot holds its id in the shard's
// parkStore (parkedRef set), and its key is read from its record.
// Deletion shifts the entries that follow back, so there are no
// tombstones.
type streamTable struct {
	slots  []tableSlot // a power of two long
	region hugeRegion  // the slots' memory advised to use huge pages
	n      int
	st     *streamStore
	pk     *parkStore
	// loaded is the parked stream keyAt last decoded, of ref loadedRef.
	loaded    stream
	loadedRef uint32
}

type tableSlot struct {
	h   uint32
	ref uint32 // 0: empty; with parkedRef, a parked stream's id
}

const minTable = 64

// find returns the index of the slot of k, whose hash is h, or -1 when
// the table has none. A parked stream's key is read from its record,
// decoded into tb.loaded.
func (tb *streamTable) find(k *decode.Key, h uint32) int {
	i, _ := tb.findStream(k, h)
	return i
}

// findStream is find, returning also the stream of a slot whose stream is
// whole (not parked), as its key was compared.
func (tb *streamTable) findStream(k *decode.Key, h uint32) (int, *stream) {
	if tb.n == 0 {
		return -1, nil
	}
	mask := uint32(len(tb.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := tb.slots[i]
		if sl.ref == 0 {
			return -1, nil
		}
		if sl.h != h {
			continue
		}
		if sl.ref&parkedRef == 0 {
			if s := tb.st.at(sl.ref); s.key.Equal(k) {
				return int(i), s
			}
		} else if tb.keyAt(sl.ref).Equal(k) {
			return int(i), nil
		}
	}
}

// keyAt returns the key of the stream of ref, decoding it into tb.loaded
// when it is parked.
func (tb *streamTable) keyAt(ref uint32) *decode.Key {
	if ref&parkedRef == 0 {
		return &tb.st.at(ref).key
	}
	tb.load(ref)
	return &tb.loaded.key
}

// load decodes the parked stream of ref into tb.loaded, its ref set to
// ref (the shard's streamExtra of a parked stream is kept by that ref).
func (tb *streamTable) load(ref uint32) {
	tb.pk.load(ref&parkIDs, &tb.loaded)
	tb.loaded.ref, tb.loadedRef = ref, ref
}

// get returns the stream of k, whose hash is h, or nil; for a parked
// stream, a copy, which is not to be changed.
func (tb *streamTable) get(k *decode.Key, h uint32) *stream {
	i := tb.find(k, h)
	switch {
	case i < 0:
		return nil
	case tb.slots[i].ref&parkedRef != 0:
		return &tb.loaded
	}
	return tb.st.at(tb.slots[i].ref)
}

// slotOf returns the index of the slot of ref, whose key hashes to h, or
// -1.
func (tb *streamTable) slotOf(h, ref uint32) int {
	if tb.n == 0 || ref == 0 {
		return -1
	}
	mask := uint32(len(tb.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch tb.slots[i].ref {
		case ref:
			return int(i)
		case 0:
			return -1
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
		if sl.h == h && tb.keyAt(sl.ref).Equal(&s.key) {
			sl.ref = s.ref
			return
		}
	}
}

// remove takes s, whose key hashes to h, out of the table if it is there.
func (tb *streamTable) remove(s *stream, h uint32) {
	k := tb.slotOf(h, s.ref)
	if k < 0 {
		return
	}
	mask := uint32(len(tb.slots) - 1)
	i := uint32(k)
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
	writeFirst(tb.slots)
	mask := uint32(len(tb.slots) - 1)
	for _, sl := range old {
		if sl.ref == 0 {
			continue
		}
		i := sl.h & mask
		for tb.slots[i].ref != 0 {
			i = (i + 1) & mask
		}
		tb.slots[i] = sl
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
