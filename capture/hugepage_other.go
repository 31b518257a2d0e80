//go:build !linux

package capture

import "unsafe"

// hugePages does nothing where transparent huge pages are not asked for
// with madvise.
func hugePages(unsafe.Pointer, uintptr) {}
