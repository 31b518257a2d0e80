package capture

import "unsafe"

// slab hands out values of T from chunks allocated together, so that the
// hundreds of thousands of streams a large capture keeps live cost a few
// hundred allocations, each large enough to be backed by huge pages where
// the system offers them (hugePages). Values are never freed one by one:
// the tracker recycles them, and a chunk goes when nothing points into it.
type slab[T any] struct {
	chunk []T
	next  int // how many values the next chunk holds
}

// Chunks start small, so that a small capture allocates little, and grow
// to about slabChunkBytes.
const (
	slabFirst      = 64
	slabChunkBytes = 8 << 20
)

// alloc returns a zero T.
func (s *slab[T]) alloc() *T {
	if len(s.chunk) == cap(s.chunk) {
		var zero T
		size := max(int(unsafe.Sizeof(zero)), 1)
		s.next = min(max(s.next*2, slabFirst), max(slabChunkBytes/size, 1))
		s.chunk = makeLarge[T](s.next)[:0]
	}
	s.chunk = s.chunk[:len(s.chunk)+1]
	return &s.chunk[len(s.chunk)-1]
}

// makeLarge returns a slice of at least n zero values of T, advised to be
// backed by huge pages when it is large enough to hold some (hugePages).
// Such a slice starts on a huge page boundary and fills its last huge
// page: it is cut from an allocation a huge page longer, whose pages
// outside the slice are never touched, and so never take memory.
func makeLarge[T any](n int) []T {
	var zero T
	size := unsafe.Sizeof(zero)
	if size == 0 || uintptr(n)*size < hugePageSize {
		return make([]T, n)
	}
	pages := (uintptr(n+1)*size + hugePageSize - 1) / hugePageSize
	s := make([]T, int(((pages+1)*hugePageSize+size-1)/size))
	base := unsafe.Pointer(unsafe.SliceData(s))
	gap := (uintptr(base)+hugePageSize-1)&^(hugePageSize-1) - uintptr(base)
	skip := (gap + size - 1) / size
	hugePages(unsafe.Add(base, gap), pages*hugePageSize)
	fits := (pages*hugePageSize - (skip*size - gap)) / size
	return s[skip : skip+fits : skip+fits]
}

// hugePageSize is the size of a transparent huge page on the platforms
// netmortem runs on (x86-64 and arm64 with 4 KiB pages).
const hugePageSize = 2 << 20
