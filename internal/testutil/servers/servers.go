// Package servers starts the real servers some tests need on loopback: a
// MinIO object store (an S3 server) and a PostgreSQL cluster. `make
// test-servers` installs them (MinIO through `go install`, PostgreSQL from
// Debian's package); a test that needs one skips with a message saying so
// when it is not installed, except on CI (CI=true), which installs both and
// where a missing server fails the test.
//
// Every process is started with a parent-death signal, so a test binary
// killed midway leaves no server running.
package servers

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// unavailable skips t because a server cannot run, or fails it on CI.
func unavailable(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but %s cannot run: %v (.ci/run installs it with make test-servers)", what, err)
	}
	t.Skipf("%s not available, test skipped (make test-servers installs it): %v", what, err)
}

// freePort returns a TCP port free on 127.0.0.1 now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// keeper is the OS thread server processes are started from: it never
// exits, so their parent-death signal (which follows the thread that
// started them) is sent only when the test process ends.
var keeper struct {
	once sync.Once
	run  chan func()
}

// startKept starts cmd from the keeper thread, with SIGKILL as its
// parent-death signal.
func startKept(cmd *exec.Cmd) error {
	keeper.once.Do(func() {
		keeper.run = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for f := range keeper.run {
				f()
			}
		}()
	})
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	errc := make(chan error)
	keeper.run <- func() { errc <- cmd.Start() }
	return <-errc
}

// waitFor polls ready until it is true, the process exits, or the time is
// up; it returns the process's output when it did not get ready.
func waitFor(cmd *exec.Cmd, out *syncBuffer, limit time.Duration, ready func() bool) error {
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if ready() {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited: %s", filepath.Base(cmd.Path), out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	cmd.Process.Kill()
	return fmt.Errorf("%s not ready within %s: %s", filepath.Base(cmd.Path), limit, out.String())
}

// syncBuffer is a bytes.Buffer safe for a process's output and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 64<<10 {
		return len(p), nil // enough to say why it failed
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// gobin is where `go install` puts binaries: GOBIN, else GOPATH/bin.
func gobin() string {
	if d := os.Getenv("GOBIN"); d != "" {
		return d
	}
	if out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		// One line each, GOBIN's empty when unset: the lines are
		// trimmed one by one, not the output, whose first line may be
		// that empty one.
		lines := bytes.Split(out, []byte("\n"))
		if len(lines) > 0 && len(bytes.TrimSpace(lines[0])) > 0 {
			return string(bytes.TrimSpace(lines[0]))
		}
		if len(lines) > 1 && len(bytes.TrimSpace(lines[1])) > 0 {
			return filepath.Join(string(bytes.TrimSpace(lines[1])), "bin")
		}
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "go", "bin")
}

// lookBinary finds name in PATH or in the directories given.
func lookBinary(name string, dirs ...string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH nor in %v", name, dirs)
}

func itoa(n int) string { return strconv.Itoa(n) }
