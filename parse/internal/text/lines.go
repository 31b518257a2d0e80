// Package text holds what the text formats of netmortem share: the line
// reader that keeps positions, the skeleton of a line format's reader and
// sniffer, and the recognition of what people paste around command output
// (shell prompts, node markers, kubectl command lines).
package text

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/netmortem/netmortem/internal/failread"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// MaxLine is the longest line the text parsers accept; longer lines are
// reported and skipped, never fatal.
const MaxLine = 4 << 20

// Lines reads text line by line, keeping the 1-based line number for
// positions. Carriage returns before the newline are dropped and no-break
// spaces read as spaces (see NormalizeLine).
type Lines struct {
	s    *bufio.Scanner
	name string
	n    int
	text string
	errs *model.ErrorList
	// bare says that the current line ends the input without a newline:
	// the text may have been cut inside it.
	bare bool
	// first says that the current line is the input's first non-blank
	// line; started that there was one.
	first, started bool
}

// NewLines returns a line reader of r whose positions name name and whose
// read errors go to errs. A SectionReader's lines are numbered from its
// offset.
func NewLines(r io.Reader, name string, errs *model.ErrorList) *Lines {
	n := 0
	if sr, ok := r.(*SectionReader); ok && sr.pad == sr.offset {
		// A section of a larger file: count from its first line rather
		// than read the blank lines that stand for those before it.
		n, sr.pad = sr.offset, 0
	}
	fr := &failread.Reader{R: r}
	s := bufio.NewScanner(fr)
	s.Buffer(make([]byte, 0, 64<<10), MaxLine)
	l := &Lines{s: s, name: name, errs: errs, n: n}
	s.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		// The text after the last newline, when a read failed (the run
		// stopped, a compressed file cut short), is not a line: the
		// rest of it was not read, and a line cut short would be read
		// as another. The error is told at its place.
		adv, tok, err := fr.Lines(data, atEOF)
		if adv > 0 {
			l.bare = data[adv-1] != '\n'
		}
		return adv, tok, err
	})
	return l
}

// SectionReader reads the part of a file that starts at line offset+1 as
// if it were the whole file up to there, with the lines before it blank, so
// that a parser's positions are those of the file. Parsers reading through
// NewLines skip the blank lines.
type SectionReader struct {
	offset, pad int // pad: blank lines still to give
	body        *bytes.Reader
}

// NewSectionReader returns a reader of body, the text that starts at line
// offset+1 of a file.
func NewSectionReader(offset int, body []byte) *SectionReader {
	return &SectionReader{offset: offset, pad: offset, body: bytes.NewReader(body)}
}

// Read implements io.Reader.
func (s *SectionReader) Read(p []byte) (int, error) {
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
func (l *Lines) Next() bool {
	if !l.s.Scan() {
		if err := l.s.Err(); err != nil {
			l.errs.Add(l.Pos().LineAt(l.n+1), "", readErr(err))
		}
		return false
	}
	l.n++
	l.text = NormalizeLine(l.s.Text())
	l.first = !l.started && strings.TrimSpace(l.text) != ""
	l.started = l.started || l.first
	return true
}

// PastedCommand returns the command of the current line when it is the
// input's first non-blank line and a command line pasted above its output
// without a prompt ("iptables-save | grep KUBE", "sudo ipvsadm -Ln"): see
// BareCommand.
func (l *Lines) PastedCommand() (string, bool) {
	if !l.first {
		return "", false
	}
	return BareCommand(l.text)
}

// NormalizeLine drops a trailing carriage return and turns the no-break
// spaces of text copied from web pages and chat tools into plain spaces, so
// that pasted command output splits into the same columns as the original.
func NormalizeLine(s string) string {
	s = strings.TrimSuffix(s, "\r")
	if strings.Contains(s, "\u00a0") {
		s = strings.ReplaceAll(s, "\u00a0", " ")
	}
	return s
}

// Text returns the current line.
func (l *Lines) Text() string { return l.text }

// Line returns the current line number.
func (l *Lines) Line() int { return l.n }

// Pos returns the position of the current line.
func (l *Lines) Pos() model.Pos { return model.Pos{File: l.name, Line: l.n} }

// Bare reports whether the current line ends the input without a
// newline: the output of a command ends with one, so the text may have
// been cut inside the line.
func (l *Lines) Bare() bool { return l.bare }

// Errorf records an error at the current line. On a bare last line (Bare)
// the error is a sign of a cut, not of a bad line: a half record, it wraps
// format.ErrTruncated too, and the input is taken as incomplete.
func (l *Lines) Errorf(msg string, args ...any) {
	if l.bare {
		l.errs.Addf(l.Pos(), l.text, "%w: the last line has no newline and is not a whole record, the text ends inside it: %w",
			format.ErrTruncated, fmt.Errorf(msg, args...))
		return
	}
	l.errs.Addf(l.Pos(), l.text, msg, args...)
}

func readErr(err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return errors.New("line longer than 4 MiB: input is not text or is corrupt")
	}
	return err
}
