package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// device returns a character device like the one at sys (/dev/null,
// /dev/full): as root, a node of its own in a temporary directory, so that
// a netmortem that replaced devices would not replace the system's; else
// sys itself, which only root could replace.
func device(t *testing.T, sys string) string {
	t.Helper()
	fi, err := os.Stat(sys)
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return sys
	}
	path := filepath.Join(t.TempDir(), filepath.Base(sys))
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, int(fi.Sys().(*syscall.Stat_t).Rdev)); err != nil {
		t.Fatalf("mknod %s: %v", path, err)
	}
	return path
}

// A device is written in place, and its write errors are reported.
func TestOutputToDevice(t *testing.T) {
	null := device(t, "/dev/null")
	code, out, stderr := runCLI(t, "analyze", "-q", "-o", "table", "-o", "json="+null, incident)
	if code != exitFindings || stderr != "" || !strings.Contains(out, "Findings (") {
		t.Errorf("-o json=%s: exit %d, stderr %q", null, code, stderr)
	}
	if fi, err := os.Stat(null); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("%s is no longer a device: %v %v", null, fi.Mode(), err)
	}

	full := device(t, "/dev/full")
	code, out, stderr = runCLI(t, "analyze", "-q", "-o", "table", "-o", "sarif="+full, incident)
	want := "netmortem analyze: -o sarif=" + full + ": write " + full + ": no space left on device\n"
	if code != exitUnreadable || stderr != want || !strings.Contains(out, "Findings (") {
		t.Errorf("-o sarif=%s: exit %d, stderr %q, want exit 3 and %q", full, code, stderr, want)
	}
	if fi, err := os.Stat(full); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("%s is no longer a device: %v %v", full, fi.Mode(), err)
	}
}

// An open file descriptor (/proc/self/fd/N, /dev/stdout, or a link to
// one) is written where its stream is, never replaced: a regular file
// behind it is appended to.
func TestOutputToDescriptor(t *testing.T) {
	dir := t.TempDir()
	want := jsonAlone(t)
	path := filepath.Join(dir, "log")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fdPath := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	link := filepath.Join(dir, "out.json")
	if err := os.Symlink(fdPath, link); err != nil {
		t.Fatal(err)
	}
	before, _ := f.Stat()
	for i, out := range []string{fdPath, link} {
		code, _, stderr := runCLI(t, "analyze", "-q", "-o", "json="+out, incident)
		if code != exitFindings || stderr != "" {
			t.Errorf("-o json=%s: exit %d, stderr %q", out, code, stderr)
		}
		after, err := os.Stat(path)
		if err != nil || !os.SameFile(before, after) {
			t.Fatalf("-o json=%s: %s was replaced (%v)", out, path, err)
		}
		if b, _ := os.ReadFile(path); string(b) != string(bytes.Repeat([]byte(want), i+1)) {
			t.Errorf("-o json=%s: %s holds %d bytes, want the report appended to it", out, path, len(b))
		}
	}
	assertMode(t, link, fs.ModeSymlink|0o777)

	// A process's standard output, through a link to /dev/stdout: a pipe,
	// and a file the shell opened with > or >>.
	stdoutLink := filepath.Join(dir, "stdout")
	if err := os.Symlink("/dev/stdout", stdoutLink); err != nil {
		t.Fatal(err)
	}
	cmd := netmortemProcess("analyze", "-q", "-o", "json="+stdoutLink, incident)
	out, err := cmd.Output()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != exitFindings || string(out) != want {
		t.Errorf("-o json=/dev/stdout to a pipe: %v, %d bytes", err, len(out))
	}
	for _, c := range []struct {
		flag   int
		before string
	}{{os.O_TRUNC, ""}, {os.O_APPEND, "earlier\n"}} {
		redirect := filepath.Join(dir, "redirect")
		if err := os.WriteFile(redirect, []byte("earlier\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(redirect, os.O_WRONLY|c.flag, 0)
		if err != nil {
			t.Fatal(err)
		}
		cmd := netmortemProcess("analyze", "-q", "-o", "json="+stdoutLink, incident)
		cmd.Stdout = f
		err = cmd.Run()
		f.Close()
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != exitFindings {
			t.Errorf("-o json=/dev/stdout to a file: %v", err)
		}
		if b, _ := os.ReadFile(redirect); string(b) != c.before+want {
			t.Errorf("-o json=/dev/stdout to a file opened with %#x: %d bytes, want %d", c.flag, len(b), len(c.before+want))
		}
	}
	assertMode(t, stdoutLink, fs.ModeSymlink|0o777)
}

// Every command that reads evidence exits with 3, and says why, when its
// standard output cannot be written (a full device), as their help says.
func TestStdoutFullExits3(t *testing.T) {
	full, err := os.OpenFile(device(t, "/dev/full"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	capture := fixture("captures/handshakes.pcap")
	for _, args := range [][]string{
		{"analyze", "-q", incident},
		{"inspect", capture},
		{"flows", capture},
		{"flows", "-o", "csv", capture},
		{"flows", "-o", "json", capture},
		{"trace", "--dst", "10.96.0.10:53", fixture("incidents/stale-dnat")},
		{"diff", capture, capture},
	} {
		cmd := netmortemProcess(args...)
		cmd.Stdout = full
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != exitUnreadable ||
			!strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%s > /dev/full: %v, want exit %d; stderr:\n%s", strings.Join(args, " "), err, exitUnreadable, stderr.String())
		}
	}
}
