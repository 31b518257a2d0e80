package model

import (
	"archive/zip"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// ErrTruncated marks input that ends before its real end: a record cut in
// the middle, an iptables-save table without its COMMIT, a JSON document
// or kubectl List not closed, an archive without its end. Every reader's
// warning about a cut wraps it, or io.ErrUnexpectedEOF, which the standard
// library's readers (tar, gzip, a capture's last record) return for one.
var ErrTruncated = errors.New("truncated")

// ErrStopped marks input whose read was stopped before its end, the run
// interrupted or out of time, what came before kept: the warning that
// says so, at the first frame or line not read, wraps it. What was read
// is then cut there, as a file that ends there would be.
var ErrStopped = errors.New("not read from here on")

// Stopped returns the warning of a read stopped at pos, the first frame
// or line not read, its context done with err (ctx.Err()).
func Stopped(pos Pos, err error) *Error {
	return Errorf(pos, "", "%w, what came before kept: %w", ErrStopped, err)
}

// IsStopped reports whether err says a read was stopped: it wraps
// ErrStopped, or the error of a context that ended.
func IsStopped(err error) bool {
	return errors.Is(err, ErrStopped) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// StoppedIn reports whether warns or inputs say a read was stopped: a
// warning that IsStopped, an input skipped as SkippedCutShort.
func StoppedIn(warns ErrorList, inputs []Input) bool {
	for _, e := range warns {
		if IsStopped(e) {
			return true
		}
	}
	for _, in := range inputs {
		if in.Skipped == SkippedCutShort {
			return true
		}
	}
	return false
}

// SkippedCutShort is the Skipped of an input a run interrupted, or out of
// time, did not reach, and the warning of a series' file not read so.
const SkippedCutShort = "not read: the run was cut short before it"

// IsDirPath reports whether an input's path names a directory: one the
// run stopped before it listed its files is listed with a path separator
// at its end, as ls -F lists a directory, so that it is not counted as a
// file.
func IsDirPath(path string) bool {
	return strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(filepath.Separator))
}

// A Cut is an input that ends before its real end: what it holds is not
// all there was, and what it does not show may have happened after.
type Cut struct {
	// File is the input, or the archive, that was cut.
	File string `json:"file" yaml:"file"`
	// Where says where it ends: "cut after frame 812", or the warning
	// that says so ("iptables-save.txt:40: truncated: table nat (from
	// line 3) has no COMMIT ...").
	Where string `json:"where" yaml:"where"`
}

// String says which input was cut, and where: "capture.pcap: cut after
// frame 812".
func (c Cut) String() string {
	if strings.HasPrefix(c.Where, c.File) {
		return c.Where
	}
	return c.File + ": " + c.Where
}

// IsCut reports whether err says that its input ends before its real end:
// it wraps ErrTruncated or io.ErrUnexpectedEOF, a gzip stream's trailer
// does not match what was read (gzip.ErrChecksum), a zip archive has no
// central directory (zip.ErrFormat: it lost its end), or its read was
// stopped there (ErrStopped).
func IsCut(err error) bool {
	return errors.Is(err, ErrTruncated) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, gzip.ErrChecksum) || errors.Is(err, zip.ErrFormat) || errors.Is(err, ErrStopped)
}

// CutOf returns the cut warning e says, if it says one. A capture cut in
// a record ends after the frame before it.
func CutOf(e *Error) (Cut, bool) {
	if e == nil || !IsCut(e.Err) || e.Pos.File == "" {
		return Cut{}, false
	}
	c := Cut{File: e.Pos.File}
	switch {
	case errors.Is(e.Err, ErrStopped) && e.Pos.Frame > 1:
		c.Where = fmt.Sprintf("read to frame %d: the run was cut short there", e.Pos.Frame-1)
	case errors.Is(e.Err, ErrStopped) && e.Pos.Line > 1:
		c.Where = fmt.Sprintf("read to line %d: the run was cut short there", e.Pos.Line-1)
	case errors.Is(e.Err, ErrStopped) && e.Pos.Line > 0:
		c.Where = "the run was cut short before its first line ends"
	case errors.Is(e.Err, ErrStopped) && e.Pos.Frame == 1:
		c.Where = "the run was cut short before its first frame ends"
	case errors.Is(e.Err, ErrStopped):
		c.Where = "the run was cut short while it was read"
	case e.Pos.Frame > 1:
		c.Where = fmt.Sprintf("cut after frame %d", e.Pos.Frame-1)
	case e.Pos.Frame == 1:
		c.Where = "cut before its first frame ends"
	default:
		c.Where = e.Error()
	}
	return c, true
}

// Cuts lists the cuts the warnings say, in their order, the first of each
// file only.
func Cuts(warns ErrorList) []Cut {
	var out []Cut
	seen := map[string]bool{}
	for _, e := range warns {
		if c, ok := CutOf(e); ok && !seen[c.File] {
			seen[c.File] = true
			out = append(out, c)
		}
	}
	return out
}

// CutOf returns the cut of the input file: its own, or that of an archive
// it is a member of ("bundle.tar.gz!node1/sysctl.txt" is cut when
// bundle.tar.gz is).
func (s *Snapshot) CutOf(file string) (Cut, bool) {
	for _, c := range s.Cuts {
		if c.File == file || strings.HasPrefix(file, c.File+"!") {
			return c, true
		}
	}
	return Cut{}, false
}

// CutInput returns a cut of the snapshot that may have lost an input of
// one of the kinds: a cut input of such a kind, or a cut archive, or any
// other cut file read as no input (its kind unknown). Inputs of other
// kinds that are cut (a capture, when the kinds are components) are not
// counted.
func (s *Snapshot) CutInput(kinds ...Kind) (Cut, bool) {
	for _, c := range s.Cuts {
		known := false
		for _, in := range s.Inputs {
			if in.Path != c.File || in.Skipped != "" {
				continue
			}
			known = true
			for _, k := range kinds {
				if in.Kind == k {
					return c, true
				}
			}
		}
		if !known {
			return c, true
		}
	}
	return Cut{}, false
}
