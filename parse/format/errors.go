package format

import (
	"errors"

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
	// ErrTruncated marks input that ends in the middle of a record, or
	// before its end marker; it is model.ErrTruncated, which every cut
	// wraps.
	ErrTruncated = model.ErrTruncated
)
