// Package operand reads the operands of an analysis: it expands globs
// ('**' at any depth) and bundle URLs (object storage, see package
// source), refuses what is neither a regular file nor a directory before
// opening it, reads "-" and named readers, and opens it all as one
// snapshot within a context that may end while a read is blocked.
package operand

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/source"
)

// ErrRefused marks a path given as an operand (or matched by a glob) that
// is neither a regular file nor a directory: opening a named pipe blocks
// until something writes to it, and a device or a socket is not evidence.
// Such paths are refused before they are opened.
var ErrRefused = errors.New("not a regular file or directory: refused before opening")

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

// Refusal checks path without opening it (following symbolic links) and
// returns why it is refused, as "a named pipe, not a regular file or
// directory: refused before opening", or nil. A path that does not exist
// is not refused here: reading it reports that.
func Refusal(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if kind := special(st.Mode()); kind != "" {
		return fmt.Errorf("a %s, %w", kind, ErrRefused)
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

// Opened is what Open read.
type Opened struct {
	Snap  *model.Snapshot
	Warns model.ErrorList
	// Err joins the errors of the paths that could not be read at all,
	// refused paths included.
	Err error
	// Refused lists the paths refused before opening.
	Refused []string
	// Stuck is set when reading did not stop within StopGrace of ctx
	// ending (a read blocked in the kernel): Snap is then empty.
	Stuck bool
}

// LeftBehind is the Skipped of the paths of a read that did not stop
// within StopGrace of its context's end: what it read is left with it.
const LeftBehind = "not read: its read did not stop at the run's end, and was left behind"

// StopGrace is how long reading may go on after its context ends: parse
// stops between records, but a read blocked in the kernel (a hung network
// file system) does not return, and is then left behind. Tests shorten it.
var StopGrace = 10 * time.Second

// OpenAll reads the paths that passed the checks of Open, with opts, bundle
// URLs through objs and named readers from readers; a variable so that a
// test can make it block.
var OpenAll = openSources

// OpenPaths reads local paths as Open does operands given as they are.
func OpenPaths(ctx context.Context, paths []string, opts *parse.Options) Opened {
	return Open(ctx, Expanded{Paths: paths}, opts)
}

// Open reads operands expanded by Expand, after refusing those that are
// neither regular files nor directories. Refused paths, those that cannot
// be opened and patterns that matched nothing are listed as skipped inputs
// and warnings, and make Err non-nil: they are unreadable inputs. "-" reads
// opts.Stdin; the names of e.Readers read those. It returns when ctx ends
// even if reading does not.
func Open(ctx context.Context, e Expanded, opts *parse.Options) Opened {
	paths := e.Paths
	if slices.Contains(paths, Stdin) && (opts == nil || opts.Stdin == nil) {
		o := parse.Options{}
		if opts != nil {
			o = *opts
		}
		o.Stdin = os.Stdin
		opts = &o
	}
	var (
		ok   []string
		errs []error
		res  Opened
	)
	var refusedInputs []model.Input
	var refusedWarns model.ErrorList
	for _, p := range paths {
		err := Refusal(p)
		if err == nil {
			err = cannotOpen(p)
		}
		if e.Unmatched[p] {
			err = NoMatch(p)
		} else if e.Outside[p] {
			err = ErrOutside
		} else if _, named := e.Readers[p]; named || p == Stdin || e.Objects != nil && source.IsURL(p) {
			err = nil // read by OpenAll, which says why it cannot be
		}
		if err != nil {
			res.Refused = append(res.Refused, p)
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
	open := OpenAll
	go func() {
		var r result
		defer func() {
			if v := recover(); v != nil {
				r = result{&model.Snapshot{}, nil, fmt.Errorf("internal error while reading: %v\n%s", v, debug.Stack())}
			}
			done <- r
		}()
		r.snap, r.warns, r.err = open(ctx, ok, opts, e.Objects, e.Readers)
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		select {
		case r = <-done:
		case <-time.After(StopGrace):
			res.Stuck = true
			// Not wrapped: this is not the end of the budget but a read
			// that ignores it.
			r = result{snap: &model.Snapshot{}, err: fmt.Errorf("reading did not stop within %s of its end (%v): left behind", StopGrace, ctx.Err())}
			// What it read is left behind with it: every path is named.
			for _, p := range ok {
				r.snap.Inputs = append(r.snap.Inputs, model.Input{Path: p, Skipped: LeftBehind})
			}
		}
	}
	if r.snap == nil {
		r.snap = &model.Snapshot{}
	}
	res.Snap, res.Warns = r.snap, append(refusedWarns, r.warns...)
	res.Snap.Inputs = append(refusedInputs, res.Snap.Inputs...)
	// The inputs cut short, which the analysis must not take for whole:
	// found here, once, for every caller.
	res.Snap.Cuts = append(res.Snap.Cuts, model.Cuts(res.Warns)...)
	res.Err = errors.Join(append(errs, r.err)...)
	return res
}

// Stopped reports whether reading stopped before the end of something
// it was given because its context ended: a read left behind (Stuck), a
// path not read, a file read up to a place (model.ErrStopped) or not at
// all (model.SkippedCutShort). A context that ends once all was read
// stopped nothing.
func (o Opened) Stopped() bool {
	if o.Stuck || model.IsStopped(o.Err) {
		return true
	}
	var inputs []model.Input
	if o.Snap != nil {
		inputs = o.Snap.Inputs
	}
	return model.StoppedIn(o.Warns, inputs)
}

// CountInputs counts the inputs skipped, or those read (leaving out the
// captures whose header could not be read). The documentation a bundle
// holds (model.SkippedDocumentation) is neither: the summary of skipped
// files leaves it out too.
func CountInputs(snap *model.Snapshot, skipped bool) int {
	n := 0
	for _, in := range snap.Inputs {
		if (in.Skipped != "") == skipped && in.Skipped != model.SkippedDocumentation {
			n++
		}
	}
	if !skipped {
		n -= len(snap.UnreadableCaptures())
	}
	return n
}

// Flatten lists the errors errors.Join joined in err, each once: nil
// gives none.
func Flatten(err error) []error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range joined.Unwrap() {
			out = append(out, Flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// WithoutContextErrors returns err without the errors that only say a
// context ended (told apart, as an interrupt or the end of the budget).
func WithoutContextErrors(err error) error {
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err // nil too
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var keep []error
		for _, e := range joined.Unwrap() {
			keep = append(keep, WithoutContextErrors(e))
		}
		return errors.Join(keep...)
	}
	return nil
}

// openReader reads r as one file named name, as parse reads a file of
// that name on disk: a reader with random access (a file, bytes.Reader)
// is read in place, any other spooled to a temporary file first (an
// archive's walk needs random access).
func openReader(ctx context.Context, name string, r io.Reader, opts *parse.Options) (*model.Snapshot, model.ErrorList, error) {
	type sized interface {
		io.ReaderAt
		Size() int64
	}
	if s, ok := r.(sized); ok {
		return parse.OpenReaderAt(ctx, name, s, s.Size(), opts)
	}
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return parse.OpenReaderAt(ctx, name, f, st.Size(), opts)
		}
	}
	dir := ""
	if opts != nil {
		dir = opts.TempDir
	}
	tmp, err := os.CreateTemp(dir, "netmortem-reader-*")
	if err != nil {
		return &model.Snapshot{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, r)
	if err != nil {
		return &model.Snapshot{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	return parse.OpenReaderAt(ctx, name, tmp, n, opts)
}
