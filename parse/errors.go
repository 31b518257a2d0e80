package parse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// Sentinel errors wrapped by the positioned errors parsers return; test them
// with errors.Is.
var (
	// ErrSyntax marks a line that does not have the expected shape.
	ErrSyntax = errors.New("syntax error")
	// ErrValue marks a well-formed line with a value out of range.
	ErrValue = errors.New("bad value")
	// ErrUnrecognized marks a file whose content matches no known format.
	ErrUnrecognized = errors.New("unrecognized content")
	// ErrTruncated marks input that ends in the middle of a record.
	ErrTruncated = errors.New("truncated")
)

// maxLine is the longest line the text parsers accept; longer lines are
// reported and skipped, never fatal.
const maxLine = 4 << 20

// lines reads text line by line, keeping the 1-based line number for
// positions. Carriage returns before the newline are dropped and no-break
// spaces read as spaces (see normalizeLine).
type lines struct {
	s    *bufio.Scanner
	name string
	n    int
	text string
	errs *model.ErrorList
}

func newLines(r io.Reader, name string, errs *model.ErrorList) *lines {
	n := 0
	if sr, ok := r.(*sectionReader); ok && sr.pad == sr.offset {
		// A section of a larger file: count from its first line rather
		// than read the blank lines that stand for those before it.
		n, sr.pad = sr.offset, 0
	}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &lines{s: s, name: name, errs: errs, n: n}
}

// sectionReader reads the part of a file that starts at line offset+1 as
// if it were the whole file up to there, with the lines before it blank, so
// that a parser's positions are those of the file. Parsers reading through
// newLines skip the blank lines.
type sectionReader struct {
	offset, pad int // pad: blank lines still to give
	body        *bytes.Reader
}

func newSectionReader(offset int, body []byte) *sectionReader {
	return &sectionReader{offset: offset, pad: offset, body: bytes.NewReader(body)}
}

func (s *sectionReader) Read(p []byte) (int, error) {
	if s.pad > 0 {
		n := min(len(p), s.pad)
		for i := range n {
			p[i] = '\n'
		}
		s.pad -= n
		return n, nil
	}
	return s.body.Read(p)
}

// Next advances to the next line and reports whether there was one. An I/O
// error or an over-long line ends the scan and is added to the error list.
func (l *lines) Next() bool {
	if !l.s.Scan() {
		if err := l.s.Err(); err != nil {
			l.errs.Add(l.Pos().LineAt(l.n+1), "", readErr(err))
		}
		return false
	}
	l.n++
	l.text = normalizeLine(l.s.Text())
	return true
}

// normalizeLine drops a trailing carriage return and turns the no-break
// spaces of text copied from web pages and chat tools into plain spaces, so
// that pasted command output splits into the same columns as the original.
func normalizeLine(s string) string {
	s = strings.TrimSuffix(s, "\r")
	if strings.Contains(s, "\u00a0") {
		s = strings.ReplaceAll(s, "\u00a0", " ")
	}
	return s
}

// Text returns the current line.
func (l *lines) Text() string { return l.text }

// Line returns the current line number.
func (l *lines) Line() int { return l.n }

// Pos returns the position of the current line.
func (l *lines) Pos() model.Pos { return model.Pos{File: l.name, Line: l.n} }

// Errorf records an error at the current line.
func (l *lines) Errorf(format string, args ...any) {
	l.errs.Addf(l.Pos(), l.text, format, args...)
}

func readErr(err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return errors.New("line longer than 4 MiB: input is not text or is corrupt")
	}
	return err
}
