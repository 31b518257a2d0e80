package capture

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

// The stream table holds what a map would, through puts, replacements and
// removals, with hashes that collide often (few distinct low bits) so that
// probes wrap around and removals shift entries back.
func TestStreamTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tb streamTable
	want := map[tupleKey]*stream{}
	keys := make([]tupleKey, 3000)
	for i := range keys {
		keys[i] = keyOf(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 1000), netip.MustParseAddrPort("10.1.0.1:80"))
	}
	hash := func(k *tupleKey) uint32 { return hashKey(k) & 0x3ff } // many collisions
	for step := range 200000 {
		k := &keys[rng.IntN(len(keys))]
		h := hash(k)
		switch rng.IntN(3) {
		case 0, 1:
			s := &stream{key: *k, hash: h}
			tb.put(s, h)
			want[*k] = s
		case 2:
			if s := want[*k]; s != nil {
				tb.remove(s, h)
				delete(want, *k)
			} else {
				tb.remove(&stream{key: *k}, h) // not there: nothing happens
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
