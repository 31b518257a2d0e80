package parse

import (
	"github.com/netmortem/netmortem/parse/bundle"
	"github.com/netmortem/netmortem/parse/format"
)

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

// Sentinel errors of Open's warnings about the bundle itself; they are
// package bundle's.
var (
	// ErrLimit marks input that was not read (or not read to its end)
	// because one of the Limits was reached.
	ErrLimit = bundle.ErrLimit
	// ErrTotalBytes marks input not read because the bundle decompressed
	// to more than Limits.MaxTotalBytes; it is an ErrLimit.
	ErrTotalBytes = bundle.ErrTotalBytes
	// ErrUnsafePath marks an archive member or link that would point
	// outside the bundle; such entries are refused, never followed.
	ErrUnsafePath = bundle.ErrUnsafePath
)
