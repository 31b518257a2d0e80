// Package parse reads evidence into a model.Snapshot: a support bundle
// directory, an archive, or single files. Each file's format is sniffed from
// its content, not its name, and handed to the parser for that format. Every
// parser keeps going after a bad line and reports it with its position.
//
//	snap, warnings, err := parse.Open(ctx, "bundle.tar.gz", nil)
//
// err is set only when the path itself cannot be read; problems inside the
// bundle (a garbage line, a truncated capture, a file of unknown format) are
// warnings, and everything else is still read.
package parse

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

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
}

func (o *Options) formats() []*Format {
	if o == nil || o.Formats == nil {
		return Formats()
	}
	return o.Formats
}

// headSize is how much of a file is looked at to sniff its format.
const headSize = 64 << 10

// Open reads the evidence at path (a directory, a .tar or .tar.gz archive,
// or a single file, possibly gzip'd) into a Snapshot. It returns the
// problems found inside the evidence as warnings, and a non-nil error only
// when path cannot be read at all.
func Open(ctx context.Context, path string, opts *Options) (*model.Snapshot, model.ErrorList, error) {
	o := &opener{ctx: ctx, opts: opts, snap: &model.Snapshot{}}
	if opts != nil {
		o.node = opts.Node
	}
	err := o.open(path)
	o.warns.Sort()
	return o.snap, o.warns, err
}

// OpenAll opens every path and merges them into one Snapshot. The error
// joins those of the paths that could not be read at all.
func OpenAll(ctx context.Context, paths []string, opts *Options) (*model.Snapshot, model.ErrorList, error) {
	snap := &model.Snapshot{}
	var warns model.ErrorList
	var errs []error
	for _, p := range paths {
		s, w, err := Open(ctx, p, opts)
		snap.Merge(s)
		warns = append(warns, w...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return snap, warns, errors.Join(errs...)
}

type opener struct {
	ctx   context.Context
	opts  *Options
	node  string
	snap  *model.Snapshot
	warns model.ErrorList
}

func (o *opener) open(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	if fi.IsDir() {
		return o.walkDir(p)
	}
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	defer f.Close()
	return o.file(p, f)
}

func (o *opener) walkDir(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return fmt.Errorf("open %s: %w", p, err)
			}
			o.warns.Add(model.Pos{File: p}, "", err)
			return nil
		}
		if ctxErr := o.ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			o.skip(p, "not a regular file")
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			o.warns.Add(model.Pos{File: p}, "", err)
			o.skip(p, err.Error())
			return nil
		}
		defer f.Close()
		if err := o.file(p, f); err != nil {
			o.warns.Add(model.Pos{File: p}, "", err)
		}
		return nil
	})
}

// file reads one file: an archive is walked, anything else is sniffed and
// parsed.
func (o *opener) file(name string, r io.Reader) error {
	br := bufio.NewReaderSize(r, headSize)
	head, _ := br.Peek(headSize)
	if isGzip(head) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			o.warns.Add(model.Pos{File: name}, "", fmt.Errorf("gzip: %w", err))
			o.skip(name, "corrupt gzip header")
			return nil
		}
		defer zr.Close()
		zr.Multistream(true)
		br = bufio.NewReaderSize(zr, headSize)
		head, _ = br.Peek(headSize)
	}
	if isTar(head) {
		return o.tar(name, br)
	}
	o.parse(name, br, head)
	return nil
}

func (o *opener) tar(name string, r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		if err := o.ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			o.warns.Add(model.Pos{File: name}, "", fmt.Errorf("tar: %w", err))
			return nil
		}
		member := name + "!" + path.Clean(h.Name)
		switch h.Typeflag {
		case tar.TypeReg:
		case tar.TypeDir:
			continue
		default:
			o.skip(member, "not a regular file")
			continue
		}
		if slices.Contains(strings.Split(h.Name, "/"), "..") || path.IsAbs(h.Name) {
			o.warns.Addf(model.Pos{File: member}, "", "archive member path leaves the archive: refused")
			o.skip(member, "path leaves the archive")
			continue
		}
		if base := path.Base(h.Name); strings.HasPrefix(base, "._") {
			continue // macOS resource forks
		}
		if err := o.file(member, tr); err != nil {
			o.warns.Add(model.Pos{File: member}, "", err)
		}
	}
}

func (o *opener) parse(name string, r io.Reader, head []byte) {
	if len(head) == 0 {
		o.skip(name, "empty file")
		return
	}
	f := sniff(name, head, o.opts.formats())
	if f == nil {
		o.warns.Add(model.Pos{File: name}, "", ErrUnrecognized)
		o.skip(name, "unrecognized content")
		return
	}
	src := &Source{Name: name, Node: o.node, Format: f.Name}
	n, err := f.Parse(o.ctx, r, src, o.snap)
	var list model.ErrorList
	list.Append(err)
	for _, e := range list {
		if e.Pos.File == "" {
			e.Pos.File = name
		}
	}
	o.warns = append(o.warns, list...)
	in := model.Input{
		Path:     name,
		Format:   src.Format,
		Kind:     f.Kind,
		Node:     src.Node,
		Records:  n,
		Warnings: len(list),
		Details:  src.Details,
	}
	o.snap.Inputs = append(o.snap.Inputs, in)
	if o.opts != nil && o.opts.Progress != nil {
		o.opts.Progress(in)
	}
}

func (o *opener) skip(name, why string) {
	in := model.Input{Path: name, Skipped: why}
	o.snap.Inputs = append(o.snap.Inputs, in)
	if o.opts != nil && o.opts.Progress != nil {
		o.opts.Progress(in)
	}
}

func isGzip(head []byte) bool {
	return len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b
}

// isTar reports whether head starts a tar archive: "ustar" at offset 257.
func isTar(head []byte) bool {
	return len(head) >= 262 && bytes.Equal(head[257:262], []byte("ustar"))
}
