package parse

import (
	"github.com/netmortem/netmortem/parse/internal/text"

	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// readTestFile parses the file at rel (from the repository root) with read,
// which is given the file's base name for positions, and fails the test on
// any error.
func readTestFile[T any](t *testing.T, rel string, read func(io.Reader, string) (T, error)) T {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := read(f, filepath.Base(rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return out
}

// syntaxErrorsAt checks that err is an error list whose errors all wrap
// ErrSyntax, and returns their positions joined by spaces.
func syntaxErrorsAt(t *testing.T, err error) string {
	t.Helper()
	var list model.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v, want a list", err)
	}
	var at []string
	for _, e := range list {
		at = append(at, e.Pos.String())
		if !errors.Is(e, ErrSyntax) {
			t.Errorf("%v does not wrap ErrSyntax", e)
		}
	}
	return strings.Join(at, " ")
}

// checkFuzzErrors fails when a parser's error on fuzz input is not a list
// of errors each positioned at a line of file.
func checkFuzzErrors(t *testing.T, err error, file string) {
	t.Helper()
	var list model.ErrorList
	if err != nil && !errors.As(err, &list) {
		t.Fatalf("error %v is not positioned", err)
	}
	for _, e := range list {
		if e.Pos.File != file || e.Pos.Line == 0 {
			t.Fatalf("error without a line: %v", e)
		}
	}
}

// addSeedFiles adds the files at rels (from the repository root) to the
// fuzz seed corpus.
func addSeedFiles(f *testing.F, rels []string) {
	f.Helper()
	for _, rel := range rels {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
}

// sniffAs returns the name of the format that scores the file at rel (from
// the repository root) highest, "" when none claims it.
func sniffAs(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	best, score := "", 0
	for _, f := range Formats() {
		if s := f.Sniff(rel, b[:min(len(b), text.HeadSize)]); s > score {
			best, score = f.Name, s
		}
	}
	return best
}
