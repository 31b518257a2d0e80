package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// stdin is what the operand "-" reads; a variable so that tests give their
// own reader.
var stdin io.Reader = os.Stdin

// stdinOperand is the operand that reads stdin, named bundle.StdinName
// ("<stdin>") in inputs, positions and findings.
const stdinOperand = "-"

// errNoMatch marks a glob operand that matches no path.
var errNoMatch = errors.New("no path matches this pattern")

// errBatchStdin says why batch refuses "-".
var errBatchStdin = errors.New(`"-" (stdin) cannot be a batch bundle: batch records each bundle by its path, ` +
	"so that --resume and --shard find it again, and stdin has none and can be read only once; " +
	"save it to a file, or use netmortem analyze -")

// expanded is what expandOperands makes of the operands of a command.
type expanded struct {
	// paths are the operands with their patterns expanded, in the order
	// given, each path once; a pattern that matched nothing is kept as
	// it is (and listed in unmatched), so that it is reported where it
	// stood.
	paths     []string
	unmatched map[string]bool
}

// expandOperands expands the operands of analyze, inspect and batch. "-"
// reads stdin (at most once). An operand that names an existing path is
// that path, even when its name holds glob characters; any other operand
// holding * ? [ or { is a doublestar pattern: "**" matches any number of
// directories, "{a,b}" either name; as in a shell, wildcards do not match
// names starting with a dot, and "**" does not follow symbolic links to
// directories. A pattern that matches nothing is listed in unmatched; a
// malformed one is an error. A path given or matched twice is read once.
func expandOperands(args []string) (expanded, error) {
	e := expanded{unmatched: map[string]bool{}}
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			e.paths = append(e.paths, p)
		}
	}
	for _, a := range args {
		switch {
		case a == stdinOperand:
			if seen[a] {
				return e, errors.New(`"-" (stdin) given twice: stdin can be read only once`)
			}
			add(a)
			continue
		case !isPattern(a):
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
			e.unmatched[a] = true
			add(a)
			continue
		}
		for _, m := range matches {
			add(m)
		}
	}
	return e, nil
}

// isPattern reports whether an operand holds glob characters.
func isPattern(s string) bool { return strings.ContainsAny(s, "*?[{") }
