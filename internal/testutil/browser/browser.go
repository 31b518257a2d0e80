// Package browser drives a headless Chromium through the DevTools protocol
// for tests of the HTML report: it opens a file:// page at a fixed viewport
// width, records every request the page makes and every console error,
// measures whether anything overflows the viewport horizontally, counts the
// report's findings, timelines and quotes, and takes a full-page screenshot.
//
// Only tests import it: the netmortem binary does not depend on chromedp.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// EnvExec names the Chromium binary to use instead of the first of
// chromium, chromium-browser, google-chrome on PATH.
const EnvExec = "NETMORTEM_CHROMIUM"

// names are the binaries Find looks for on PATH, in order: Debian's package
// installs chromium.
var names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// ErrNotFound is returned by Find when no Chromium is installed.
var ErrNotFound = errors.New("no chromium on PATH (install Debian's chromium package: make browser-deps)")

// Find returns the path of the Chromium binary: $NETMORTEM_CHROMIUM when set,
// else the first of chromium, chromium-browser, google-chrome on PATH.
func Find() (string, error) {
	if p := os.Getenv(EnvExec); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvExec, p, err)
		}
		return path, nil
	}
	for _, n := range names {
		if path, err := exec.LookPath(n); err == nil {
			return path, nil
		}
	}
	return "", ErrNotFound
}

// Require returns the Chromium binary for a test. When there is none it
// skips the test, except on CI (CI=true), which installs Chromium and so
// fails the test instead.
func Require(t testing.TB) string {
	t.Helper()
	path, err := Find()
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but the browser test cannot run: %v", err)
	}
	t.Skipf("browser test skipped: %v", err)
	return ""
}

// Browser is a running headless Chromium. Close ends it and every process
// it started.
type Browser struct {
	ctx         context.Context // the browser's chromedp context; tabs are made from it
	cancel      context.CancelFunc
	cancelAlloc context.CancelFunc
	pid         int
}

// Start runs the Chromium at exe headless, within timeout: past it the
// browser is killed whatever it is doing, so a hung page cannot hold a test
// forever. As root it runs with --no-sandbox, which Chromium requires then.
func Start(ctx context.Context, exe string, timeout time.Duration) (*Browser, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.DisableGPU,
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("font-render-hinting", "none"),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	limited, cancelTime := context.WithTimeout(ctx, timeout)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(limited, opts...)
	bctx, cancel := chromedp.NewContext(allocCtx)
	b := &Browser{ctx: bctx, cancel: cancel, cancelAlloc: func() { cancelAlloc(); cancelTime() }}
	// The first Do starts the browser and binds it to bctx, which has no
	// shorter deadline than the whole run.
	if err := chromedp.Do(bctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	if c := chromedp.FromContext(bctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		b.pid = c.Browser.Process().Pid
	}
	return b, nil
}

// PID is the process id of the browser's main process (0 if unknown).
func (b *Browser) PID() int { return b.pid }

// Close ends the browser: its tabs, its main process and the processes it
// started (renderers, the zygote, the GPU and network services), and removes
// its profile directory.
func (b *Browser) Close() {
	if b == nil || b.cancel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	_ = chromedp.Cancel(ctx) // closes gracefully when it can; the cancels below kill otherwise
	b.cancel()
	b.cancelAlloc()
	b.cancel = nil
}
