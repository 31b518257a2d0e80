package decode

import (
	"net/netip"
	"testing"
)

// TestKeyEqual holds Key.Equal to ==, and Key.EndHash to telling apart
// the ends it says differ, on keys that differ in one field at a time.
func TestKeyEqual(t *testing.T) {
	ends := []netip.AddrPort{
		netip.MustParseAddrPort("10.0.0.1:40000"),
		netip.MustParseAddrPort("10.0.0.1:40001"),
		netip.MustParseAddrPort("10.0.0.2:40000"),
		netip.MustParseAddrPort("10.0.1.1:80"),
		netip.MustParseAddrPort("[::ffff:10.0.0.1]:40000"),
		netip.MustParseAddrPort("[fd00::1]:40000"),
		netip.MustParseAddrPort("[fd00::1:0:0:0:1]:40000"),
		netip.MustParseAddrPort("[fd00::2]:80"),
	}
	var keys []Key
	for _, a := range ends {
		for _, b := range ends {
			if a != b {
				k, _ := KeyOf(a, b)
				keys = append(keys, k)
			}
		}
	}
	mixed := keys[0]
	mixed.v4 = !mixed.v4
	keys = append(keys, mixed)
	for i := range keys {
		for j := range keys {
			a, b := &keys[i], &keys[j]
			if got, want := a.Equal(b), *a == *b; got != want {
				t.Errorf("%v.Equal(%v) = %v, want %v", *a, *b, got, want)
			}
			for e := range 2 {
				if a.End(e) == b.End(e) && a.EndHash(e) != b.EndHash(e) {
					t.Errorf("end %d of %v and %v: same end, hashes %#x and %#x", e, *a, *b, a.EndHash(e), b.EndHash(e))
				}
			}
		}
	}
	if h0, h1 := keys[0].EndHash(0), keys[0].EndHash(1); h0 == h1 {
		t.Errorf("ends %v and %v hash alike: %#x", keys[0].End(0), keys[0].End(1), h0)
	}
}
