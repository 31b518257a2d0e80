package main

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

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
