package main

import (
	"runtime"
	"runtime/debug"
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

// flows' second read collects at a tenth's growth, unless GOGC says
// otherwise.
func TestSecondReadMemory(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "")
	secondReadMemory()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d after the second read's policy outside the netmortem process, want it left at 100", got)
	}
	processMemory = true
	defer func() { processMemory = false }()
	secondReadMemory()
	if got := debug.SetGCPercent(100); got != 10 {
		t.Errorf("GOGC %d after the second read's policy, want 10", got)
	}
	t.Setenv("GOGC", "200")
	secondReadMemory()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d with GOGC=200 in the environment, want it left at 100", got)
	}
}
