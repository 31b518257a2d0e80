// Package parse reads evidence into a model.Snapshot: a support bundle
// directory, an archive, or single files. Each file's format is sniffed from
// its content, not its name, and handed to the parser for that format. Every
// parser keeps going after a bad line and reports it with its position.
//
//	snap, warnings, err := parse.Open(ctx, "bundle.tar.gz", nil)
//
// err is set only when the path itself cannot be read; problems inside the
// bundle (a garbage line, a truncated capture, a file of unknown format, an
// archive member that points outside the bundle, a decompression bomb) are
// warnings, and everything else is still read.
//
// The layout of a support bundle (troubleshoot.sh, sosreport, the Rancher
// and EKS log collectors, kubectl cluster-info dump, must-gather) is
// recognized from its paths: it tells which node each file belongs to and
// which command produced it (see docs/bundles.md). Values a redactor hid
// ("***HIDDEN***") are dropped from the model as unknown; see Redacted and
// Token.
package parse

import (
	"context"
	"errors"
	"os"

	"github.com/netmortem/netmortem/model"
)

// Options tune Open. The zero value (or nil) is ready to use.
type Options struct {
	// Node attributes every input to this node unless the bundle layout
	// says otherwise.
	Node string
	// Formats restricts the formats tried; nil means Formats().
	Formats []*Format
	// Progress, when set, is called with each input as it is finished.
	Progress func(in model.Input)
	// SummarizeCaptures folds connection attempts into per-server,
	// per-outcome counters (Snapshot.EndpointStats) instead of keeping
	// each one: established attempts that ended normally, and refused and
	// unanswered ones beyond a sample per server (capture.FailedSample).
	// Memory then follows live connections, not the capture's size. The
	// rules count both; `netmortem flows` keeps every attempt.
	SummarizeCaptures bool
	// FailedSample, when positive, is how many refused, and how many
	// unanswered, attempts to each server SummarizeCaptures keeps one by
	// one (capture.FailedSample otherwise).
	FailedSample int
	// Limits bound decompression (sizes, ratio, nesting); zero fields take
	// the DefaultLimits.
	Limits Limits
	// TempDir is where nested archives too large for memory are spilled
	// (and removed before Open returns); "" means os.TempDir().
	TempDir string
}

func (o *Options) formats() []*Format {
	if o == nil || o.Formats == nil {
		return Formats()
	}
	return o.Formats
}

// Open reads the evidence at path (a directory, a .tar, .tar.gz, .tgz,
// .tar.xz, .tar.bz2 or .zip archive, possibly holding further archives, or
// a single file, possibly gzip'd, xz'd or bzip2'd) into a Snapshot. It
// returns the problems found inside the evidence as warnings, and a non-nil
// error only when path cannot be read at all or ctx ends first (then the
// Snapshot holds what was read until then). Open never writes into the
// bundle; nested archives larger than Limits.MaxMemoryBuffer are spilled to
// Options.TempDir and removed before it returns.
func Open(ctx context.Context, path string, opts *Options) (*model.Snapshot, model.ErrorList, error) {
	o := newOpener(ctx, opts)
	err := o.open(path)
	stitchSeries(ctx, o.snap, opts, &o.warns)
	scrubRedacted(o.snap, &o.warns)
	o.warns.Sort()
	return o.snap, o.warns, err
}

// OpenAll opens every path and merges them into one Snapshot. The error
// joins those of the paths that could not be read at all.
func OpenAll(ctx context.Context, paths []string, opts *Options) (*model.Snapshot, model.ErrorList, error) {
	snap := &model.Snapshot{}
	var warns model.ErrorList
	var errs []error
	for i, p := range paths {
		s, w, err := Open(ctx, p, opts)
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
	if len(paths) > 1 {
		// The files of a rotated series may have been given one by one.
		stitchSeries(ctx, snap, opts, &warns)
	}
	return snap, warns, errors.Join(errs...)
}

func newOpener(ctx context.Context, opts *Options) *opener {
	o := &opener{ctx: ctx, opts: opts, snap: &model.Snapshot{}, formats: opts.formats()}
	var lim Limits
	if opts != nil {
		lim = opts.Limits
		o.node = opts.Node
		o.tempDir = opts.TempDir
	}
	if o.tempDir == "" {
		o.tempDir = os.TempDir()
	}
	o.bud = &budget{lim: lim.withDefaults()}
	return o
}
