package capture

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePages advises the kernel to back the whole huge pages within the n
// bytes at p with transparent huge pages (madvise MADV_HUGEPAGE), for
// systems whose policy is to use them only where asked
// (/sys/kernel/mm/transparent_hugepage/enabled set to madvise, as on
// Debian and Ubuntu). Each 4 KiB page of memory first touched costs a page
// fault, several microseconds inside a virtual machine: streams touch
// hundreds of megabytes of new memory on a large capture, and huge pages
// take 512 times fewer faults. The advice only changes how the memory is
// backed; a failure (no THP support, policy never) leaves it as it was.
func hugePages(p unsafe.Pointer, n uintptr) {
	start := (uintptr(p) + hugePageSize - 1) &^ (hugePageSize - 1)
	end := (uintptr(p) + n) &^ (hugePageSize - 1)
	if end <= start {
		return
	}
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, start-uintptr(p))), end-start), unix.MADV_HUGEPAGE)
}
