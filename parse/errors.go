package parse

import "github.com/netmortem/netmortem/parse/format"

// Sentinel errors wrapped by the positioned errors parsers return; test them
// with errors.Is. They are package format's.
var (
	// ErrSyntax marks a line that does not have the expected shape.
	ErrSyntax = format.ErrSyntax
	// ErrValue marks a well-formed line with a value out of range.
	ErrValue = format.ErrValue
	// ErrUnrecognized marks a file whose content matches no known format.
	ErrUnrecognized = format.ErrUnrecognized
	// ErrTruncated marks input that ends in the middle of a record.
	ErrTruncated = format.ErrTruncated
)
