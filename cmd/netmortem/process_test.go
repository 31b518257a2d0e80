//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/results"
)

// processEnv makes the test binary run as something else than the tests
// (see TestMain), so that tests can start real netmortem processes and
// signal them.
const processEnv = "NETMORTEM_TEST_PROCESS"

var sink [][]byte

// TestMain runs the tests, or, in a process started by netmortemProcess or
// crashProcess, netmortem's main or a crash.
func TestMain(m *testing.M) {
	switch os.Getenv(processEnv) {
	case "":
		// The tables are fitted to $COLUMNS when it is set, and to 80
		// columns on a pipe; the tests that hold a table's layout want
		// it at its natural width (those of the widths set pipeWidth
		// back).
		os.Unsetenv("COLUMNS")
		pipeWidth = 0
		os.Exit(m.Run())
	case "main":
		os.Args = append([]string{"netmortem"}, os.Args[1:]...)
		main()
	case "panic", "oom":
		// No core file of the crash in the package directory.
		syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
		setCrashPolicy()
		if os.Getenv(processEnv) == "oom" {
			// More than the memory and swap of any machine this runs
			// on, or than a 32-bit process can address (the most an
			// int counts, four times): the Go runtime fails to map it,
			// a fatal error.
			for range 4 {
				sink = append(sink, make([]byte, 1<<min(40, strconv.IntSize-1)-1))
			}
			fmt.Println("allocated", len(sink))
			os.Exit(7)
		}
		go panic("a panic no one recovers")
		time.Sleep(time.Minute)
	}
	os.Exit(99)
}

// netmortemProcess returns a command running netmortem with args, as the
// built program would.
func netmortemProcess(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), processEnv+"=main")
	return cmd
}

// TestCrashIsNotUsageError checks that a fatal error of the Go runtime (a
// panic nothing recovers, out of memory) does not exit with 2, the code of
// a usage error: the process aborts with SIGABRT. GOTRACEBACK in the
// environment still decides.
func TestCrashIsNotUsageError(t *testing.T) {
	for _, c := range []struct {
		mode, traceback string
		want            string
	}{
		{"panic", "", "signal: aborted"},
		{"oom", "", "signal: aborted"},
		{"panic", "single", "exit status 2"},
	} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), processEnv+"="+c.mode, "GOTRACEBACK="+c.traceback)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil || err.Error() != c.want {
			t.Errorf("%s (GOTRACEBACK=%q): %v, want %s; stderr:\n%.400s", c.mode, c.traceback, err, c.want, stderr.String())
		}
		want := map[string]string{"panic": "panic: a panic no one recovers", "oom": "out of memory"}[c.mode]
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: stderr lacks %q:\n%.400s", c.mode, want, stderr.String())
		}
	}
}

// TestRunRecoversPanics checks that a panic in a command is an internal
// error (exit 3 with a message), not a crash.
func TestRunRecoversPanics(t *testing.T) {
	var stderr bytes.Buffer
	code := run([]string{"analyze", "-q", incident}, panicWriter{}, &stderr)
	if code != exitUnreadable || !strings.Contains(stderr.String(), "netmortem analyze: internal error: writer broke\\n") {
		t.Errorf("exit %d; stderr:\n%s", code, stderr.String())
	}
}

type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("writer broke\n") }

// makeBundles writes n small bundles with bench/make-bundles.sh.
func makeBundles(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(testutil.Root(), "bench/make-bundles.sh"), dir, fmt.Sprint(n))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make-bundles: %v\n%s", err, b)
	}
	return dir
}

// TestBatchInterruptResume starts a real batch, interrupts it with SIGINT
// (Ctrl-C) or SIGTERM (a stopped pod) midway, and resumes it: every bundle
// ends up in the output exactly once, with status ok, and no bundle is
// recorded as canceled.
func TestBatchInterruptResume(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { batchInterruptResume(t, sig) })
	}
}

func batchInterruptResume(t *testing.T, sig os.Signal) {
	// Enough bundles that the batch is still reading when its fifth line
	// is seen (on two cores, about 60 a second without -race, 4 with it), few
	// enough that the resumed batch is not most of the package's time.
	n := 60
	if raceEnabled {
		n = 12
	}
	dir := makeBundles(t, n)
	out := filepath.Join(t.TempDir(), "r.jsonl")
	glob := filepath.Join(dir, "bundle-*")
	cmd := netmortemProcess("batch", "-j", "2", "--out", out, glob)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(2 * time.Minute)
wait:
	for {
		select {
		case err := <-exited:
			t.Fatalf("batch ended (%v) before it could be interrupted:\n%s", err, stderr.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatal("batch wrote nothing in 2 minutes")
		case <-time.After(5 * time.Millisecond):
			if b, _ := os.ReadFile(out); bytes.Count(b, []byte("\n")) >= 5 {
				break wait
			}
		}
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("batch did not stop within a minute of %s:\n%s", sig, stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUnreadable || !strings.Contains(stderr.String(), "netmortem batch: interrupted: ") {
		t.Fatalf("interrupted batch: %v, want exit %d; stderr:\n%s", err, exitUnreadable, stderr.String())
	}
	first := readJSONL(t, out)
	if len(first) >= n {
		t.Fatalf("the interrupted batch wrote %d lines of %d", len(first), n)
	}
	for _, r := range first {
		if r.Status != statusOK {
			t.Errorf("interrupted batch wrote %s as %s (%s)", r.Bundle, r.Status, r.Error)
		}
	}
	t.Logf("interrupted after %d bundles; %d canceled midway", len(first), strings.Count(stderr.String(), "canceled: interrupted"))

	code, _, errOut := runCLI(t, "batch", "-q", "-j", "2", "--resume", "--out", out, glob)
	if code != exitFindings {
		t.Fatalf("resume: exit %d: %s", code, errOut)
	}
	seen := map[string]int{}
	for _, r := range readJSONL(t, out) {
		seen[r.Bundle]++
		if r.Status != statusOK {
			t.Errorf("%s: %s (%s)", r.Bundle, r.Status, r.Error)
		}
	}
	if len(seen) != n {
		t.Errorf("%d bundles after resume, want %d", len(seen), n)
	}
	for b, k := range seen {
		if k != 1 {
			t.Errorf("%s: %d lines", b, k)
		}
	}
}

// TestReadDone checks that a bundle recorded as canceled (as earlier
// versions did) is analyzed again by --resume.
func TestReadDone(t *testing.T) {
	in := `{"bundle":"a","status":"ok"}
{"bundle":"b","status":"canceled","error":"interrupted"}
{"bundle":"c","status":"timeout"}
not json
{"bundle":"d","status":"unreadable"}
`
	got := results.ReadDone(strings.NewReader(in))
	if len(got) != 3 || !got["a"] || got["b"] || !got["c"] || !got["d"] {
		t.Errorf("done %v, want a, c and d", got)
	}
}

// TestBatchWriteErrors checks that a batch whose output cannot be written
// (a full device, a closed pipe) exits 3 with the error.
func TestBatchWriteErrors(t *testing.T) {
	if runtime.GOOS == "linux" { // the systems with /dev/full
		code, _, stderr := runCLI(t, "batch", "-q", "--out", "/dev/full", incident, fixture("incidents/stale-dnat"))
		if code != exitUnreadable || !strings.Contains(stderr, "netmortem batch: writing the results to /dev/full: write /dev/full: no space left on device") {
			t.Errorf("/dev/full: exit %d: %s", code, stderr)
		}
	}
	// stdout a pipe whose reader is gone.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := netmortemProcess("batch", "-q", incident, fixture("incidents/stale-dnat"))
	cmd.Stdout = w
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err = cmd.Run()
	w.Close()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUnreadable || !strings.Contains(errOut.String(), "broken pipe") {
		t.Errorf("closed pipe: %v, want exit %d; stderr:\n%s", err, exitUnreadable, errOut.String())
	}
}

// TestBatchLock checks that a batch whose --out another batch holds fails
// at once, without touching the file.
func TestBatchLock(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	const before = "{\"bundle\":\"x\",\"status\":\"ok\"}\n"
	if err := os.WriteFile(out, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	held, err := results.OpenJSONLSink(out, true)
	if err != nil {
		t.Fatalf("first open: %v", err)
	}
	done, err := held.Done(context.Background())
	if err != nil || !done["x"] {
		t.Fatalf("first open: %v, done %v", err, done)
	}
	for _, resume := range []string{"--resume", "--resume=false"} {
		code, _, stderr := runWithin(t, 30*time.Second, "batch", "-q", resume, "--out", out, incident)
		if code != exitUnreadable || !strings.Contains(stderr, out+": locked by another netmortem batch") {
			t.Errorf("%s: exit %d: %s", resume, code, stderr)
		}
		if b, _ := os.ReadFile(out); string(b) != before {
			t.Errorf("%s: the locked file changed: %q", resume, b)
		}
	}
	held.Close()
	if code, _, stderr := runCLI(t, "batch", "-q", "--resume", "--out", out, incident); code != exitFindings {
		t.Errorf("after the lock is released: exit %d: %s", code, stderr)
	}
	if n := len(readJSONL(t, out)); n != 2 {
		t.Errorf("%d lines, want 2", n)
	}
}

// TestRunOddArgs checks that run never panics, whatever its arguments,
// and that nil writers are taken as discarding.
func TestRunOddArgs(t *testing.T) {
	for _, args := range [][]string{
		nil, {""}, {"-"}, {"--"}, {"help", "nope"}, {"help", ""}, {"analyze", "--"}, {"analyze", ""}, {"analyze", "-o", ""},
		{"analyze", "--timeout", "forever", incident}, {"flows", "--since", "+", incident}, {"flows", "--until", "x"},
		{"trace", "--dst", ""}, {"trace", "--dst", "1.2.3.4:5", ""}, {"diff", "", ""}, {"inspect", "-o", "xml", incident},
		{"batch", "--shard", ""}, {"batch", "--shard", "/"}, {"batch", "-j", "0", incident}, {"batch", ""},
		{"explain", ""}, {"explain", "-h"}, {"version", "x"}, {"rules", "-o", "markdown", "--dir", ""},
		{"flows", "--port", "99999", incident}, {"analyze", "--config", "", incident}, {"\x00"}, {"analyze", "\x00"},
	} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("run(%q) panicked: %v\n%s", args, v, debug.Stack())
				}
			}()
			var errOut bytes.Buffer
			code := run(args, nil, &errOut)
			if code < exitOK || code > exitUnreadable {
				t.Errorf("run(%q) = %d", args, code)
			}
			if strings.Contains(errOut.String(), ": internal error: ") {
				t.Errorf("run(%q): %s", args, errOut.String())
			}
			run(args, nil, nil)
		}()
	}
}

// TestRefusedPaths checks that a named pipe given on the command line, or
// matched by a batch glob, is refused before it is opened (opening it
// would block), with a warning naming it, while the rest is analyzed.
func TestRefusedPaths(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "bundle-fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	const within = 30 * time.Second
	code, out, stderr := runWithin(t, within, "analyze", "-o", "text", fifo, incident)
	if code != exitUnreadable || !strings.Contains(stderr, fifo+": a named pipe, not a regular file or directory: refused before opening") ||
		!strings.Contains(out, "synack-reset") {
		t.Errorf("analyze: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	code, _, stderr = runWithin(t, within, "analyze", "-q", "/dev/null")
	if code != exitUnreadable || !strings.Contains(stderr, "/dev/null: a character device") {
		t.Errorf("analyze /dev/null: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"flows", fifo}, {"inspect", fifo}, {"trace", "--dst", "10.96.0.10:53", fifo}, {"diff", fifo, incident}} {
		if code, _, stderr := runWithin(t, within, args...); code != exitUnreadable || !strings.Contains(stderr, "refused before opening") {
			t.Errorf("%s: exit %d: %s", args[0], code, stderr)
		}
	}
	if err := os.CopyFS(filepath.Join(dir, "bundle-incident"), os.DirFS(incident)); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, stderr = runWithin(t, within, "batch", "--out", outFile, filepath.Join(dir, "bundle-*"))
	if code != exitUnreadable {
		t.Errorf("batch: exit %d: %s", code, stderr)
	}
	status := map[string]string{}
	for _, r := range readJSONL(t, outFile) {
		status[filepath.Base(r.Bundle)] = r.Status + ": " + r.Error
	}
	if status["bundle-fifo"] != "refused: a named pipe, not a regular file or directory: refused before opening" ||
		status["bundle-incident"] != "ok: " {
		t.Errorf("batch statuses %q", status)
	}
}

// Where the temporary file of flows' table and JSON forms cannot be
// written (a file size limit of 0, as a full disk), even by the last
// bytes it buffers, flows reads a capture twice and holds a directory's
// attempts, for the same output and no error.
func TestFlowsSpoolNotWritten(t *testing.T) {
	for _, path := range []string{fixture("captures/handshakes.pcap"), fixture("captures/rotated")} {
		for _, args := range [][]string{{"-o", "json"}, {"--width", "0"}, {"--width", "80"}} {
			args = append(append([]string{"flows"}, args...), path)
			_, want, _ := runCLI(t, args...)
			cmd := exec.Command("sh", append([]string{"-c", `ulimit -f 0 && exec "$0" "$@"`, os.Args[0]}, args...)...)
			cmd.Env = append(os.Environ(), processEnv+"=main", "TMPDIR="+t.TempDir())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil || stdout.String() != want || stderr.Len() > 0 {
				t.Errorf("%s with no file written: %v, stderr %q, output\n%s\nwant\n%s", args, err, stderr.String(), stdout.String(), want)
			}
		}
	}
	// Standard input, read once, cannot be read again: that the file
	// could not keep its attempts is an error, and no attempt is listed.
	for _, args := range [][]string{{"-o", "json"}, {"--width", "80"}} {
		args = append(append([]string{"flows"}, args...), "-")
		tmp := t.TempDir()
		cmd := exec.Command("sh", append([]string{"-c", `ulimit -f 0 && exec "$0" "$@" < "$NETMORTEM_TEST_INPUT"`, os.Args[0]}, args...)...)
		cmd.Env = append(os.Environ(), processEnv+"=main", "TMPDIR="+tmp, "NETMORTEM_TEST_INPUT="+fixture("captures/handshakes.pcap"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitUnreadable || stdout.Len() > 0 ||
			!strings.Contains(stderr.String(), "netmortem flows: keeping the attempts of standard input in a temporary file: write "+tmp+": file too large (set TMPDIR") {
			t.Errorf("%s on stdin with no file written: %v, stderr %q, output\n%s", args, err, stderr.String(), stdout.String())
		}
	}
}
