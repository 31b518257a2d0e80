// Package bundle is how Open reads evidence: it walks a directory, an
// archive or a single file (decompressing, and opening archives inside
// archives within Limits), places every file it finds (the bundle layout
// says which node it belongs to and which command produced it), and hands
// each to the format that recognizes its content, setting aside the files
// of rotated capture series. Then it reads each series as one timeline and
// drops the values a redactor hid. Package parse calls
// it with its format registry; terminal sessions, read by every other
// format, are a format made here (SessionFormat).
//
// The stages, a file each: walk.go (directories, archives, compression:
// tree.go, archive.go, compress.go, limits.go), layout*.go (placement),
// dispatch.go (sniff and parse, charged to the memory budget of
// memory.go), then series.go and redact.go over the whole snapshot.
package bundle

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// Options tune Open. The zero value (or nil) is ready to use, but reads no
// format: parse.Open fills Formats with its registry.
type Options struct {
	// Node attributes every input to this node unless the bundle layout
	// says otherwise.
	Node string
	// Formats are the formats tried, in order of preference when two
	// score the same; parse.Open uses parse.Formats() when nil.
	Formats []*format.Format
	// Progress, when set, is called with each input as it is finished.
	Progress func(in model.Input)
	// Summary, when enabled, folds the captures' connection attempts into
	// per-server, per-outcome counters (Snapshot.EndpointStats) instead of
	// keeping each one: established attempts that ended normally, and
	// refused and unanswered ones beyond a sample per server. Memory then
	// follows live connections, not the capture's size. The rules count
	// both. parse.Open enables it unless KeepAttempts or EachAttempt asks
	// for every attempt; Open here takes it as it is.
	capture.Summary
	// KeepAttempts keeps every connection attempt of the captures in
	// Snapshot.Attempts, as `netmortem flows` lists them: memory then
	// grows with the captures. It turns Summary off.
	KeepAttempts bool
	// EachAttempt, when set, is handed the connection attempts of the
	// captures one by one, each capture's in its order, as their
	// connections end, instead of their being kept in
	// Snapshot.Attempts (see capture.Options.EachAttempt): memory then
	// follows the live connections, not the captures' size. Captures are
	// read one at a time, so a capture's attempts follow the previous
	// one's. Rotated capture series are then not read as one timeline:
	// each file's attempts are its own.
	EachAttempt func(model.Attempt)
	// LendAttempts, with EachAttempt, lends the attempts rather than
	// giving them: each, with the segments and data sizes it points to,
	// is EachAttempt's only until it returns, and the next is built in
	// the same memory (capture.Options.LendAttempts). A large capture's
	// attempts then make no garbage; an EachAttempt that keeps one
	// copies what it points to.
	LendAttempts bool
	// EachRow, when set, is handed each attempt's row instead of
	// EachAttempt the attempt (model.Attempt.Row), as EachAttempt would
	// be: worked out without building the attempt, in fewer instructions,
	// and lent (capture.Options.EachRow).
	EachRow func(*model.Row)
	// Limits bound decompression (sizes, ratio, nesting, archive
	// members) and the memory the parsers keep; zero fields take the
	// DefaultLimits.
	Limits Limits
	// TempDir is where nested archives too large for memory are spilled
	// (and removed before Open returns); "" means os.TempDir().
	TempDir string
	// Stdin, when set, is what the path "-" reads (see StdinName).
	Stdin io.Reader
}

// StdinName is the name of what Options.Stdin reads in positions, inputs
// and findings: "<stdin>", and "<stdin>!member" for an archive's members.
// Stdin is read as one file: sniffed like any other (a capture, a command
// output, kubectl JSON, a compressed file, a tar or zip archive), read once,
// and bounded like an archive member (Limits.MaxFileBytes). An archive on
// stdin is held in memory up to Limits.MaxMemoryBuffer and spilled to a
// temporary file in Options.TempDir beyond it, since walking it needs
// random access.
const StdinName = "<stdin>"

// Open reads the evidence at path (a directory, a .tar, .tar.gz, .tgz,
// .tar.xz, .tar.bz2 or .zip archive, possibly holding further archives, or
// a single file, possibly gzip'd, xz'd or bzip2'd; "-" for Options.Stdin
// when it is set) into a Snapshot. It
// returns the problems found inside the evidence as warnings, and a non-nil
// error only when path cannot be read at all or ctx ends before it is
// read whole (then the Snapshot holds what was read until then). Open
// never writes into the bundle; nested archives larger than
// Limits.MaxMemoryBuffer are spilled to Options.TempDir and removed before
// it returns.
func Open(ctx context.Context, path string, opts *Options) (*model.Snapshot, model.ErrorList, error) {
	o := newOpener(ctx, opts)
	return o.finish(o.open(path))
}

// OpenReaderAt reads the size bytes ra reads (an object in a bucket) as
// Open reads a file of that name on disk: its content sniffed, an archive
// walked in place from ra, under the same Limits. name names it in
// positions, inputs and findings (name!member for an archive's members);
// ra is read from its start, and again for each pass over an archive.
func OpenReaderAt(ctx context.Context, name string, ra io.ReaderAt, size int64, opts *Options) (*model.Snapshot, model.ErrorList, error) {
	o := newOpener(ctx, opts)
	return o.finish(o.readerAt(name, io.NewSectionReader(ra, 0, size), ra, size))
}

// finish ends an Open of one path, whose reading returned err: it reads
// the captures set aside (rotated series, unless keepHeld), ties
// components' logs to the node they name, drops the values a redactor
// hid, and sorts the warnings.
func (o *opener) finish(err error) (*model.Snapshot, model.ErrorList, error) {
	if !o.keepHeld && len(o.series.held) > 0 {
		if rerr := o.readRest(); err == nil {
			err = rerr
		}
	}
	tieLogsToNodes(o.snap)
	scrubRedacted(o.snap, &o.warns)
	o.warns.Sort()
	return o.snap, o.warns, err
}

// OpenAll opens every path and merges them into one Snapshot. The error
// joins those of the paths that could not be read at all. The path "-"
// reads Options.Stdin when it is set.
func OpenAll(ctx context.Context, paths []string, opts *Options) (*model.Snapshot, model.ErrorList, error) {
	snap := &model.Snapshot{}
	var warns model.ErrorList
	var errs []error
	// The files of a rotated series may be given one by one: the paths
	// share what they set aside.
	series := &seriesHold{operands: map[string]int{}}
	for _, p := range paths {
		series.operands[seriesStem(p)]++
	}
	for i, p := range paths {
		o := newOpener(ctx, opts)
		o.series, o.keepHeld = series, len(paths) > 1
		s, w, err := o.finish(o.open(p))
		if i == 0 && s != nil {
			snap = s // no copy of what may be a large capture's attempts
		} else {
			snap.Merge(s)
		}
		warns = append(warns, w...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(series.held) > 0 {
		o := newOpener(ctx, opts)
		o.snap, o.series = snap, series
		if err := o.readRest(); err != nil {
			errs = append(errs, err)
		}
		warns = append(warns, o.warns...)
		warns.Sort()
	}
	if len(paths) > 1 {
		// A log's node may be named in another path's objects.
		tieLogsToNodes(snap)
	}
	return snap, warns, errors.Join(errs...)
}

// opener is one Open: it walks the bundle, recognizes its layout, and
// hands each file to the parser its content calls for.
type opener struct {
	ctx     context.Context
	opts    *Options
	node    string
	tempDir string
	formats []*format.Format
	bud     *budget
	snap    *model.Snapshot
	warns   model.ErrorList
	// series holds the captures set aside to be read with the other
	// files of their series (series.go), shared by OpenAll's paths.
	// readingHeld is set while a capture set aside is read alone;
	// keepHeld leaves what is still held unread when the Open finishes,
	// for OpenAll to read with the other paths'.
	series      *seriesHold
	readingHeld bool
	keepHeld    bool
}

func newOpener(ctx context.Context, opts *Options) *opener {
	o := &opener{ctx: ctx, opts: opts, snap: &model.Snapshot{}, series: &seriesHold{}}
	var lim Limits
	if opts != nil {
		lim = opts.Limits
		o.node = opts.Node
		o.tempDir = opts.TempDir
		o.formats = opts.Formats
	}
	if o.tempDir == "" {
		o.tempDir = os.TempDir()
	}
	o.bud = &budget{lim: lim.withDefaults()}
	return o
}
