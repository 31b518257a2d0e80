package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrUnsafePath marks an archive member or link that would point outside
// the bundle: an absolute path, a ".." element, or a link whose target
// leaves the bundle. Such entries are refused, never followed.
var ErrUnsafePath = errors.New("path leaves the bundle")

// entryKind is what a tree entry is.
type entryKind int

const (
	entFile entryKind = iota
	entDir
	entSymlink
	entHardlink
	entOther
)

// entry is one member of a tree (a directory on disk, a tar or zip
// archive).
type entry struct {
	name string // cleaned, slash separated, relative to the tree root
	kind entryKind
	size int64  // -1 when unknown
	link string // symlink or hard link target, as stored
	bad  error  // set when the entry is refused (unsafe name)
	// inflated is set when open decompresses (zip members) or fills
	// holes (sparse tar members): the content is bounded by the opener.
	inflated bool
	// packed is the member's compressed size when open decompresses it,
	// 0 when unknown.
	packed int64
	// scale is the cumulative ratio of the archive's bytes to those on
	// disk they came from (see boundReader.scale).
	scale float64
	// open returns the entry's content; for tar members it is valid only
	// during the walk callback.
	open func() (io.ReadCloser, error)
}

// tree is a walkable bundle: a directory, a tar (possibly compressed) or a
// zip archive. walk may be called more than once.
type tree interface {
	walk(ctx context.Context, fn func(e *entry) error) error
}

// cleanMember checks an archive member name: it must be relative and must
// not climb with "..". It returns the cleaned name.
func cleanMember(name string) (string, error) {
	n := strings.TrimPrefix(name, "./")
	if n == "" || n == "." {
		return "", nil
	}
	if path.IsAbs(n) || (len(n) >= 2 && n[1] == ':') {
		return n, fmt.Errorf("%w: absolute member path %q refused", ErrUnsafePath, name)
	}
	for _, part := range strings.Split(n, "/") {
		if part == ".." {
			return n, fmt.Errorf("%w: member path %q climbs out with \"..\": refused", ErrUnsafePath, name)
		}
	}
	return path.Clean(n), nil
}

// linkTarget resolves a link's target relative to the link's directory;
// ok is false when the target lies outside the tree.
func linkTarget(name, target string, hard bool) (string, bool) {
	t := strings.ReplaceAll(target, "\\", "/")
	if path.IsAbs(t) {
		return t, false
	}
	var j string
	if hard {
		j = path.Clean(t) // hard link targets are member names
	} else {
		j = path.Join(path.Dir(name), t)
	}
	if j == ".." || strings.HasPrefix(j, "../") {
		return j, false
	}
	return j, true
}

// dirTree is a directory on disk. Hidden directories (".git") are not
// walked; symlinks are reported, never followed.
type dirTree struct{ root string }

func (d dirTree) walk(ctx context.Context, fn func(e *entry) error) error {
	return filepath.WalkDir(d.root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if p == d.root {
				return err
			}
			rel, _ := filepath.Rel(d.root, p)
			return fn(&entry{name: filepath.ToSlash(rel), kind: entOther, bad: err})
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if p == d.root {
			return nil
		}
		rel, _ := filepath.Rel(d.root, p)
		e := &entry{name: filepath.ToSlash(rel), size: -1}
		switch t := de.Type(); {
		case de.IsDir():
			if strings.HasPrefix(de.Name(), ".") {
				return filepath.SkipDir
			}
			e.kind = entDir
		case t&fs.ModeSymlink != 0:
			e.kind = entSymlink
			e.link, _ = os.Readlink(p)
		case t.IsRegular():
			e.kind = entFile
			if fi, err := de.Info(); err == nil {
				e.size = fi.Size()
			}
			e.open = func() (io.ReadCloser, error) { return os.Open(p) }
		default:
			e.kind = entOther
		}
		return fn(e)
	})
}
