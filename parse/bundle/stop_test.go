package bundle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
)

// A file read to its end before the context ends is not stopped, though
// a bufio.Reader's Peek took the io.EOF and its reader reads again: a
// small file's head is the whole of it. One whose end was not reached
// is stopped.
func TestStopReaderAfterTheEnd(t *testing.T) {
	for _, c := range []struct {
		head    int
		stopped bool
	}{{64, false}, {4, true}} {
		ctx, cancel := context.WithCancel(t.Context())
		stop := &stopReader{ctx: ctx, r: strings.NewReader("net.ipv4.ip_forward = 1\n")}
		br := bufio.NewReaderSize(stop, 64)
		br.Peek(c.head)
		cancel()
		b, err := io.ReadAll(br)
		if stop.stopped != c.stopped || c.stopped != errors.Is(err, context.Canceled) {
			t.Errorf("head %d, then the context's end: read %q, %v, stopped %v; want stopped %v", c.head, b, err, stop.stopped, c.stopped)
		}
	}
}

// A regular file read to its last byte, its end not yet seen, is read
// whole when the context ends: the byte read after it tells. One with a
// byte left is stopped, and stays so.
func TestStopReaderProbe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sysctl.txt")
	if err := os.WriteFile(path, []byte("net.ipv4.ip_forward = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, left := range []int{0, 1} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		stop := &stopReader{ctx: ctx, r: f}
		p := make([]byte, 24-left)
		if n, err := io.ReadFull(stop, p); n != len(p) || err != nil {
			t.Fatal(n, err)
		}
		cancel()
		n, err := stop.Read(make([]byte, 64))
		if stop.stopped != (left > 0) || n != 0 || (left > 0) != errors.Is(err, context.Canceled) || (left == 0) != (err == io.EOF) {
			t.Errorf("%d bytes left when the context ended: read %d, %v, stopped %v", left, n, err, stop.stopped)
		}
		// Read again, it says the same: a stopped read does not end
		// at the file's end, the byte that told it read.
		if n2, err2 := stop.Read(make([]byte, 64)); n2 != 0 || err2 != err {
			t.Errorf("%d bytes left, read again: %d, %v; want %v again", left, n2, err2, err)
		}
		f.Close()
	}
	// A file that is not a regular one (a pipe) is not read once more:
	// it may block.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	stop := &stopReader{ctx: ctx, r: r}
	if _, err := stop.Read(make([]byte, 64)); !errors.Is(err, context.Canceled) || !stop.stopped {
		t.Errorf("a pipe, the context ended: %v, stopped %v; want it stopped", err, stop.stopped)
	}
}

// noteStopped drops the warnings that follow from the stop, and only
// those: where the parser said where it stopped, the ends it gave at or
// past there; where it did not, every end it gave; where nothing was
// read, the cut itself, the file being listed as not read.
func TestNoteStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	end := func(line int) *model.Error {
		return &model.Error{Pos: model.Pos{File: "f.txt", Line: line}, Err: fmt.Errorf("%w: table nat has no COMMIT", model.ErrTruncated)}
	}
	syntax := &model.Error{Pos: model.Pos{File: "f.txt", Line: 3}, Err: errors.New("syntax error")}
	other := &model.Error{Pos: model.Pos{File: "g.txt", Line: 9}, Err: fmt.Errorf("%w: cut", model.ErrTruncated)}
	for _, c := range []struct {
		name          string
		records       int
		warns         model.ErrorList
		want, skipped string
	}{
		{"stopped at a line", 5, model.ErrorList{syntax, end(2), end(9), &model.Error{Pos: model.Pos{File: "f.txt", Line: 10}, Err: context.Canceled}},
			"f.txt:3: syntax error; f.txt:2: truncated: table nat has no COMMIT; f.txt:10: not read from here on, what came before kept: context canceled", ""},
		{"no place said", 5, model.ErrorList{syntax, end(2), other},
			"f.txt:3: syntax error; g.txt:9: truncated: cut; f.txt: not read from here on, what came before kept: context canceled", ""},
		{"nothing read", 0, model.ErrorList{syntax, end(2), model.Stopped(model.Pos{File: "f.txt"}, context.Canceled)},
			"f.txt:3: syntax error", model.SkippedCutShort},
	} {
		o := newOpener(ctx, nil)
		mine := 0
		for _, e := range c.warns {
			if e.Pos.File == "f.txt" {
				mine++
			}
		}
		o.snap.Inputs = []model.Input{{Path: "f.txt", Records: c.records, Warnings: mine}}
		o.warns = append(o.warns, c.warns...)
		o.noteStopped("f.txt", &stopReader{ctx: ctx, stopped: true}, 0)
		var got []string
		own := len(o.warns)
		for _, e := range o.warns {
			got = append(got, e.Error())
			if e.Pos.File != "f.txt" {
				own--
			}
		}
		in := o.snap.Inputs[0]
		if strings.Join(got, "; ") != c.want || in.Skipped != c.skipped || in.Warnings != own {
			t.Errorf("%s: warnings %q (%d counted), skipped %q\nwant %q, skipped %q", c.name, got, in.Warnings, in.Skipped, c.want, c.skipped)
		}
	}
}

// TestTreeName checks that a directory is named with one separator at
// its end, an archive as it is.
func TestTreeName(t *testing.T) {
	sep := string(filepath.Separator)
	for _, c := range []struct {
		name string
		sep  rune
		want string
	}{
		{"b", filepath.Separator, "b" + sep},
		{"b" + sep, filepath.Separator, "b" + sep},
		{"b/", filepath.Separator, "b/"},
		{"x.tar", '!', "x.tar"},
	} {
		if got := treeName(c.name, c.sep); got != c.want {
			t.Errorf("treeName(%q, %q) = %q, want %q", c.name, c.sep, got, c.want)
		}
	}
}
