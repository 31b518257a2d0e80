package bundle

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/netmortem/netmortem/model"
)

// stopReader is a ctxReader that remembers stopping a read, or a read
// of r failing once the context ended: a parser may take the context's
// error for the end of its input, and say nothing of it (noteStopped).
// Once r has ended, it is not stopped: a reader in front of it (a
// bufio.Reader's Peek) may have taken r's io.EOF, and read again. Once
// stopped, it stays so.
type stopReader struct {
	ctx          context.Context
	r            io.Reader
	stopped, eof bool
}

func (c *stopReader) Read(p []byte) (int, error) {
	switch {
	case c.eof:
		return 0, io.EOF
	case c.stopped:
		return 0, c.ctx.Err()
	}
	if err := c.ctx.Err(); err != nil {
		if c.atEnd() {
			c.eof = true
			return 0, io.EOF
		}
		c.stopped = true
		return 0, err
	}
	n, err := c.r.Read(p)
	switch {
	case err == io.EOF:
		c.eof = true
	case err != nil && c.ctx.Err() != nil:
		c.stopped = true // a reader of its own that the context ends
	}
	return n, err
}

// atEnd reports whether r, once the context has ended, is a regular file
// read to its last byte, only its end not yet seen (a decompressor asks
// for it once its last block is read): such a file cannot block, and a
// byte read from it tells. The byte is not given: the read stops.
func (c *stopReader) atEnd() bool {
	f, ok := c.r.(*os.File)
	if !ok {
		return false
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	var b [1]byte
	n, err := f.Read(b[:])
	return n == 0 && err == io.EOF
}

// noteStopped makes sure that a file whose read stop stopped (the run's
// context ended) is listed as cut where it stopped, and only there, the
// warnings from index from on being the file's:
//
//   - a warning that only says the context ended is made a stop at its
//     place (model.Stopped), which the analysis takes for input cut short;
//   - a warning that the input ends inside a record, a table or a
//     document is dropped where it follows from the stop: given at the
//     last line read or past it, or anywhere when the parser did not
//     say where it stopped. The input does not end there; its read
//     stopped;
//   - a file none of whose warnings says it stopped, its parser having
//     taken the stop for its end, is said to be stopped, with no place;
//   - a file stopped with no place and nothing read from it (a JSON
//     document, a terminal session read whole before it is parsed) is
//     listed as not read, model.SkippedCutShort, rather than as cut,
//     without the warnings of its cut.
//
// A file skipped, or held for another pass, is left as it is.
func (o *opener) noteStopped(name string, stop *stopReader, from int) {
	n := len(o.snap.Inputs)
	if !stop.stopped || n == 0 || o.snap.Inputs[n-1].Path != name || o.snap.Inputs[n-1].Skipped != "" {
		return
	}
	in := &o.snap.Inputs[n-1] // the file, listed as read
	at, said := 0, false      // the first line not read (0: not known); whether a warning says so
	for i, e := range o.warns[from:] {
		if e.Pos.File != name || !model.IsStopped(e.Err) {
			continue
		}
		if !errors.Is(e.Err, model.ErrStopped) {
			o.warns[from+i] = model.Stopped(e.Pos, e.Err) // the context's error alone
		}
		said = true
		if e.Pos.Line > 0 && (at == 0 || e.Pos.Line < at) {
			at = e.Pos.Line
		}
	}
	unread := at == 0 && in.Records == 0
	drop := func(e *model.Error) bool {
		switch {
		case e.Pos.File != name:
			return false
		case model.IsStopped(e.Err):
			return unread
		case !model.IsCut(e.Err):
			return false
		}
		return unread || !said || at > 0 && e.Pos.Line >= at-1
	}
	kept := o.warns[:from]
	for _, e := range o.warns[from:] {
		if drop(e) {
			in.Warnings--
			continue
		}
		kept = append(kept, e)
	}
	o.warns = kept
	switch {
	case unread:
		in.Skipped = model.SkippedCutShort
	case !said:
		o.warns = append(o.warns, model.Stopped(model.Pos{File: name}, o.ctx.Err()))
		in.Warnings++
	}
}

// stopErr returns the context's error when it stopped the read of a file
// of this Open, or kept one from being read (as the warnings and the
// inputs listed say), and nil otherwise: a context that ends once all
// was read stopped nothing.
func (o *opener) stopErr() error {
	err := o.ctx.Err()
	if err == nil {
		return nil
	}
	if model.StoppedIn(o.warns, o.snap.Inputs) {
		return err
	}
	return nil
}
