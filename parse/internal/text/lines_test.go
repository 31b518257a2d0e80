package text

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
)

// failAfter gives the first n bytes of r, then err.
type failAfter struct {
	r   io.Reader
	n   int
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	k, err := f.r.Read(p[:min(len(p), f.n)])
	f.n -= k
	return k, err
}

// A read that fails inside a line gives the lines before it, not the
// start of that line as a line of its own: the error is told at that
// line. The last line of a whole input needs no newline.
func TestLinesFailInALine(t *testing.T) {
	in := "first line\nsecond line\nthird line\n"
	stop := errors.New("stopped")
	for at := range len(in) + 1 {
		var errs model.ErrorList
		l := NewLines(&failAfter{r: strings.NewReader(in), n: at, err: stop}, "f.txt", &errs)
		var got []string
		for l.Next() {
			got = append(got, l.Text())
		}
		want := strings.Split(in[:strings.LastIndexByte(in[:at], '\n')+1], "\n")
		want = want[:len(want)-1]
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("failed at byte %d: lines %q, want %q", at, got, want)
		}
		if len(errs) != 1 || !errors.Is(errs[0], stop) || errs[0].Pos.Line != len(want)+1 {
			t.Errorf("failed at byte %d: errors %v, want the failure at line %d", at, errs.Err(), len(want)+1)
		}
	}
	var errs model.ErrorList
	l := NewLines(strings.NewReader("no newline"), "f.txt", &errs)
	if !l.Next() || l.Text() != "no newline" || l.Next() || len(errs) != 0 {
		t.Errorf("a last line without a newline: %q, errors %v", l.Text(), errs.Err())
	}
}
