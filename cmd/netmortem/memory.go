package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Memory policy. netmortem builds one large, long-lived model of the
// evidence and then exits: collecting garbage four times less often
// (GOGC=400) halves the run time on large captures. Left alone, that lets
// the heap grow to five times what is live; a soft memory limit of
// memoryFloor keeps small and medium runs under it. When what is live
// comes near the limit (a capture with hundreds of thousands of
// connections open at once), the limit is raised to twice the live heap,
// so that the collector never runs back to back: memory then follows the
// live data, as with the default GOGC of 100. `flows`, which keeps every
// attempt of its captures and so grows with them, runs without the limit
// (there the limit would only cost time), unless it writes the attempts
// as they come (limitMemory). GOGC and GOMEMLIMIT in the environment
// still win.
const memoryFloor = 256 << 20

// processMemory is set by setMemoryPolicy, which main calls: the policy
// and the changes flows makes to it as it goes (handOnMemory, heldMemory,
// secondReadMemory) are the netmortem process's. run called in another
// process (the package's tests, many at once) leaves that process's
// collector as it found it: there, each flows run freeing the heap to
// the system and setting GOGC=10 for every test beside it took the
// package's longest tests from 88 to 245 CPU-seconds.
var processMemory bool

func setMemoryPolicy(subcommand string) {
	processMemory = true
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if subcommand != "flows" {
		limitMemory()
	}
}

// handOnMemory is the memory policy of flows writing the attempts as
// they come: what it keeps is what analyze keeps, with a reorder buffer,
// and its attempts are lent, and written as they come (direct, for CSV)
// or copied into batches it reuses (handedOn), so that it makes little
// garbage. The collector runs when the heap has grown to four times what
// the last collection left (GOGC=300), under analyze's limit: every
// collection reads gopacket's 5 MB tables of protocol numbers, and the
// heap grows with the streams and tables, which hold no pointer, so that
// collections early in a read find little to free. On the bench capture,
// GOGC=300 took 3.8% less CPU time than Go's default of 100 (21 pairs)
// for 1.6 MB more peak RSS; GOGC=400 (analyze's) took 3.4% fewer
// instructions than 100 but 6 MB more. Collecting at each tenth of
// growth, as flows did while its attempts left garbage, ran the
// collector 17 times, for 7% more CPU time than 100. GOGC and GOMEMLIMIT
// in the environment still win.
func handOnMemory() {
	if !processMemory {
		return
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(300)
	}
	limitMemory()
}

// secondReadMemory is the memory policy of flows' JSON and table forms
// once the captures are read: while they list the attempts kept in a
// temporary file (flowsSpool), or read the captures a second time,
// without one. What the read left is garbage: collected and given back
// now, what comes next does not come on top of it (for a second read, on
// the bench capture, a peak of 182 MB became 127). The collector then
// runs when the heap has grown by a tenth (GOGC=10): what the listing
// makes is the rows a table wraps, which at GOGC=300 took the peak to
// 216 MB (a table wrapped at 200 columns), at 25 to 162 MB and at 10 to
// 129; the default table and the JSON form make little garbage and
// collect no more often. GOGC in the environment still wins.
func secondReadMemory() {
	if !processMemory {
		return
	}
	debug.FreeOSMemory()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(10)
	}
}

// heldMemory undoes handOnMemory, for flows holding every attempt after
// all: the policy of setMemoryPolicy("flows").
func heldMemory() {
	if !processMemory {
		return
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// limitMemory sets the soft memory limit of the policy above, unless
// GOMEMLIMIT is set.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := int64(memoryFloor)
	debug.SetMemoryLimit(limit)
	afterEachGC(func(live uint64) bool {
		if debug.SetMemoryLimit(-1) != limit {
			return false // set by someone else (batch --memory-limit): theirs
		}
		// Raised after a collection that found the live heap near it.
		if l := int64(live); l+l/4 > limit {
			limit = 2 * l
			debug.SetMemoryLimit(limit)
		}
		return true
	})
}

// afterEachGC calls f with the live heap after each collection from now
// on, until f returns false.
func afterEachGC(f func(live uint64) bool) {
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
			if f(liveHeap()) {
				arm()
			}
		})
	}
	arm()
}

// gcSentinel is garbage made to be collected: its finalizer runs after each
// collection and makes the next one. It is 16 bytes so that the tiny
// allocator, which packs smaller values without pointers into shared
// 16-byte blocks, does not take it: a finalizer on such a value waits
// until every value of its block is unreachable, which a live neighbour
// can put off for good.
type gcSentinel struct{ _ [16]byte }

// liveHeap returns the bytes the last collection found live, 0 before the
// first or when the runtime does not say.
func liveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}
