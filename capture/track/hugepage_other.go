//go:build !linux

package track

import "unsafe"

// Elsewhere than Linux, no memory is advised to use huge pages.
func hugePagesAdvised() bool                 { return false }
func hugePages(unsafe.Pointer, uintptr) bool { return false }
func normalPages(unsafe.Pointer, uintptr)    {}
