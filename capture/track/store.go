package track

import (
	"math/bits"
	"unsafe"
)

// streamStore holds a shard's streams in chunks allocated together, so
// that the hundreds of thousands of streams a large capture keeps live
// cost a few dozen allocations. A stream holds no pointer (its list
// neighbours are refs into the store), so the garbage collector never
// reads the chunks, and the large ones are backed by huge pages where the
// system offers them (hugePages). Streams never move: the Tracker keeps
// pointers to the streams shards hand it. Streams are never freed one by
// one either: the Tracker recycles them.
type streamStore struct {
	chunked[stream] // a stream's ref is its index plus one
}

// chunked holds values in chunks that never move, so that growing does
// not copy them, and that are allocated together: chunk k holds
// firstChunk<<k values for k below growChunks, then as many as two huge
// pages hold (grownChunk streams, keyChunk keys), advised to use them, so
// that a small capture allocates little and a large one whole huge pages.
// T must hold no pointer (makeLarge). Each store gives its own count of a
// grown chunk to at and next, a constant.
type chunked[T any] struct {
	chunks  [][]T
	regions []hugeRegion // the chunks' memory advised to use huge pages
	n       uint32       // values handed out
}

const (
	firstChunk  = 64
	growChunks  = 6                                // chunks 0 to 5 double in size
	grownValues = firstChunk * (1<<growChunks - 1) // values in the growing chunks
	grownChunk  = (2*hugePageSize - streamSize) / streamSize
	streamSize  = unsafe.Sizeof(stream{})
)

// chunkAt returns the chunk of a store, and the index within it, of the
// value at index i, where the grown chunks hold grown values each.
func chunkAt(i, grown uint32) (int, uint32) {
	if i >= grownValues {
		i -= grownValues
		c := i / grown
		return growChunks + int(c), i - c*grown
	}
	k := bits.Len32(i/firstChunk+1) - 1
	return k, i - firstChunk*(1<<k-1)
}

// chunksEnd returns how many values chunks 0 to k-1 of a store hold, where
// the grown chunks hold grown values each.
func chunksEnd(k int, grown uint32) uint32 {
	if k <= growChunks {
		return firstChunk * (1<<k - 1)
	}
	return grownValues + uint32(k-growChunks)*grown
}

// at returns the value at index i, where a grown chunk holds grown values.
func (c *chunked[T]) at(i, grown uint32) *T {
	k, j := chunkAt(i, grown)
	return &c.chunks[k][j]
}

// next returns a new zero value and its index, where a grown chunk holds
// grown values, adding a chunk when the last one is full.
func (c *chunked[T]) next(grown uint32) (*T, uint32) {
	if k := len(c.chunks); c.n == chunksEnd(k, grown) {
		chunk, region := makeLarge[T](int(chunksEnd(k+1, grown) - chunksEnd(k, grown)))
		c.chunks = append(c.chunks, chunk)
		if region.p != nil {
			c.regions = append(c.regions, region)
		}
	}
	// The new value is in the last chunk.
	k := len(c.chunks) - 1
	i := c.n
	c.n++
	return &c.chunks[k][i-chunksEnd(k, grown)], i
}

// release lets go of the values, giving their memory back to the system's
// default use of huge pages first.
func (c *chunked[T]) release() {
	for _, r := range c.regions {
		r.release()
	}
	*c = chunked[T]{}
}

// at returns the stream of ref (not 0).
func (st *streamStore) at(ref uint32) *stream { return st.chunked.at(ref-1, uint32(grownChunk)) }

// alloc returns a new zero stream with its ref set.
func (st *streamStore) alloc() *stream {
	s, i := st.next(uint32(grownChunk))
	s.ref = i + 1
	return s
}

// makeLarge returns a slice of n zero values of T, advised to be backed by
// huge pages when it is large enough to hold some (hugePages), and the
// region advised, which release must undo before the slice is let go.
// Such a slice starts within a value of a huge page boundary: it is cut
// from an allocation a huge page longer, whose pages outside the slice are
// not touched, and so take no memory, unless the Go runtime zeroes the
// allocation, which it does only when it reuses memory. T must hold no
// pointers, or the garbage collector would read those pages.
func makeLarge[T any](n int) ([]T, hugeRegion) {
	var zero T
	size := unsafe.Sizeof(zero)
	if size == 0 || uintptr(n)*size < hugePageSize || !hugePagesAdvised() {
		return make([]T, n), hugeRegion{}
	}
	pages := (uintptr(n+1)*size + hugePageSize - 1) / hugePageSize
	s := make([]T, ((pages+1)*hugePageSize+size-1)/size)
	base := unsafe.Pointer(unsafe.SliceData(s))
	gap := (uintptr(base)+hugePageSize-1)&^(hugePageSize-1) - uintptr(base)
	r := hugeRegion{unsafe.Add(base, gap), pages * hugePageSize}
	if !hugePages(r.p, r.n) {
		r = hugeRegion{}
	}
	skip := int((gap + size - 1) / size)
	return s[skip : skip+n : skip+n], r
}

// writeFirst writes a zero into every page of s, memory just allocated
// and not yet touched, so that a table probed before it is written (a
// lookup reads slots, an insert writes the empty one it found) touches
// each page first with a write. A page first read is mapped to the
// kernel's shared page of zeros and copied at its first write: a second
// page fault, which also flushes the page from every core's TLB, an
// interrupt to each other core the process runs on (costly inside a
// virtual machine, where it stops the other virtual processor).
func writeFirst[T any](s []T) {
	var zero T
	step := max(1, int(pageSize/unsafe.Sizeof(zero)))
	for i := 0; i < len(s); i += step {
		s[i] = zero
	}
	// Where a value's size does not divide a page, the values after the
	// last one written can reach into a page none of them starts.
	if len(s) > 0 {
		s[len(s)-1] = zero
	}
}

// pageSize is the smallest page size of the systems netmortem runs on.
const pageSize = 4096

// hugeRegion is memory advised to be backed by huge pages. Before it is
// let go, release gives it back to the system's default, where huge pages
// are used only where asked: the Go runtime will use it again for other
// values, which should not each take a huge page.
type hugeRegion struct {
	p unsafe.Pointer
	n uintptr
}

func (r hugeRegion) release() {
	if r.p != nil {
		normalPages(r.p, r.n)
	}
}

// hugePageSize is the size of a transparent huge page on the platforms
// netmortem runs on (x86-64 and arm64 with 4 KiB pages).
const hugePageSize = 2 << 20
