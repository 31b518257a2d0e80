package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/model"
)

// interruptAt makes the runs interrupted at the test hook's point, until
// the returned function is called: their signal context is canceled
// there. reached counts the times the point was reached.
func interruptAt(point string) (reached *int, restore func()) {
	reached = new(int)
	saved := signalContext
	var cancel context.CancelFunc
	signalContext = func() (context.Context, context.CancelFunc) {
		var ctx context.Context
		ctx, cancel = context.WithCancel(context.Background())
		return ctx, cancel
	}
	runTestHook = func(p string) {
		if p == point {
			*reached++
			cancel()
		}
	}
	return reached, func() { signalContext, runTestHook = saved, nil }
}

// TestInterruptAfterOutput checks that an interrupt that comes once
// flows or inspect has written its output whole cuts nothing short: the
// run ends as it would have without it.
func TestInterruptAfterOutput(t *testing.T) {
	capture := fixture("captures/handshakes.pcap")
	for _, args := range [][]string{
		{"flows", "-o", "csv", capture},
		{"flows", "-o", "json", capture},
		{"flows", "--width", "0", capture},
		{"flows", "--width", "80", capture},
		{"flows", "--anonymize-key", "k", "-o", "csv", capture}, // read once, then built
		{"inspect", capture},
	} {
		wantCode, wantOut, wantErr := runCLI(t, args...)
		reached, restore := interruptAt("written")
		code, out, stderr := runCLI(t, args...)
		restore()
		if *reached != 1 {
			t.Errorf("%s: the output was written %d times", args, *reached)
		}
		if code != wantCode || out != wantOut || stderr != wantErr {
			t.Errorf("%s interrupted once written: exit %d, stderr %q; want exit %d, stderr %q (same output: %v)",
				args, code, stderr, wantCode, wantErr, out == wantOut)
		}
	}
}

// TestTraceInterruptedOnceRead checks that an interrupt that comes once
// trace has read its inputs whole does not keep it from tracing them.
func TestTraceInterruptedOnceRead(t *testing.T) {
	args := []string{"trace", "--from-node", "--dst", "10.96.0.10:53", fixture("incidents/stale-dnat/iptables-save.txt")}
	wantCode, wantOut, wantErr := runCLI(t, args...)
	reached, restore := interruptAt("read")
	code, out, stderr := runCLI(t, args...)
	restore()
	if *reached != 1 || code != wantCode || out != wantOut || stderr != wantErr || wantOut == "" {
		t.Errorf("interrupted once read (%d times): exit %d, stderr %q; want exit %d, stderr %q (same output: %v)",
			*reached, code, stderr, wantCode, wantErr, out == wantOut)
	}
}

// TestBatchInterruptedOnceDone checks that an interrupt that comes once
// every bundle of a batch was analyzed does not call the batch
// interrupted.
func TestBatchInterruptedOnceDone(t *testing.T) {
	glob := fixture("incidents/stale-dnat")
	batch := func() (int, string, string) {
		out := filepath.Join(t.TempDir(), "r.jsonl")
		code, _, stderr := runCLI(t, "batch", "-q", "-j", "1", "--out", out, glob)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return code, string(b), stderr
	}
	wantCode, wantLines, wantErr := batch()
	reached, restore := interruptAt("written")
	code, lines, stderr := batch()
	restore()
	if *reached != 1 || code != wantCode || stderr != wantErr || strings.Count(lines, "\n") != strings.Count(wantLines, "\n") {
		t.Errorf("interrupted once done (%d times): exit %d, stderr %q; want exit %d, stderr %q", *reached, code, stderr, wantCode, wantErr)
	}
}

// TestFlowsExit checks that flows says it was interrupted when the
// interrupt cut its output short, or stopped its reading, and only then.
func TestFlowsExit(t *testing.T) {
	snap := &model.Snapshot{Inputs: []model.Input{{Path: "a.pcap"}}, Captures: []model.CaptureInfo{{File: "a.pcap"}}}
	whole := operand.Opened{Snap: snap}
	stopped := operand.Opened{Snap: snap,
		Warns: model.ErrorList{model.Stopped(model.Pos{File: "a.pcap", Frame: 4097}, context.Canceled)}}
	for _, c := range []struct {
		in   operand.Opened
		cut  string
		code int
		want string
	}{
		{whole, "", exitOK, ""},
		{stopped, "", exitUnreadable, "netmortem flows: interrupted: the output covers what was read until then\n"},
		{whole, "the listing was cut short", exitUnreadable, "netmortem flows: interrupted: the listing was cut short\n"},
	} {
		var b strings.Builder
		if code := flowsExit(&b, c.in, snap, c.cut); code != c.code || b.String() != c.want {
			t.Errorf("stopped %v, cut %q: exit %d, %q; want %d, %q", c.in.Stopped(), c.cut, code, b.String(), c.code, c.want)
		}
	}
}

// TestInterruptBeforeListing checks that flows, interrupted once its
// captures were read but before it listed their attempts, says so and
// exits 3, whether it lists them from what it kept (a temporary file) or
// from a second read, and whether the interrupt came before its first
// read was done with or between its two reads.
func TestInterruptBeforeListing(t *testing.T) {
	capture := fixture("captures/handshakes.pcap")
	for _, c := range []struct {
		point string
		spool bool
	}{{"first read", true}, {"first read", false}, {"between reads", false}} {
		for _, args := range [][]string{{"flows", "-o", "json", capture}, {"flows", "--width", "0", capture}, {"flows", "--width", "80", capture}} {
			tmp := t.TempDir()
			if !c.spool {
				tmp = filepath.Join(tmp, "missing")
			}
			t.Setenv("TMPDIR", tmp)
			reached, restore := interruptAt(c.point)
			code, _, stderr := runCLI(t, args...)
			restore()
			if *reached != 1 || code != exitUnreadable || !strings.Contains(stderr, "netmortem flows: interrupted: the captures were read whole") {
				t.Errorf("%s interrupted at %q (%d times), kept %v: exit %d, stderr %q; want exit %d, interrupted",
					args, c.point, *reached, c.spool, code, stderr, exitUnreadable)
			}
		}
	}
}
