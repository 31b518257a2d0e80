package track

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
)

// The stream table holds what a map would, through puts, replacements and
// removals, with hashes that collide often (few distinct low bits) so that
// probes wrap around and removals shift entries back.
func TestStreamTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var st streamStore
	tb := streamTable{st: &st}
	want := map[decode.Key]*stream{}
	keys := make([]decode.Key, 3000)
	for i := range keys {
		keys[i] = keyOf(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 1000), netip.MustParseAddrPort("10.1.0.1:80"))
	}
	hash := func(k *decode.Key) uint32 { return hashKey(k) & 0x3ff } // many collisions
	for step := range 200000 {
		k := &keys[rng.IntN(len(keys))]
		h := hash(k)
		switch rng.IntN(3) {
		case 0, 1:
			s := st.alloc()
			s.key, s.hash = *k, h
			tb.put(s, h)
			want[*k] = s
		case 2:
			if s := want[*k]; s != nil {
				tb.remove(s, h)
				delete(want, *k)
			} else {
				gone := st.alloc()
				gone.key = *k
				tb.remove(gone, h) // not there: nothing happens
			}
		}
		if got := tb.get(k, h); got != want[*k] {
			t.Fatalf("step %d: get %p, want %p", step, got, want[*k])
		}
		if tb.len() != len(want) {
			t.Fatalf("step %d: %d entries, want %d", step, tb.len(), len(want))
		}
	}
	for i := range keys {
		if got := tb.get(&keys[i], hash(&keys[i])); got != want[keys[i]] {
			t.Fatalf("key %d: get %p, want %p", i, got, want[keys[i]])
		}
	}
	tb.reset()
	if tb.len() != 0 || tb.get(&keys[0], hash(&keys[0])) != nil {
		t.Error("a reset table still holds streams")
	}
}

// A store hands out streams that never move, each at its ref, across the
// growing chunks and the full-sized ones after them.
func TestStreamStore(t *testing.T) {
	var st streamStore
	var all []*stream
	for i := range grownValues + 3*int(grownChunk) + 5 {
		s := st.alloc()
		if s.ref != uint32(i+1) || s.packets != 0 {
			t.Fatalf("stream %d: ref %d, packets %d", i, s.ref, s.packets)
		}
		s.packets = i
		all = append(all, s)
	}
	for i, s := range all {
		if got := st.at(s.ref); got != s || got.packets != i {
			t.Fatalf("ref %d: %p (packets %d), want %p", s.ref, got, got.packets, s)
		}
	}
	if len(st.chunks) != growChunks+4 {
		t.Errorf("%d chunks", len(st.chunks))
	}
}

// A key store keeps each key at the index add returned, across the
// growing chunks and the full-sized ones after them, and its first chunk
// is small: a capture with one SYN allocates no huge page for its key.
func TestKeyStore(t *testing.T) {
	var ks keyStore
	keys := make([]decode.Key, 4)
	for i := range keys {
		keys[i], _ = decode.KeyOf(netip.MustParseAddrPort(fmt.Sprintf("10.0.0.%d:%d", i+1, 1000+i)),
			netip.MustParseAddrPort("10.1.0.1:80"))
	}
	n := grownValues + 2*int(keyChunk) + 7
	for i := range n {
		if got := ks.add(&keys[i%len(keys)]); got != uint32(i) {
			t.Fatalf("add %d: index %d", i, got)
		}
		if i == 0 && len(ks.chunks[0]) != firstChunk {
			t.Fatalf("first chunk holds %d keys, want %d", len(ks.chunks[0]), firstChunk)
		}
	}
	for i := range n {
		if got := ks.at(uint32(i)); !got.Equal(&keys[i%len(keys)]) {
			t.Fatalf("key %d: %v, want %v", i, got.End(0), keys[i%len(keys)].End(0))
		}
	}
	if len(ks.chunks) != growChunks+3 || len(ks.chunks[growChunks]) != int(keyChunk) {
		t.Errorf("%d chunks, the first full-sized of %d keys", len(ks.chunks), len(ks.chunks[growChunks]))
	}
	ks.release()
}

// Streams and table slots hold no pointer, so that the garbage collector
// never reads the stores and tables of a capture's live streams.
func TestStreamsHoldNoPointer(t *testing.T) {
	for _, v := range []any{stream{}, tableSlot{}, tcpSeg{}.Key} {
		if p := pointerIn(reflect.TypeOf(v)); p != "" {
			t.Errorf("%T holds a pointer: %s", v, p)
		}
	}
}

// pointerIn names a field of typ that is or holds a pointer, "" when none.
func pointerIn(typ reflect.Type) string {
	switch typ.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Chan, reflect.Func, reflect.Interface, reflect.String, reflect.UnsafePointer:
		return typ.String()
	case reflect.Array:
		return pointerIn(typ.Elem())
	case reflect.Struct:
		for i := range typ.NumField() {
			if p := pointerIn(typ.Field(i).Type); p != "" {
				return typ.Field(i).Name + " " + p
			}
		}
	}
	return ""
}

// The sequence number table holds what a map would, through notes,
// replacements and removals of its own and others' entries, as it grows.
func TestISNTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tb isnTable
	want := map[uint32]synSeen{}
	for step := range 200000 {
		isn := uint32(rng.IntN(4000)) * 0x10001 // spread over the hash's high bits too
		seq := 1 + rng.IntN(50)
		switch rng.IntN(3) {
		case 0, 1:
			e := synSeen{seq: seq, t: int64(step), isn: isn, cd: int8(step % 2)}
			if got, w := tb.note(e), want[isn]; got != w {
				t.Fatalf("step %d: note returned %+v, want %+v", step, got, w)
			}
			want[isn] = e
		case 2:
			got := tb.forget(isn, seq)
			if w := want[isn]; w.seq == seq {
				if got != w {
					t.Fatalf("step %d: forget returned %+v, want %+v", step, got, w)
				}
				delete(want, isn)
			} else if got.seq != 0 {
				t.Fatalf("step %d: forget removed %+v, not stream %d's", step, got, seq)
			}
		}
		if tb.n != len(want) {
			t.Fatalf("step %d: %d entries, want %d", step, tb.n, len(want))
		}
	}
	for isn, e := range want {
		if i := tb.find(isn); i < 0 || tb.slots[i] != e {
			t.Fatalf("isn %d: slot %d, want %+v", isn, i, e)
		}
	}
}

// Summary mode forgets the sequence numbers of every stream it finalizes,
// those a SYN/ACK acknowledged when its SYN was not seen included, even
// when that acknowledgment is 0: no entry is left pointing at a stream a
// shard may reuse.
func TestISNForgotten(t *testing.T) {
	tr := NewTracker("c.pcap", Options{Summary: Summary{Enabled: true}})
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	frame := 0
	add := func(d time.Duration, src, dst netip.AddrPort, flags uint8, seq, ack uint32) {
		frame++
		p := decode.Packet{Pos: posFrame(frame), Time: at.Add(d), Proto: "tcp", Src: src, Dst: dst, Flags: flags, Seq: seq, Ack: ack}
		tr.Add(&p)
	}
	cli, srv := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	add(0, srv, cli, decode.SYN|decode.ACK, 500, 0) // its SYN unseen, acknowledging sequence number 0xffffffff
	add(time.Millisecond, cli, srv, decode.RST, 0, 0)
	cli2 := netip.MustParseAddrPort("10.0.0.3:40000")
	add(2*time.Millisecond, cli2, srv, decode.SYN, 1234, 0)
	add(3*time.Millisecond, srv, cli2, decode.RST|decode.ACK, 0, 1235)
	// Three minutes on, enough packets for a sweep to finalize both.
	for i := range sweepEvery {
		add(3*time.Minute+time.Duration(i)*time.Microsecond, netip.MustParseAddrPort("10.0.1.1:1"), srv, decode.ACK, uint32(i), 1)
	}
	if tr.live() != 1 {
		t.Fatalf("%d streams live, want the last one", tr.live())
	}
	if tr.synISN.n != 0 {
		t.Errorf("%d sequence numbers kept, want none", tr.synISN.n)
	}
	if kept := tr.synKeys.len() - len(tr.freeKeys); kept != 0 {
		t.Errorf("%d key copies kept, want none", kept)
	}
}

// keyOf is the key of the 4-tuple from a to b.
func keyOf(a, b netip.AddrPort) decode.Key {
	k, _ := decode.KeyOf(a, b)
	return k
}

// hashKey is k's hash, as shards look streams up by it.
func hashKey(k *decode.Key) uint32 { return k.Hash() }
