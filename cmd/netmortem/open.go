package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/source"
)

// errRefused marks a path given on the command line (or matched by a
// batch glob) that is neither a regular file nor a directory: opening a
// named pipe blocks until something writes to it, and a device or a socket
// is not evidence. Such paths are refused before they are opened.
var errRefused = errors.New("not a regular file or directory: refused before opening")

// special says what kind of file a mode describes when it is neither a
// regular file nor a directory, and "" when it is one of them.
func special(mode fs.FileMode) string {
	switch {
	case mode.IsRegular(), mode.IsDir():
		return ""
	case mode&fs.ModeNamedPipe != 0:
		return "named pipe"
	case mode&fs.ModeSocket != 0:
		return "socket"
	case mode&fs.ModeCharDevice != 0:
		return "character device"
	case mode&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// refusal checks path without opening it (following symbolic links) and
// returns why it is refused, as "a named pipe, not a regular file or
// directory: refused before opening", or nil. A path that does not exist
// is not refused here: reading it reports that.
func refusal(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if kind := special(st.Mode()); kind != "" {
		return fmt.Errorf("a %s, %w", kind, errRefused)
	}
	return nil
}

// cannotOpen returns why path cannot be opened (it does not exist, it may
// not be read), as "no such file or directory", or nil. Such a path is
// listed as a skipped input, with a warning, as a refused one is, so that
// every output names it.
func cannotOpen(path string) error {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	f.Close()
	return nil
}

// opened is what openPaths read.
type opened struct {
	snap  *model.Snapshot
	warns model.ErrorList
	// err joins the errors of the paths that could not be read at all,
	// refused paths included.
	err error
	// refused lists the paths refused before opening.
	refused []string
	// stuck is set when reading did not stop within stopGrace of ctx
	// ending (a read blocked in the kernel): snap is then empty.
	stuck bool
}

// stopGrace is how long reading may go on after its context ends: parse
// stops between records, but a read blocked in the kernel (a hung network
// file system) does not return, and is then left behind.
var stopGrace = 10 * time.Second

// openAll reads paths; a variable so that a test can make it block.
var openAll = openSources

// openPaths reads paths with parse.OpenAll after refusing those that are
// neither regular files nor directories. Refused paths, and those that
// cannot be opened, are listed as skipped inputs and warnings, and make err
// non-nil: they are unreadable inputs. It returns when ctx ends even if reading does not.
func openPaths(ctx context.Context, paths []string, opts *parse.Options) opened {
	return openExpanded(ctx, expanded{paths: paths}, opts)
}

// openExpanded is openPaths for operands expanded by expandWith: a
// pattern that matched nothing is an unreadable input, reported like a
// refused path, and "-" reads stdin.
func openExpanded(ctx context.Context, e expanded, opts *parse.Options) opened {
	paths := e.paths
	if e.objects == nil {
		e.objects = objectsOf(ctx) // a batch's bundle
	}
	if slices.Contains(paths, stdinOperand) {
		o := parse.Options{}
		if opts != nil {
			o = *opts
		}
		o.Stdin = stdin
		opts = &o
	}
	var (
		ok   []string
		errs []error
		res  opened
	)
	var refusedInputs []model.Input
	var refusedWarns model.ErrorList
	for _, p := range paths {
		err := refusal(p)
		if err == nil {
			err = cannotOpen(p)
		}
		if e.unmatched[p] {
			err = noMatch(p)
		} else if p == stdinOperand || e.objects != nil && source.IsURL(p) {
			err = nil // read by openAll, which says why it cannot be
		}
		if err != nil {
			res.refused = append(res.refused, p)
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
			in := model.Input{Path: p, Skipped: err.Error()}
			refusedInputs = append(refusedInputs, in)
			refusedWarns = append(refusedWarns, &model.Error{Pos: model.Pos{File: p}, Err: err})
			if opts != nil && opts.Progress != nil {
				opts.Progress(in)
			}
			continue
		}
		ok = append(ok, p)
	}
	type result struct {
		snap  *model.Snapshot
		warns model.ErrorList
		err   error
	}
	done := make(chan result, 1)
	open := openAll
	ctx = withObjects(ctx, e.objects)
	go func() {
		var r result
		defer func() {
			if v := recover(); v != nil {
				r = result{&model.Snapshot{}, nil, fmt.Errorf("internal error while reading: %v\n%s", v, debug.Stack())}
			}
			done <- r
		}()
		r.snap, r.warns, r.err = open(ctx, ok, opts)
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		select {
		case r = <-done:
		case <-time.After(stopGrace):
			res.stuck = true
			// Not wrapped: this is not the end of the budget but a read
			// that ignores it.
			r = result{snap: &model.Snapshot{}, err: fmt.Errorf("reading did not stop within %s of its end (%v): left behind", stopGrace, ctx.Err())}
		}
	}
	if r.snap == nil {
		r.snap = &model.Snapshot{}
	}
	res.snap, res.warns = r.snap, append(refusedWarns, r.warns...)
	res.snap.Inputs = append(refusedInputs, res.snap.Inputs...)
	res.err = errors.Join(append(errs, r.err)...)
	return res
}

// unreadableCaptures lists the packet captures (pcap, pcapng) that were
// recognized but whose header could not be read: parse lists them as
// inputs, with a warning, but they give no capture. They are unreadable
// inputs, as a capture that cannot be opened is: every command exits 3.
func unreadableCaptures(snap *model.Snapshot) []string {
	read := map[string]bool{}
	for _, c := range snap.Captures {
		read[c.File] = true
	}
	var out []string
	for _, in := range snap.Inputs {
		if in.Skipped == "" && in.Kind == model.KindCapture && (in.Format == "pcap" || in.Format == "pcapng") && !read[in.Path] {
			out = append(out, in.Path)
		}
	}
	return out
}

// incomplete lists why an analysis did not cover all it was given (the
// reasons analyze exits 3 for, but failed rules, which the report lists
// apart): an interrupt, the time budget, each path that could not be read,
// the captures whose header could not be read, no input read at all. ctx
// is the run's context, ruleCtx the rules', readCut whether reading ran
// out of time; in is what was read.
func incomplete(ctx, ruleCtx context.Context, readCut bool, budget time.Duration, start time.Time, in opened) []string {
	var out []string
	switch {
	case ctx.Err() != nil:
		out = append(out, "interrupted: the findings cover what was read and analyzed until then")
	case readCut || ruleCtx.Err() != nil:
		out = append(out, fmt.Sprintf("the %s time budget (--timeout) ran out after %s: %s", budget.String(),
			time.Since(start).Round(time.Millisecond).String(), budgetNote(readCut, ruleCtx.Err() != nil)))
	}
	cut := len(out) > 0 // reading stopped early: a capture cut short has no header read either
	for _, err := range flatten(withoutContextErrors(in.err)) {
		out = append(out, err.Error())
	}
	if bad := unreadableCaptures(in.snap); len(bad) > 0 && !cut {
		out = append(out, fmt.Sprintf("%s could not be read: %s", count(len(bad), "capture"), strings.Join(bad, ", ")))
	}
	if countInputs(in.snap, false) == 0 {
		out = append(out, "no input could be read")
	}
	return out
}

// flatten lists the errors errors.Join joined in err, each once: nil
// gives none.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range joined.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// signalContext returns a context canceled by the first SIGINT or SIGTERM
// (what Kubernetes sends a pod it stops). Once it is done, both have their
// default effect again, so that a second one ends a run that does not
// stop.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	return ctx, stop
}

// printWarnings writes input warnings on stderr, escaped.
func printWarnings(stderr io.Writer, warns model.ErrorList) {
	for _, w := range warns {
		if w != nil {
			escape.Fprintf(stderr, "warning: %s\n", w)
		}
	}
}
