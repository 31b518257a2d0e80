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
// buffers that grow as a capture is read leave some garbage. The
// collector runs when the heap has grown by a tenth, or by handOnStep
// while a tenth is less (gcStep), under analyze's limit: the streams and
// tables, most of what is live, hold no pointer, but every collection
// reads gopacket's 5 MB tables of protocol numbers, and a tenth of a
// small heap ran it every few hundred kB, a third of flows' instructions
// on an 18 MB capture. Collecting four times less often would take a
// tenth off the bench capture's time and add 5 MB to its peak RSS. GOGC
// and GOMEMLIMIT in the environment still win.
func handOnMemory() {
	if os.Getenv("GOGC") == "" {
		g := &gcStep{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
		g.set()
		runtime.SetFinalizer(&gcSentinel{}, g.afterGC)
	}
	limitMemory()
}

// handOnStep is the least the heap grows by between two of handOnMemory's
// collections.
const handOnStep = 4 << 20

// gcStep sets GOGC after each collection so that the next comes once the
// heap has grown by a tenth, or by handOnStep if that is more.
type gcStep struct {
	sample  []metrics.Sample
	percent int
	stopped bool // GOGC was set by someone else (heldMemory)
}

// set sets GOGC from the live heap the last collection found.
func (g *gcStep) set() {
	metrics.Read(g.sample)
	var live uint64
	if g.sample[0].Value.Kind() == metrics.KindUint64 {
		live = g.sample[0].Value.Uint64()
	}
	if p := stepPercent(live); p != g.percent {
		g.percent = p
		debug.SetGCPercent(p)
	}
}

// stepPercent returns the GOGC that makes the next collection come once
// a heap of live bytes has grown by a tenth, or by handOnStep if that is
// more, and by at most its size.
func stepPercent(live uint64) int {
	if live == 0 {
		return 100
	}
	return int(max(10, min(handOnStep*100/live, 100)))
}

func (g *gcStep) afterGC(*gcSentinel) {
	if g.stopped {
		return
	}
	if cur := debug.SetGCPercent(g.percent); cur != g.percent {
		debug.SetGCPercent(cur) // set by someone else: theirs
		g.stopped = true
		return
	}
	g.set()
	runtime.SetFinalizer(&gcSentinel{}, g.afterGC)
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
