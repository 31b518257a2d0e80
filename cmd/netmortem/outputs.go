package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/report"
)

// outputUsage is the help of analyze's repeatable -o flag.
var outputUsage = "output format, to standard output, or FORMAT=PATH to write a file; repeat it for several outputs " +
	"(at most one to standard output): " + strings.Join(report.Formats(), ", ")

// writeOutputs writes rep to each output: the files, then standard
// output. It returns an error for each output that failed, naming its -o
// value.
func writeOutputs(stdout io.Writer, outs []report.Output, rep *report.Report, style report.TableStyle) []error {
	var errs []error
	for _, o := range outs {
		if o.Path != "" {
			if err := writeReportFile(o, rep); err != nil {
				errs = append(errs, fmt.Errorf("-o %s: %w", o, err))
			}
		}
	}
	for _, o := range outs {
		if o.Path == "" {
			write := report.Write
			if o.Format == "table" {
				write = func(w io.Writer, _ string, r *report.Report) error { return report.WriteTable(w, r, style) }
			}
			if err := write(stdout, o.Format, rep); err != nil {
				errs = append(errs, fmt.Errorf("-o %s: %w", o, err))
			}
		}
	}
	return errs
}

// writeReportFile writes rep to o.Path. A regular file, or a path where
// nothing is yet, is written to a temporary file beside it, renamed when
// complete: a reader never sees half a report, and a run that fails
// leaves the file as it was. An existing file keeps its permissions (and
// its owner and group, as far as the process may set them); a new one
// gets 0666 less the umask, as a shell's redirection would. A
// symbolic link to a regular file (or to nothing) has its target written
// that way and stays a link. Anything else is opened and written as it
// is, never replaced: a device (/dev/null, a terminal), a FIFO, and an
// open file descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a
// link to one), which is appended to, so that it continues the stream as
// the shell's redirection left it.
func writeReportFile(o report.Output, rep *report.Report) error {
	t, err := locateOutput(o.Path)
	if err != nil {
		return fmt.Errorf("write %s: %w", o.Path, pathErr(err))
	}
	if t.flag != 0 {
		return writeInPlace(o, t.flag, rep)
	}
	return replaceFile(o, t, rep)
}

// outputTarget is where a report file is written.
type outputTarget struct {
	// path is the file written: the -o path, or the regular file its
	// symbolic links lead to.
	path string
	// flag, when not 0, is how the -o path is opened to be written in
	// place (os.O_WRONLY, with os.O_APPEND for an open file descriptor).
	flag int
	// old is the regular file replaced; nil for a new file.
	old fs.FileInfo
}

// locateOutput finds what path names and how to write it.
func locateOutput(path string) (outputTarget, error) {
	fi, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return outputTarget{}, err
	}
	if err == nil && !fi.Mode().IsRegular() {
		return outputTarget{path: path, flag: os.O_WRONLY}, nil
	}
	target, fd, err := resolveLinks(path)
	switch {
	case err != nil:
		return outputTarget{}, err
	case fd:
		return outputTarget{path: path, flag: os.O_WRONLY | os.O_APPEND}, nil
	case fi == nil:
		return outputTarget{path: target}, nil
	}
	// The links lead to a regular file: it must be the one path names.
	if tfi, err := os.Stat(target); err != nil || !os.SameFile(fi, tfi) {
		return outputTarget{path: path, flag: os.O_WRONLY | os.O_TRUNC}, nil
	}
	return outputTarget{path: target, old: fi}, nil
}

// maxLinks is how many symbolic links resolveLinks follows before it gives
// up (Linux's limit).
const maxLinks = 40

// resolveLinks follows the symbolic links path names, one at a time, to
// the file they lead to, or to where nothing is. fd reports that they
// lead to an open file descriptor (under /proc or /dev/fd), whose links
// name what it has open, not a path to replace.
func resolveLinks(path string) (target string, fd bool, err error) {
	p := path
	for range maxLinks {
		if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			p = filepath.Join(dir, filepath.Base(p))
		}
		if isDescriptorPath(p) {
			return p, true, nil
		}
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return p, false, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", false, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return "", false, errors.New("too many levels of symbolic links")
}

// isDescriptorPath reports whether p is under /proc or /dev/fd, where
// files are the process's own, such as its open file descriptors.
func isDescriptorPath(p string) bool {
	return strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/fd/")
}

// writeInPlace opens o.Path with flag and writes rep to it.
func writeInPlace(o report.Output, flag int, rep *report.Report) error {
	f, err := os.OpenFile(o.Path, flag, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", o.Path, pathErr(err))
	}
	err = report.Write(f, o.Format, rep)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", o.Path, pathErr(err))
	}
	return nil
}

// replaceFile writes rep to a new temporary file beside t.path and renames
// it to t.path.
func replaceFile(o report.Output, t outputTarget, rep *report.Report) error {
	tmp, err := createBeside(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("create %s: %w", o.Path, pathErr(err)) // no directory
	}
	if err != nil {
		// The file is replaced, not written: what failed is the new
		// temporary file in its directory (read-only, full), not the file.
		return fmt.Errorf("write %s: create a temporary file in %s: %w", o.Path, filepath.Dir(t.path), pathErr(err))
	}
	defer os.Remove(tmp.Name()) // once renamed, it is gone: nothing to remove
	err = report.Write(tmp, o.Format, rep)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && t.old != nil {
		keepOwner(tmp.Name(), t.old)
		err = os.Chmod(tmp.Name(), t.old.Mode().Perm())
	}
	if err != nil {
		return fmt.Errorf("write %s: temporary file %s: %w", o.Path, tmp.Name(), pathErr(err))
	}
	if err = os.Rename(tmp.Name(), t.path); err != nil {
		return fmt.Errorf("write %s: rename the temporary file %s to it: %w", o.Path, tmp.Name(), pathErr(err))
	}
	return nil
}

// createBeside creates a new file, in the directory of path, named after
// it. It is created with mode 0666, so the umask decides its permissions
// as it does for any new file (os.CreateTemp would give 0600).
func createBeside(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil && errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}

// pathErr is err without the path an *fs.PathError adds (a temporary
// file's, or the one the message names already).
func pathErr(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
