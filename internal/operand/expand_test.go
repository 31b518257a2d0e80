package operand

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestExpandLinkOut: a "**" pattern reads its own folder only; a link in
// it leading out (up -> "..", a file link into a sibling) is matched,
// listed in Outside and refused by Open, and does not hide the folder.
func TestExpandLinkOut(t *testing.T) {
	root := t.TempDir()
	t1, t2 := filepath.Join(root, "T1"), filepath.Join(root, "T2")
	for _, p := range []string{filepath.Join(t1, "sysctl.txt"), filepath.Join(t2, "sysctl.txt")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("net.core.somaxconn = 4096\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("..", filepath.Join(t1, "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../T2/sysctl.txt", filepath.Join(t1, "t2.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sysctl.txt", filepath.Join(t1, "same.txt")); err != nil {
		t.Fatal(err)
	}
	e, err := Expand(t.Context(), []string{filepath.Join(t1, "**")}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	up, t2txt := filepath.Join(t1, "up"), filepath.Join(t1, "t2.txt")
	if !e.Outside[up] || !e.Outside[t2txt] || len(e.Outside) != 2 {
		t.Errorf("Outside = %v, want %s and %s", e.Outside, up, t2txt)
	}
	if !slices.Contains(e.Paths, t1) || !slices.Contains(e.Paths, up) {
		t.Errorf("Paths = %q, want %s and %s among them", e.Paths, t1, up)
	}
	opened := Open(t.Context(), e, nil)
	for _, p := range []string{up, t2txt} {
		if !slices.Contains(opened.Refused, p) {
			t.Errorf("Open refused %q, want %s among them", opened.Refused, p)
		}
	}
	if !errors.Is(opened.Err, ErrOutside) {
		t.Errorf("Open: err %v, want ErrOutside", opened.Err)
	}
	for _, in := range opened.Snap.Inputs {
		if in.Skipped == "" && strings.Contains(in.Path, "T2") {
			t.Errorf("read %s, outside T1", in.Path)
		}
	}
	read := 0
	for _, in := range opened.Snap.Inputs {
		if in.Skipped == "" {
			read++
		}
	}
	if read == 0 {
		t.Errorf("nothing of T1 read: %+v", opened.Snap.Inputs)
	}
}
