package capture

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// noHugePages is set by NETMORTEM_HUGEPAGES=off: no memory is advised to
// use huge pages, for systems where finding them stalls (a heavily
// fragmented memory with /sys/kernel/mm/transparent_hugepage/defrag set to
// compact for advised memory).
var noHugePages = os.Getenv("NETMORTEM_HUGEPAGES") == "off"

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
	if end <= start || noHugePages {
		return
	}
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, start-uintptr(p))), end-start), unix.MADV_HUGEPAGE)
}
