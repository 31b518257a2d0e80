package main

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

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

// afterEachGC's function runs after each collection until it returns
// false, even with small values allocated beside its sentinel and kept
// live (a finalizer on a value of the tiny allocator's blocks waits for
// its whole block).
func TestAfterEachGC(t *testing.T) {
	var calls atomic.Int32
	afterEachGC(func(uint64) bool { return calls.Add(1) < 3 })
	var kept []*[1]byte
	for i := 0; i < 200 && calls.Load() < 3; i++ {
		kept = append(kept, new([1]byte))
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(kept)
	if n := calls.Load(); n != 3 {
		t.Errorf("called after %d collections, want 3", n)
	}
	for range 3 {
		runtime.GC()
	}
	time.Sleep(10 * time.Millisecond)
	if n := calls.Load(); n != 3 {
		t.Errorf("called %d times: not stopped by false", n)
	}
}
