//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// jsonAlone is what analyze -o json prints for the incident.
func jsonAlone(t *testing.T) string {
	t.Helper()
	code, out, stderr := runCLI(t, "analyze", "-q", "-o", "json", incident)
	if code != exitFindings || !strings.HasPrefix(out, "{") {
		t.Fatalf("-o json: exit %d; stderr:\n%s", code, stderr)
	}
	return out
}

// assertMode fails unless path (not followed) has the type and
// permissions of want.
func assertMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode() & (fs.ModeType | fs.ModePerm); got != want {
		t.Errorf("%s: mode %v, want %v", path, got, want)
	}
}

// A FIFO is written in place: its reader gets the report, and the FIFO
// stays.
func TestOutputToFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "report.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		f, err := os.Open(fifo) // blocks until netmortem opens it to write
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(b)
	}()
	code, _, stderr := runCLI(t, "analyze", "-q", "-o", "json="+fifo, incident)
	if code != exitFindings || stderr != "" {
		t.Errorf("-o json=FIFO: exit %d, stderr %q", code, stderr)
	}
	assertMode(t, fifo, fs.ModeNamedPipe|0o600)
	select {
	case read := <-got:
		if read != jsonAlone(t) {
			t.Errorf("the FIFO's reader got %.200q, not the report", read)
		}
	case <-time.After(time.Minute):
		t.Errorf("the FIFO's reader got nothing: netmortem did not open it")
	}

	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files beside the FIFO: %v", entries)
	}
}

// A symbolic link to a regular file has its target replaced and stays a
// link; a link to nothing creates its target.
func TestOutputThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "reports"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "reports", "report.json")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "latest.json")
	if err := os.Symlink("reports/report.json", link); err != nil {
		t.Fatal(err)
	}
	// A link to the link, from another directory.
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	link2 := filepath.Join(other, "r.json")
	if err := os.Symlink("../latest.json", link2); err != nil {
		t.Fatal(err)
	}
	want := jsonAlone(t)
	for _, path := range []string{link, link2} {
		if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, "analyze", "-q", "-o", "json="+path, incident)
		if code != exitFindings || stderr != "" {
			t.Errorf("-o json=%s: exit %d, stderr %q", path, code, stderr)
		}
		if b, err := os.ReadFile(target); err != nil || string(b) != want {
			t.Errorf("-o json=%s: the link's target does not hold the report (%v)", path, err)
		}
		assertMode(t, link, fs.ModeSymlink|0o777)
		assertMode(t, link2, fs.ModeSymlink|0o777)
		assertMode(t, target, 0o640)
	}
	// Nothing else was created: no temporary file left, no link replaced.
	for d, n := range map[string]int{dir: 3, other: 1, filepath.Join(dir, "reports"): 1} {
		if entries, _ := os.ReadDir(d); len(entries) != n {
			t.Errorf("%s holds %v, want %d entries", d, entries, n)
		}
	}

	dangling := filepath.Join(dir, "next.json")
	if err := os.Symlink("reports/next.json", dangling); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "analyze", "-q", "-o", "json="+dangling, incident)
	if code != exitFindings || stderr != "" {
		t.Errorf("-o json=DANGLING: exit %d, stderr %q", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "reports", "next.json")); err != nil || string(b) != want {
		t.Errorf("a link to nothing: its target was not created with the report (%v)", err)
	}
	assertMode(t, dangling, fs.ModeSymlink|0o777)

	loop := filepath.Join(dir, "loop.json")
	if err := os.Symlink("loop.json", loop); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "analyze", "-q", "-o", "json="+loop, incident)
	if code != exitUnreadable || !strings.Contains(stderr, "-o json="+loop+": write "+loop+": ") {
		t.Errorf("-o json=LOOP: exit %d, stderr %q", code, stderr)
	}
}

// An existing regular file keeps its permissions, owner and group when it
// is replaced (a read-only one too: a rename needs only the directory's
// permission).
func TestOutputKeepsMode(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []fs.FileMode{0o600, 0o640, 0o664, 0o444} {
		path := filepath.Join(dir, "report.sarif")
		os.Remove(path)
		if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		// As root, another user's file: it stays theirs.
		uid, gid := os.Getuid(), os.Getgid()
		if uid == 0 {
			uid, gid = 4321, 8765
			if err := os.Chown(path, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := os.Stat(path)
		code, _, stderr := runCLI(t, "analyze", "-q", "-o", "sarif="+path, incident)
		if code != exitFindings || stderr != "" {
			t.Errorf("%v: exit %d, stderr %q", mode, code, stderr)
		}
		assertMode(t, path, mode)
		after, _ := os.Stat(path)
		if st := after.Sys().(*syscall.Stat_t); int(st.Uid) != uid || int(st.Gid) != gid {
			t.Errorf("%v: owner %d:%d, want %d:%d", mode, st.Uid, st.Gid, uid, gid)
		}
		if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(`"version": "2.1.0"`)) || os.SameFile(before, after) {
			t.Errorf("%v: the file was not replaced by the report", mode)
		}
	}
}

// A new file gets 0666 less the umask, as a shell's redirection makes it.
func TestOutputUmask(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		umask string
		want  fs.FileMode
	}{{"077", 0o600}, {"022", 0o644}, {"002", 0o664}} {
		path := filepath.Join(dir, "report-"+c.umask+".json")
		args := append([]string{"-c", `umask ` + c.umask + ` && exec "$0" "$@"`}, netmortemProcess("analyze", "-q", "-o", "json="+path, incident).Args...)
		cmd := exec.Command("/bin/sh", args...)
		cmd.Env = netmortemProcess().Env
		out, err := cmd.CombinedOutput()
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != exitFindings {
			t.Fatalf("umask %s: %v\n%s", c.umask, err, out)
		}
		assertMode(t, path, c.want)
		if b, err := os.ReadFile(path); err != nil || !bytes.HasPrefix(b, []byte("{")) {
			t.Errorf("umask %s: %s is not the report (%v)", c.umask, path, err)
		}
	}
}
