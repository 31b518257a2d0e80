package track

import (
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/netmortem/netmortem/internal/testutil"
)

// raceEnabled says the tests run under the race detector.
const raceEnabled = testutil.Race

// minorFaults returns the minor page faults of the calling thread so far.
func minorFaults(t *testing.T) int64 {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return int64(ru.Minflt) // int32 on 32-bit systems
}

// freshMemory maps n bytes no one has touched, in small pages, and unmaps
// them when the test ends.
func freshMemory(t *testing.T, n int) []byte {
	t.Helper()
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	if err := unix.Madvise(b, unix.MADV_NOHUGEPAGE); err != nil {
		t.Fatalf("madvise: %v", err)
	}
	return b
}

// touchAll reads, then writes, the first byte of every page of b, as a
// table's probes read slots before an insert writes one.
func touchAll(b []byte) (sum byte) {
	for i := 0; i < len(b); i += pageSize {
		sum += b[i]
	}
	for i := 0; i < len(b); i += pageSize {
		b[i] = 0
	}
	return sum
}

// writeFirstOn calls writeFirst on the first n values of type T in b, and
// returns the bytes they take.
func writeFirstOn[T any](b []byte, n int) []byte {
	var zero T
	writeFirst(unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n))
	return b[:uintptr(n)*unsafe.Sizeof(zero)]
}

// writeFirst touches every page the values take, whatever their size
// (smaller than a page and dividing it or not, larger than it) and their
// number (the last value written by the stride or not), so that the reads
// and writes after it take no page fault; the same reads and writes on
// memory it has not touched take faults, which shows the count is seen.
// A page writeFirst misses faults every time; the thread can also take a
// fault of the runtime's now and then (a signal's frame), so each case
// has three tries on fresh memory to take none. Under the race detector the thread also faults in the detector's own
// shadow of the memory: make test runs the test without it
// (NORACE_TESTS).
func TestWriteFirstTouchesEveryPage(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory faults on the same thread")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const pages = 3
	first := map[string]struct {
		size  uintptr
		write func(b []byte, n int) []byte
	}{
		"tableSlot":  {unsafe.Sizeof(tableSlot{}), writeFirstOn[tableSlot]},
		"synSeen":    {unsafe.Sizeof(synSeen{}), writeFirstOn[synSeen]},
		"24 bytes":   {24, writeFirstOn[[24]byte]},
		"stream":     {unsafe.Sizeof(stream{}), writeFirstOn[stream]},
		"5000 bytes": {5000, writeFirstOn[[5000]byte]},
	}
	for name, f := range first {
		for n := 1; uintptr(n)*f.size <= pages*pageSize; n++ {
			var got int64
			for range 3 {
				used := f.write(freshMemory(t, pages*pageSize), n)
				before := minorFaults(t)
				touchAll(used)
				if got = minorFaults(t) - before; got == 0 {
					break
				}
			}
			if got != 0 {
				t.Errorf("%s, %d of them: %d page faults after writeFirst, want 0", name, n, got)
				break
			}
		}
	}
	b := freshMemory(t, pages*pageSize)
	before := minorFaults(t)
	touchAll(b)
	if got := minorFaults(t) - before; got < pages {
		t.Errorf("untouched memory: %d page faults for %d pages, want at least one a page", got, pages)
	}
}
