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

func setMemoryPolicy(subcommand string) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if subcommand != "flows" {
		limitMemory()
	}
}

// handOnMemory is the memory policy of flows writing the attempts as
// they come: what it keeps is what analyze keeps, with a reorder buffer,
// and its attempts are lent (handedOn), but the streams, tables and
// buffers that grow as a large capture is read leave some garbage. The
// collector runs when the heap has grown by a tenth (the streams and
// tables, most of what is live, hold no pointer, so that a collection
// costs little), under analyze's limit: collecting four times less often
// took a tenth off the bench capture's time and added 5 MB to its peak
// RSS. GOGC and GOMEMLIMIT in the environment still win.
func handOnMemory() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(10)
	}
	limitMemory()
}

// heldMemory undoes handOnMemory, for flows holding every attempt after
// all: the policy of setMemoryPolicy("flows").
func heldMemory() {
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
	debug.SetMemoryLimit(memoryFloor)
	g := &gcWatch{limit: memoryFloor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	runtime.SetFinalizer(&gcSentinel{}, g.afterGC)
}

// gcWatch raises the memory limit after a collection that found the live
// heap near it.
type gcWatch struct {
	limit  int64
	sample []metrics.Sample
}

// gcSentinel is garbage made to be collected: its finalizer runs after each
// collection and makes the next one.
type gcSentinel struct{ _ byte }

func (g *gcWatch) afterGC(*gcSentinel) {
	if debug.SetMemoryLimit(-1) != g.limit {
		return // set by someone else (batch --memory-limit): theirs
	}
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() == metrics.KindUint64 {
		live := int64(g.sample[0].Value.Uint64())
		if live+live/4 > g.limit {
			g.limit = 2 * live
			debug.SetMemoryLimit(g.limit)
		}
	}
	runtime.SetFinalizer(&gcSentinel{}, g.afterGC)
}
