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
//
// The formats live in sub-packages by domain, one file per format with its
// Format: netfilter, host, kube and logs; package bundle walks, places and
// dispatches; package format defines what a format is. Formats lists them
// all, in one explicit list.
package parse

import (
	"context"
	"io"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/bundle"
)

// Options tune Open (see bundle.Options). The zero value (or nil) is ready
// to use; nil Formats means Formats(). Captures are read as analyze reads
// them, their attempts summarized (Summary enabled), so that memory follows
// their live connections: set KeepAttempts for every attempt in
// Snapshot.Attempts, or EachAttempt for every attempt handed on as it
// ends, in bounded memory.
type Options = bundle.Options

// Summary says whether and how Open summarizes captures (see
// capture.Summary): Options.Summary.
type Summary = capture.Summary

// Limits bound what Open reads from archives and compressed files, and the
// memory its parsers keep (see bundle.Limits).
type Limits = bundle.Limits

// DefaultLimits returns the limits Open uses for zero fields.
func DefaultLimits() Limits { return bundle.DefaultLimits() }

// Open reads the evidence at path (a directory, a .tar, .tar.gz, .tgz,
// .tar.xz, .tar.bz2 or .zip archive, possibly holding further archives, or
// a single file, possibly gzip'd, xz'd or bzip2'd) into a Snapshot, trying
// opts.Formats, or all Formats when nil. It returns the problems found
// inside the evidence as warnings, and a non-nil error only when path cannot
// be read at all or ctx ends before it is read whole (then the Snapshot
// holds what was read until then). Open never writes into the bundle; nested archives larger
// than Limits.MaxMemoryBuffer are spilled to Options.TempDir and removed
// before it returns.
func Open(ctx context.Context, path string, opts *Options) (*model.Snapshot, model.ErrorList, error) {
	return bundle.Open(ctx, path, withDefaults(opts))
}

// OpenReaderAt reads the size bytes ra reads (an object in a bucket, see
// package source) as Open reads a file named name on disk: the same
// sniffing, the same archive walk (in place, from ra) and the same Limits.
// name names it in positions, inputs and findings.
func OpenReaderAt(ctx context.Context, name string, ra io.ReaderAt, size int64, opts *Options) (*model.Snapshot, model.ErrorList, error) {
	return bundle.OpenReaderAt(ctx, name, ra, size, withDefaults(opts))
}

// OpenAll opens every path and merges them into one Snapshot. The error
// joins those of the paths that could not be read at all.
func OpenAll(ctx context.Context, paths []string, opts *Options) (*model.Snapshot, model.ErrorList, error) {
	return bundle.OpenAll(ctx, paths, withDefaults(opts))
}

// withDefaults returns opts with Formats set, the registry when opts leave
// it nil, and summary mode as Options says: on unless every attempt is
// asked for.
func withDefaults(opts *Options) *Options {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Formats == nil {
		o.Formats = Formats()
	}
	o.Summary.Enabled = !o.KeepAttempts && (o.Summary.Enabled || o.EachAttempt == nil && o.EachRow == nil)
	return &o
}
