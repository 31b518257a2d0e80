// Package failread reads text line by line up to a read that fails,
// leaving out the line the failure cut short.
package failread

import (
	"bufio"
	"io"
)

// Reader is R, noting the error, other than io.EOF, that ended it.
type Reader struct {
	R   io.Reader
	Err error
}

// Read reads from R, noting the error that ends it.
func (f *Reader) Read(p []byte) (int, error) {
	n, err := f.R.Read(p)
	if err != nil && err != io.EOF {
		f.Err = err
	}
	return n, err
}

// Lines splits what f read into lines, as bufio.ScanLines does, but for
// the text after the last newline when a read failed: the rest of that
// line was not read, and a line cut short would be read as another.
func (f *Reader) Lines(data []byte, atEOF bool) (int, []byte, error) {
	return bufio.ScanLines(data, atEOF && f.Err == nil)
}
