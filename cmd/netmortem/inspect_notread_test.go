package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectDirectoryNotRead checks that inspect's table lists a
// directory the run never read under its folder, by its name.
func TestInspectDirectoryNotRead(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "bundle")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sysctl.txt"), []byte("net.ipv4.ip_forward = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := signalContext
	signalContext = func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // interrupted before anything is read
		return ctx, cancel
	}
	defer func() { signalContext = saved }()
	code, out, _ := runCLI(t, "inspect", "--width", "200", dir)
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "not read: the run was cut short before it") {
			row = l
		}
	}
	if code != exitUnreadable || !strings.Contains(row, "bundle/") {
		t.Errorf("exit %d, the directory's row %q; want it named bundle/:\n%s", code, row, out)
	}
}
