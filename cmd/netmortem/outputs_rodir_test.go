//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An existing file is replaced through a temporary file beside it: when
// that cannot be created, the message says so and names the directory,
// not the file, which is intact.
func TestOutputTemporaryFileFails(t *testing.T) {
	dir := t.TempDir()
	// A name of 250 bytes: the temporary file's, longer, is too long.
	long := filepath.Join(dir, strings.Repeat("r", 245)+".json")
	cases := map[string]string{long: "file name too long"}
	if os.Getuid() != 0 { // root writes in a read-only directory
		ro := filepath.Join(dir, "rodir")
		if err := os.Mkdir(ro, 0o755); err != nil {
			t.Fatal(err)
		}
		cases[filepath.Join(ro, "existing.json")] = "permission denied"
		defer os.Chmod(ro, 0o755)
	}
	for path, why := range cases {
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Dir(path), 0o555)
		code, _, stderr := runCLI(t, "analyze", "-q", "-o", "json="+path, incident)
		os.Chmod(filepath.Dir(path), 0o755)
		want := "write " + path + ": create a temporary file in " + filepath.Dir(path) + ": " + why
		if code != exitUnreadable || !strings.Contains(stderr, want) {
			t.Errorf("-o json=%s: exit %d, stderr %q, want %q", path, code, stderr, want)
		}
		if b, _ := os.ReadFile(path); string(b) != "old" {
			t.Errorf("%s: %q, want it intact", path, b)
		}
	}
}
