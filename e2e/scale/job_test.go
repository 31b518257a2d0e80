// Package scale tests netmortem as a Kubernetes Indexed Job runs it: N
// batch processes, each given its completion index, reading bundles from an
// S3 bucket (a real MinIO) and writing findings to one PostgreSQL database,
// one of them killed midway and restarted. Its benchmark measures how the
// throughput scales with the processes (make bench-scale).
package scale

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/internal/testutil/servers"
)

// netmortem builds the command once per test binary, without the race
// detector whatever the tests run with: the processes are the product, as
// a pod runs it.
func netmortem(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "netmortem-scale-")
		if err != nil {
			build.err = err
			return
		}
		build.bin = filepath.Join(dir, "netmortem")
		// The fleet build: the one that reads object storage and
		// writes PostgreSQL, as the container image is built.
		cmd := exec.Command("go", "build", "-buildvcs=false", "-tags", "fleet", "-o", build.bin, "./cmd/netmortem")
		cmd.Dir = testutil.Root()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build: %w: %s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

var build struct {
	once sync.Once
	bin  string
	err  error
}

// store puts the tickets in bucket, eight at a time.
func store(t testing.TB, s3 *servers.S3, bucket string, ts []ticket) {
	t.Helper()
	s3.MakeBucket(t, bucket)
	work := make(chan ticket)
	errs := make(chan error, len(ts))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tk := range work {
				errs <- s3.PutObject(bucket, tk.key, tk.data)
			}
		}()
	}
	for _, tk := range ts {
		work <- tk
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// copyLocal writes the tickets under dir, each with the modification time
// the bucket gives its object, as a local batch over the same bundles reads
// them.
func copyLocal(t testing.TB, s3 *servers.S3, bucket, dir string, ts []ticket) {
	t.Helper()
	for _, tk := range ts {
		p := filepath.Join(dir, filepath.FromSlash(tk.key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, tk.data, 0o644); err != nil {
			t.Fatal(err)
		}
		mod, err := s3.Modified(bucket, tk.key)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
}

// shard is one process of the simulated Indexed Job.
type shard struct {
	index  int
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan error
}

// start runs `netmortem batch --shard auto` as the pod of completion index
// i out of n.
func start(t testing.TB, bin string, s3 *servers.S3, i, n int, args ...string) *shard {
	t.Helper()
	sh := &shard{index: i, done: make(chan error, 1)}
	sh.cmd = exec.Command(bin, append([]string{"batch", "--shard", "auto"}, args...)...)
	sh.cmd.Env = append(os.Environ(), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i), fmt.Sprintf("JOB_COMPLETIONS=%d", n))
	for k, v := range s3.Env() {
		sh.cmd.Env = append(sh.cmd.Env, k+"="+v)
	}
	sh.cmd.Stderr = &sh.stderr
	if err := sh.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { sh.done <- sh.cmd.Wait() }()
	return sh
}

// wait waits for the process and fails t unless it ended with 0 or 1
// (findings at or above --fail-on).
func (sh *shard) wait(t testing.TB) {
	t.Helper()
	select {
	case err := <-sh.done:
		if code := sh.cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
			t.Fatalf("shard %d: %v\n%s", sh.index, err, sh.stderr.String())
		}
	case <-time.After(10 * time.Minute):
		sh.cmd.Process.Kill()
		t.Fatalf("shard %d still running after 10 minutes:\n%s", sh.index, sh.stderr.String())
	}
}

// cpu is the CPU time the ended process spent, user and system.
func (sh *shard) cpu() time.Duration {
	return sh.cmd.ProcessState.UserTime() + sh.cmd.ProcessState.SystemTime()
}

// query runs `netmortem query` and returns its JSON output.
func query(t testing.TB, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"query"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("netmortem query %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
