package track

import (
	"bytes"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePagesAdvised reports whether memory is advised to use huge pages:
// when the system backs memory with transparent huge pages only where
// asked (/sys/kernel/mm/transparent_hugepage/enabled set to madvise, as on
// Debian and Ubuntu); not where it does everywhere already (always) or
// nowhere (never), and not when NETMORTEM_HUGEPAGES=off, for systems where
// finding huge pages stalls (a heavily fragmented memory with
// /sys/kernel/mm/transparent_hugepage/defrag set to compact for advised
// memory).
var hugePagesAdvised = sync.OnceValue(func() bool {
	if os.Getenv("NETMORTEM_HUGEPAGES") == "off" {
		return false
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && bytes.Contains(mode, []byte("[madvise]"))
})

// hugePages advises the kernel to back the whole huge pages within the n
// bytes at p with transparent huge pages (madvise MADV_HUGEPAGE), and
// reports whether it took the advice. Each 4 KiB page of memory first
// touched costs a page fault, several microseconds inside a virtual
// machine: streams touch hundreds of megabytes of new memory on a large
// capture, and huge pages take 512 times fewer faults. The advice only
// changes how the memory is backed.
func hugePages(p unsafe.Pointer, n uintptr) bool {
	return advise(p, n, unix.MADV_HUGEPAGE)
}

// normalPages takes the advice of hugePages back (MADV_NOHUGEPAGE: where
// huge pages are used only where asked, as not asked), and gives the
// memory back to the system at once (MADV_DONTNEED: it reads as zeros if
// it is read again, as the Go runtime zeroes memory it reuses anyway).
func normalPages(p unsafe.Pointer, n uintptr) {
	advise(p, n, unix.MADV_NOHUGEPAGE)
	advise(p, n, unix.MADV_DONTNEED)
}

// advise gives the advice to the whole huge pages within the n bytes at p.
func advise(p unsafe.Pointer, n uintptr, advice int) bool {
	start := (uintptr(p) + hugePageSize - 1) &^ (hugePageSize - 1)
	end := (uintptr(p) + n) &^ (hugePageSize - 1)
	if end <= start {
		return false
	}
	return unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, start-uintptr(p))), end-start), advice) == nil
}
