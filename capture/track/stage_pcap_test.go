package track

import (
	"encoding/binary"
	"testing"
	"unsafe"
)

// An empty frame whose record ends its buffer is cut within the buffer:
// a slice pointing past it is a pointer the garbage collector rejects
// ("found bad pointer in Go heap"), as a capture of such a record where
// a read buffer ended met under the race detector.
func TestPlainRecordEmptyAtEnd(t *testing.T) {
	for _, before := range []int{0, 16 + 60} {
		b := make([]byte, before+16)
		if before > 0 {
			binary.LittleEndian.PutUint32(b[8:12], 60)
			binary.LittleEndian.PutUint32(b[12:16], 60)
		}
		binary.LittleEndian.PutUint32(b[before:], 1700000000)
		data, cut, _, ok := plainRecord(b, before, 1000)
		if !ok || len(data) != 0 || cut != 0 {
			t.Fatalf("record at %d: frame of %d bytes, cut %d, ok %v; want an empty frame", before, len(data), cut, ok)
		}
		start, p := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(data)))
		if p < start || p >= start+uintptr(len(b)) {
			t.Errorf("record at %d: the empty frame points at %d bytes from the buffer's start, past its %d bytes", before, p-start, len(b))
		}
	}
}
