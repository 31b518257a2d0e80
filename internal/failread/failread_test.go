package failread_test

import (
	"bufio"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/netmortem/netmortem/internal/failread"
)

// A read that fails inside a line gives the lines before it; one that
// ends gives its last line, newline or not.
func TestLines(t *testing.T) {
	stop := errors.New("stopped")
	for _, c := range []struct {
		name string
		r    *failread.Reader
		want string
		err  error
	}{
		{"failed in a line", &failread.Reader{R: iotest.DataErrReader(failing("a\nb\nhalf", stop))}, "a|b", stop},
		{"failed after a newline", &failread.Reader{R: failing("a\nb\n", stop)}, "a|b", stop},
		{"ended without a newline", &failread.Reader{R: strings.NewReader("a\nb\nlast")}, "a|b|last", nil},
	} {
		sc := bufio.NewScanner(c.r)
		sc.Split(c.r.Lines)
		var got []string
		for sc.Scan() {
			got = append(got, sc.Text())
		}
		if strings.Join(got, "|") != c.want || !errors.Is(sc.Err(), c.err) && sc.Err() != c.err || c.r.Err != c.err {
			t.Errorf("%s: lines %q, error %v (noted %v); want %q, %v", c.name, got, sc.Err(), c.r.Err, c.want, c.err)
		}
	}
}

// failing gives s, then err.
func failing(s string, err error) *failAfter { return &failAfter{s: s, err: err} }

type failAfter struct {
	s   string
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.s == "" {
		return 0, f.err
	}
	n := copy(p, f.s)
	f.s = f.s[n:]
	return n, nil
}
