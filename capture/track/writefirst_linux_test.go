package track

import (
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// minorFaults returns the minor page faults of the calling thread so far.
func minorFaults(t *testing.T) int64 {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return ru.Minflt
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

func asSlice[T any](b []byte) []T {
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b))/unsafe.Sizeof(zero))
}

// writeFirst touches every page of new memory, whatever the size of the
// values in it (smaller than a page, not dividing it, larger than it), so
// that the reads and writes after it take no page fault; the same reads
// and writes on memory it has not touched take faults, which shows the
// count is seen.
func TestWriteFirstTouchesEveryPage(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const n = 64 * pageSize
	first := map[string]func([]byte){
		"tableSlot": func(b []byte) { writeFirst(asSlice[tableSlot](b)) },
		"synSeen":   func(b []byte) { writeFirst(asSlice[synSeen](b)) },
		"24 bytes":  func(b []byte) { writeFirst(asSlice[[24]byte](b)) },
		"stream":    func(b []byte) { writeFirst(asSlice[stream](b)) },
		"5000 bytes": func(b []byte) {
			writeFirst(asSlice[[5000]byte](b))
		},
	}
	for name, write := range first {
		b := freshMemory(t, n)
		write(b)
		before := minorFaults(t)
		touchAll(b)
		if got := minorFaults(t) - before; got != 0 {
			t.Errorf("%s: %d page faults after writeFirst, want 0", name, got)
		}
	}
	b := freshMemory(t, n)
	before := minorFaults(t)
	touchAll(b)
	if got := minorFaults(t) - before; got < n/pageSize {
		t.Errorf("untouched memory: %d page faults for %d pages, want at least one a page", got, n/pageSize)
	}
}
