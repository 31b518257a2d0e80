package operand

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/source"
)

// Objects are the bundles a command reads from object storage (s3://,
// gs://, azblob://, file:// operands, see package source): the buckets
// opened, what their listings said of each object, and the patterns whose
// listing was cut short. A command makes one for its run and closes it.
type Objects struct {
	src *source.Buckets
	// timeout bounds the listing of each operand; 0 for none.
	timeout time.Duration

	mu    sync.Mutex
	attrs map[string]source.Attrs // by name
	// failed are the patterns (by name) listed only in part, with why.
	failed map[string]error
}

// NewObjects returns the Objects of one run; timeout bounds the listing of
// each operand (0: none).
func NewObjects(timeout time.Duration) *Objects {
	return &Objects{src: source.New(), timeout: timeout, attrs: map[string]source.Attrs{}, failed: map[string]error{}}
}

// Close closes the buckets; nil does nothing.
func (o *Objects) Close() {
	if o != nil {
		o.src.Close()
	}
}

// expand lists the objects a URL operand names (a key, a prefix, a
// pattern) and returns their names. A prefix or pattern that matches no
// object returns its name and unmatched; a listing that fails before any
// object is an error; one cut short returns the objects listed and keeps
// the pattern's error for its own line (ListingErr), as does a key that
// cannot be read.
func (o *Objects) expand(ctx context.Context, operand string) (names []string, unmatched bool, err error) {
	loc, err := source.Parse(operand)
	if err != nil {
		return nil, false, err
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	list, err := o.src.List(ctx, operand)
	if o.timeout > 0 && errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		err = fmt.Errorf("%w (over the --timeout budget of %s)", err, o.timeout)
	}
	if err != nil && loc.Kind() == source.Object {
		// One bundle: its line says why it cannot be read, as a local
		// path's does.
		o.mu.Lock()
		o.failed[loc.Name()] = err
		o.mu.Unlock()
		return []string{loc.Name()}, false, nil
	}
	switch {
	case errors.Is(err, source.ErrNoMatch):
		return []string{loc.Name()}, true, nil
	case err != nil && len(list) == 0:
		return nil, false, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, a := range list {
		o.attrs[a.Name] = a
		names = append(names, a.Name)
	}
	if err != nil {
		o.failed[loc.Name()] = err
		names = append(names, loc.Name())
	}
	return names, false, nil
}

// ListingErr is why the listing of the pattern name was cut short, or why
// the key name could not be read, nil when neither.
func (o *Objects) ListingErr(name string) error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.failed[name]
}

// Stat returns the attributes of the object name, from its listing or
// asked for.
func (o *Objects) Stat(ctx context.Context, name string) (source.Attrs, error) {
	o.mu.Lock()
	a, ok := o.attrs[name]
	o.mu.Unlock()
	if ok {
		return a, nil
	}
	a, err := o.src.Stat(ctx, name)
	if err == nil {
		o.mu.Lock()
		o.attrs[name] = a
		o.mu.Unlock()
	}
	return a, err
}

// open reads the object name as parse reads a file of that name.
func (o *Objects) open(ctx context.Context, name string, opts *parse.Options) (*model.Snapshot, model.ErrorList, error) {
	if err := o.ListingErr(name); err != nil {
		return &model.Snapshot{}, nil, err
	}
	a, err := o.Stat(ctx, name)
	if err != nil {
		return &model.Snapshot{}, nil, err
	}
	r, err := o.src.OpenObject(ctx, a)
	if err != nil {
		return &model.Snapshot{}, nil, mayPassErr(err)
	}
	defer r.Close()
	snap, warns, err := parse.OpenReaderAt(ctx, name, r, r.Size(), opts)
	if rerr := r.Err(); rerr != nil && ctx.Err() == nil && MayPass(rerr) {
		// Read in part, for want of the store: not this bundle's
		// result, which a retry gives.
		return snap, warns, mayPassErr(rerr)
	}
	return snap, warns, err
}

// ErrMayPass marks a bundle that could not be read for now: its store did
// not answer, or failed. Batch writes no line for it, so that --resume
// reads it again, and exits 3.
var ErrMayPass = errors.New("may pass when tried again")

// mayPassErr marks err with ErrMayPass when it may pass.
func mayPassErr(err error) error {
	if MayPass(err) {
		return fmt.Errorf("%w (%w)", err, ErrMayPass)
	}
	return err
}

// openSources is parse.OpenAll for paths some of which may be bundle URLs,
// read through objs, or the names of readers: each URL and reader is read
// on its own, the local paths together, and the snapshots merged.
func openSources(ctx context.Context, paths []string, opts *parse.Options, objs *Objects, readers map[string]io.Reader) (*model.Snapshot, model.ErrorList, error) {
	var local, urls []string
	for _, p := range paths {
		if objs != nil && source.IsURL(p) || readers[p] != nil {
			urls = append(urls, p)
		} else {
			local = append(local, p)
		}
	}
	if len(urls) == 0 {
		return parse.OpenAll(ctx, paths, opts)
	}
	snap := &model.Snapshot{}
	var warns model.ErrorList
	var errs []error
	if len(local) > 0 {
		s, w, err := parse.OpenAll(ctx, local, opts)
		snap, warns, errs = s, w, append(errs, err)
	}
	for _, u := range urls {
		var (
			s   *model.Snapshot
			w   model.ErrorList
			err error
		)
		if r := readers[u]; r != nil {
			s, w, err = openReader(ctx, u, r, opts)
		} else {
			s, w, err = objs.open(ctx, u, opts)
		}
		snap.Merge(s)
		warns = append(warns, w...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return snap, warns, errors.Join(errs...)
}

// BundleSize is the size of a bundle: of its object in storage (read
// through o, which may be nil), or on disk (every file under a
// directory), with where it is, for the size budget's message.
func (o *Objects) BundleSize(ctx context.Context, bundle string) (int64, string) {
	if o != nil && source.IsURL(bundle) {
		a, err := o.Stat(ctx, bundle)
		if err != nil {
			return 0, "in storage" // reading it says why
		}
		return a.Size, "in storage"
	}
	return diskSize(bundle), "on disk"
}

// ModTime is when the object bundle was last modified, zero when it is
// not an object or this is not known; o may be nil.
func (o *Objects) ModTime(ctx context.Context, bundle string) time.Time {
	if o != nil && source.IsURL(bundle) {
		if a, err := o.Stat(ctx, bundle); err == nil {
			return a.ModTime
		}
	}
	return time.Time{}
}

// expandURL adds to e the objects of a URL operand (see Objects.expand).
func (e *Expanded) expandURL(ctx context.Context, operand string, add func(string)) error {
	names, unmatched, err := e.Objects.expand(ctx, operand)
	if err != nil {
		return err // it names the operand
	}
	for _, n := range names {
		if unmatched {
			e.Unmatched[n] = true
		}
		add(n)
	}
	return nil
}

// NoMatch is the error of an operand, a pattern, that matched nothing.
func NoMatch(operand string) error {
	if source.IsURL(operand) {
		return source.ErrNoMatch
	}
	return ErrNoMatch
}

// MayPass reports whether err, a listing or a read of object storage that
// failed, may pass when tried again: no answer in time, a connection that
// failed, a server's error (HTTP 5xx, throttling). A listing that failed so
// makes batch exit 3, not 2 (a usage error, which an Indexed Job's pod
// failure policy does not retry); a bundle read so gets no line.
func MayPass(err error) bool {
	var (
		nerr   net.Error
		status interface{ HTTPStatusCode() int }
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr):
		return true
	case errors.As(err, &status) && (status.HTTPStatusCode() >= 500 || status.HTTPStatusCode() == 429):
		return true
	}
	return source.Transient(err)
}

// diskSize is the size of a file, or of every file under a directory.
func diskSize(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
