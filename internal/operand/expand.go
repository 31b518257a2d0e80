package operand

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/netmortem/netmortem/source"
)

// Stdin is the operand that reads stdin (parse.Options.Stdin), named
// bundle.StdinName ("<stdin>") in inputs, positions and findings.
const Stdin = "-"

// ErrNoMatch marks a glob operand that matches no path.
var ErrNoMatch = errors.New("no path matches this pattern")

// ErrOutside marks a path matched by a pattern that is a symbolic link
// leading out of the directory the pattern starts from.
var ErrOutside = errors.New("symbolic link leads out of the directory the pattern starts from: not read")

// Expanded is what Expand makes of the operands of a command.
type Expanded struct {
	// Paths are the operands with their patterns expanded, in the order
	// given, each path once; a pattern that matched nothing is kept as
	// it is (and listed in Unmatched), so that it is reported where it
	// stood.
	Paths     []string
	Unmatched map[string]bool
	// Outside are the paths a pattern matched that are symbolic links
	// leading out of the directory the pattern starts from (its part
	// before the first wildcard): a ticket is its own folder, and
	// 'tickets/T1/**' must not read tickets/T2 through a link T1/up ->
	// "..". They stay in Paths, where they were matched, and Open
	// refuses them (ErrOutside).
	Outside map[string]bool
	// Objects reads the bundle URLs among Paths; nil when none may be.
	Objects *Objects
	// Readers are read, each as one file of its name, for the paths that
	// name them (see Open).
	Readers map[string]io.Reader
}

// Close closes the buckets e.Objects opened.
func (e Expanded) Close() { e.Objects.Close() }

// Expand expands the operands of analyze, inspect and batch. "-"
// reads stdin (at most once). An operand that names an existing path is
// that path, even when its name holds glob characters; any other operand
// holding * ? [ or { is a doublestar pattern: "**" matches any number of
// directories, "{a,b}" either name; as in a shell, wildcards do not match
// names starting with a dot, and "**" does not follow symbolic links to
// directories; a match that is a link leading out of the directory the
// pattern starts from is listed in Outside, and not read. A pattern that matches nothing is listed in unmatched; a
// malformed one is an error. A path given or matched twice is read once,
// and so is a path inside a directory operand (DropInside).
//
// Bundle URLs are read through objs (nil: an operand is a local path
// whatever it looks like): a URL operand is the objects it lists (see
// Objects.expand), and a listing that fails is the error.
//
// The names of readers are operands read from them (see Open), taken as
// they are.
func Expand(ctx context.Context, args []string, objs *Objects, readers map[string]io.Reader) (Expanded, error) {
	e := Expanded{Unmatched: map[string]bool{}, Outside: map[string]bool{}, Objects: objs, Readers: readers}
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			e.Paths = append(e.Paths, p)
		}
	}
	for _, a := range args {
		switch {
		case a == Stdin:
			if seen[a] {
				return e, errors.New(`"-" (stdin) given twice: stdin can be read only once`)
			}
			add(a)
			continue
		case readers[a] != nil:
			if seen[a] {
				return e, fmt.Errorf("%q given twice: a reader can be read only once", a)
			}
			add(a)
			continue
		case objs != nil && source.IsURL(a) && !source.Cloud:
			// The laptop build: said once, before anything is read.
			return e, fmt.Errorf("%s: %w", a, source.ErrNoCloud)
		case objs != nil && source.IsURL(a):
			if err := e.expandURL(ctx, a, add); err != nil {
				return e, err
			}
			continue
		case !IsPattern(a):
			add(a)
			continue
		}
		if _, err := os.Lstat(a); err == nil {
			add(a) // a file named with glob characters
			continue
		}
		matches, err := doublestar.FilepathGlob(a, doublestar.WithNoHidden(), doublestar.WithNoFollow())
		if err != nil {
			return e, fmt.Errorf("%q: %w", a, err)
		}
		if len(matches) == 0 {
			e.Unmatched[a] = true
			add(a)
			continue
		}
		base, _ := doublestar.SplitPattern(filepath.ToSlash(a))
		for _, m := range matches {
			if leadsOut(filepath.FromSlash(base), m) {
				e.Outside[m] = true
			}
			add(m)
		}
	}
	keep := e.Unmatched
	if len(readers) > 0 || len(e.Outside) > 0 {
		keep = maps.Clone(e.Unmatched)
		for name := range readers {
			keep[name] = true
		}
		for p := range e.Outside {
			keep[p] = true
		}
	}
	e.Paths = DropInside(e.Paths, keep)
	return e, nil
}

// DropInside leaves out of paths those that reading another of them reads
// already: a path whose real path (links resolved) is that of an earlier
// one, and a path inside a directory of paths, unless the walk of that
// directory does not reach it (under a hidden directory, which the walk
// skips). So 'q/**', which matches q, q/X and q/X/file, reads q once, and
// DIR DIR/capture.pcap reads the capture once. "-", patterns that matched
// nothing and paths that do not exist are kept as they are (reading them
// says why they cannot be read).
func DropInside(paths []string, unmatched map[string]bool) []string {
	real := make([]string, len(paths))
	first := map[string]int{} // real path -> index of its first operand
	dirs := map[string]bool{} // real paths of the directory operands
	for i, p := range paths {
		if p == Stdin || unmatched[p] {
			continue
		}
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			r, err = filepath.Abs(r)
		}
		if err != nil {
			continue
		}
		real[i] = r
		if _, dup := first[r]; !dup {
			first[r] = i
		}
		if st, err := os.Stat(r); err == nil && st.IsDir() {
			dirs[r] = true
		}
	}
	var out []string
	for i, p := range paths {
		if r := real[i]; r != "" && (first[r] != i || insideDir(r, dirs[r], dirs)) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// insideDir reports whether walking one of dirs reaches the real path r
// (a directory if isDir): r lies under it, and neither r, if a directory,
// nor a directory between them is hidden (the walk skips those).
func insideDir(r string, isDir bool, dirs map[string]bool) bool {
	if isDir && strings.HasPrefix(filepath.Base(r), ".") {
		return false
	}
	for cur := r; ; {
		parent := filepath.Dir(cur)
		if parent == cur {
			return false
		}
		if dirs[parent] {
			return true
		}
		if strings.HasPrefix(filepath.Base(parent), ".") {
			return false // the walk of an ancestor skips parent
		}
		cur = parent
	}
}

// leadsOut reports whether the path m, matched by a pattern starting from
// the directory base, resolves (its links followed) to a path outside
// base. A path that cannot be resolved does not: reading it says why.
func leadsOut(base, m string) bool {
	rb, err := filepath.EvalSymlinks(base)
	if err == nil {
		rb, err = filepath.Abs(rb)
	}
	if err != nil {
		return false
	}
	rm, err := filepath.EvalSymlinks(m)
	if err == nil {
		rm, err = filepath.Abs(rm)
	}
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(rb, rm)
	return err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel)
}

// IsPattern reports whether an operand holds glob characters.
func IsPattern(s string) bool { return strings.ContainsAny(s, "*?[{") }
