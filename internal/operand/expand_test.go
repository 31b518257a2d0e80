package operand

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDropInside: what reading a directory does not reach is kept: a path
// under one of its hidden directories (not walked), a link's target outside
// it; a link to a file inside it is that file.
func TestDropInside(t *testing.T) {
	q := t.TempDir()
	outside := t.TempDir()
	for _, p := range []string{filepath.Join(q, "a.txt"), filepath.Join(q, ".h", "b.txt"), filepath.Join(q, ".c.txt"), filepath.Join(outside, "o.txt")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("net.core.somaxconn = 4096\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "o.txt"), filepath.Join(q, "out-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(q, "a.txt"), filepath.Join(q, "in-link")); err != nil {
		t.Fatal(err)
	}
	j := func(p string) string { return filepath.Join(q, p) }
	args := []string{j("a.txt"), q, j(".h"), j(".h/b.txt"), j(".c.txt"), j("out-link"), j("in-link"), j("missing"), "-"}
	got := DropInside(args, nil)
	want := []string{q, j(".h"), j("out-link"), j("missing"), "-"}
	if !slices.Equal(got, want) {
		t.Errorf("DropInside(%q)\n = %q\nwant %q", args, got, want)
	}
}
