package host

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// A real sysctl -a output cut at every byte of its last lines: a cut that
// leaves a half record (a name without "= value") is a cut, named at its
// line; a cut at a line's end, or one that leaves a line that reads as a
// whole record, is not; nothing is a plain syntax error. The intact output
// without its final newline is read whole.
func TestSysctlCutInALine(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "parse/testdata/sysctl/sysctl-a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sysctl(bytes.NewReader(bytes.TrimRight(b, "\n")), "sysctl-a.txt"); err != nil {
		t.Errorf("the output without its final newline: %v", err)
	}
	cuts := 0
	for n := len(b) - 120; n < len(b); n++ {
		_, err := Sysctl(bytes.NewReader(b[:n]), "sysctl-a.txt")
		last := b[bytes.LastIndexByte(b[:n], '\n')+1 : n]
		half := len(bytes.TrimSpace(last)) > 0 && !bytes.Contains(last, []byte("="))
		var el model.ErrorList
		errors.As(err, &el)
		switch {
		case half && (len(el) != 1 || !model.IsCut(el[0])):
			t.Errorf("cut after %q: %v, want a cut", last, err)
		case !half && err != nil:
			t.Errorf("cut after %q: %v, want none", last, err)
		case half:
			cuts++
			if !errors.Is(el[0], format.ErrSyntax) || el[0].Pos.Line != bytes.Count(b[:n], []byte("\n"))+1 {
				t.Errorf("cut after %q: %v at %s", last, el[0], el[0].Pos)
			}
		}
	}
	if cuts == 0 {
		t.Error("no cut left a half record")
	}
}
