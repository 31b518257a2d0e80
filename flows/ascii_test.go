package flows

import "testing"

// ascii, eight bytes at a time, agrees with a test of each byte: for
// every byte at every place of a buffer of printable and unprintable
// fillings, and for every pair of bytes side by side, whose borrows and
// carries could reach each other.
func TestASCII(t *testing.T) {
	each := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c >= 0x7f {
				return false
			}
		}
		return true
	}
	check := func(b []byte) {
		if got := ascii(b); got != each(b) {
			t.Fatalf("ascii(%q) = %v", b, got)
		}
	}
	b := make([]byte, 19)
	for _, fill := range []byte{0x20, 0x7e, 'a', 0x1f, 0x7f, 0x80, 0xff, 0x00} {
		for pos := range b {
			for v := range 256 {
				for i := range b {
					b[i] = fill
				}
				b[pos] = byte(v)
				check(b)
				check(b[:pos+1])
			}
		}
	}
	for i := range b {
		b[i] = 'a'
	}
	for v := range 256 {
		for w := range 256 {
			b[6], b[7], b[8] = byte(v), byte(w), byte(v)
			check(b)
		}
	}
}
