//go:build fleet

package source

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// keyFS is a file system of listed keys, so that doublestar matches them
// as it matches local files: each key a file, each "/" a directory.
type keyFS struct {
	dirs map[string][]fs.DirEntry // directory ("." for the root) -> entries, sorted
	kind map[string]bool          // path -> is a directory
}

func newKeyFS() *keyFS {
	return &keyFS{dirs: map[string][]fs.DirEntry{".": nil}, kind: map[string]bool{".": true}}
}

// add adds the key k (a valid fs path) and the directories above it.
func (k *keyFS) add(key string) {
	if _, ok := k.kind[key]; ok {
		return
	}
	k.kind[key] = false
	child, isDir := key, false
	for {
		dir := path.Dir(child)
		k.dirs[dir] = append(k.dirs[dir], keyEntry{name: path.Base(child), dir: isDir})
		if _, ok := k.kind[dir]; ok {
			return
		}
		k.kind[dir] = true
		child, isDir = dir, true
	}
}

// Open opens directories only: doublestar reads them; files are never read.
func (k *keyFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
}

// ReadDir lists a directory, sorted by name.
func (k *keyFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if isDir, ok := k.kind[name]; !ok || !isDir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	es := k.dirs[name]
	if !slices.IsSortedFunc(es, byName) {
		slices.SortFunc(es, byName)
	}
	return es, nil
}

// Stat says whether name is a key, a directory above keys, or neither.
func (k *keyFS) Stat(name string) (fs.FileInfo, error) {
	isDir, ok := k.kind[name]
	if !ok {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return keyEntry{name: path.Base(name), dir: isDir}, nil
}

func byName(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }

// keyEntry is a key or a directory of keyFS, as a DirEntry and a FileInfo.
type keyEntry struct {
	name string
	dir  bool
}

func (e keyEntry) Name() string { return e.name }
func (e keyEntry) IsDir() bool  { return e.dir }
func (e keyEntry) Type() fs.FileMode {
	if e.dir {
		return fs.ModeDir
	}
	return 0
}
func (e keyEntry) Info() (fs.FileInfo, error) { return e, nil }
func (e keyEntry) Size() int64                { return 0 }
func (e keyEntry) Mode() fs.FileMode {
	if e.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (e keyEntry) ModTime() time.Time { return time.Time{} }
func (e keyEntry) Sys() any           { return nil }
