package track

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags /proc/self/smaps gives the mapping that
// holds p.
func vmFlags(t *testing.T, p unsafe.Pointer) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= uintptr(p) && uintptr(p) < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return line
		}
	}
	t.Fatalf("no mapping holds %p", p)
	return ""
}

// A large chunk is advised to use huge pages where the system uses them
// only where asked, and given back to the default when released, so that
// the Go runtime's later use of its memory is not backed by huge pages.
func TestHugePagesReleased(t *testing.T) {
	if !hugePagesAdvised() {
		t.Skip("the system does not use huge pages only where asked (transparent_hugepage/enabled is not madvise)")
	}
	s, r := makeLarge[tableSlot](1 << 20)
	if r.p == nil || uintptr(r.p)%hugePageSize != 0 || r.n < uintptr(len(s))*unsafe.Sizeof(s[0]) {
		t.Fatalf("region %p, %d bytes, for %d slots", r.p, r.n, len(s))
	}
	if at := uintptr(unsafe.Pointer(&s[0])); at < uintptr(r.p) || at >= uintptr(r.p)+hugePageSize {
		t.Fatalf("the slice starts at %#x, outside the region's first huge page at %p", at, r.p)
	}
	if flags := vmFlags(t, r.p); !strings.Contains(flags, " hg") {
		t.Errorf("advised memory's %s", flags)
	}
	r.release()
	if flags := vmFlags(t, r.p); strings.Contains(flags, " hg") || !strings.Contains(flags, " nh") {
		t.Errorf("released memory's %s", flags)
	}
	if small, r := makeLarge[tableSlot](64); len(small) != 64 || r.p != nil {
		t.Errorf("a small slice: %d values, region %p", len(small), r.p)
	}
}
