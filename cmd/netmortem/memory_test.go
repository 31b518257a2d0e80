package main

import "testing"

// flows writing as it goes collects when the heap has grown by a tenth,
// or by 4 MB while a tenth is less, and by at most the heap's size.
func TestStepPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{1 * mb, 100},
		{4 * mb, 100},
		{8 * mb, 50},
		{16 * mb, 25},
		{40 * mb, 10},
		{140 * mb, 10},
		{4096 * mb, 10},
	} {
		if got := stepPercent(c.live); got != c.want {
			t.Errorf("live %d MB: GOGC %d, want %d", c.live/mb, got, c.want)
		}
	}
}
