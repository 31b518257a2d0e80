package parse

import "github.com/netmortem/netmortem/parse/bundle"

// HiddenValue is what troubleshoot's redactors write in place of a value
// they removed.
const HiddenValue = bundle.HiddenValue

// Redacted reports whether s is a value a redactor removed; Open drops such
// values from the model as unknown (see bundle.Redacted).
func Redacted(s string) bool { return bundle.Redacted(s) }

// Token reports whether s is a tokenized value, ***TOKEN_<TYPE>_<HASH>***,
// and returns its type and hash: an opaque identity, kept as it is (see
// bundle.Token).
func Token(s string) (typ, hash string, ok bool) { return bundle.Token(s) }
