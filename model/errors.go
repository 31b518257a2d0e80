package model

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Error is a problem found at one position of an input: a line that does not
// parse, a truncated packet record, a file that could not be read. Its text
// leads with the position, as in "sysctl.txt:14: expected name = value".
type Error struct {
	Pos  Pos
	Text string // the offending input, possibly truncated; may be empty
	Err  error
}

// Error implements the error interface.
func (e *Error) Error() string {
	msg := "<nil>"
	if e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Text != "" {
		return fmt.Sprintf("%s: %s (%.60q)", e.Pos, msg, e.Text)
	}
	return fmt.Sprintf("%s: %s", e.Pos, msg)
}

// Unwrap returns the underlying error, so errors.Is sees sentinels.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error at pos with a formatted message. Use %w to wrap a
// cause.
func Errorf(pos Pos, text string, format string, args ...any) *Error {
	return &Error{Pos: pos, Text: text, Err: fmt.Errorf(format, args...)}
}

// ErrorList collects Errors, in the manner of go/scanner.ErrorList. The zero
// value is an empty list ready to use.
type ErrorList []*Error

// Add appends an error at pos.
func (l *ErrorList) Add(pos Pos, text string, err error) {
	*l = append(*l, &Error{Pos: pos, Text: text, Err: err})
}

// Addf appends an error at pos with a formatted message.
func (l *ErrorList) Addf(pos Pos, text string, format string, args ...any) {
	*l = append(*l, Errorf(pos, text, format, args...))
}

// Append adds every *Error found in err (an *Error, an ErrorList, or any
// error joined from them). Other errors are added without a position.
func (l *ErrorList) Append(err error) {
	if err == nil {
		return
	}
	var list ErrorList
	if errors.As(err, &list) {
		*l = append(*l, list...)
		return
	}
	var e *Error
	if errors.As(err, &e) {
		*l = append(*l, e)
		return
	}
	*l = append(*l, &Error{Err: err})
}

// Len returns the number of errors.
func (l ErrorList) Len() int { return len(l) }

// Sort orders the list by position.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool { return l[i].Pos.Less(l[j].Pos) })
}

// Err returns nil for an empty list and the list itself otherwise.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Error implements the error interface: the first error, and how many more.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	b.WriteString(l[0].Error())
	fmt.Fprintf(&b, " (and %d more errors)", len(l)-1)
	return b.String()
}

// Unwrap returns the errors of the list, so errors.Is and errors.As look
// through it.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}
