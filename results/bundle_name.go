package results

import (
	"strings"
	"unicode/utf8"
)

// BundleName is how a Line names the bundle at path: path itself when it
// is UTF-8, as a path almost always is. A path that is not (a file name
// from another system's encoding, "b\xfe.tar.gz") cannot be a JSON string
// or a database text as it is: both would replace its stray bytes with
// U+FFFD, and "b\xfe.tar.gz" and "b\xff.tar.gz" would share one line, one
// row, and never match their path again, so --resume would analyze them
// at every run. Such a path is named by its exact bytes, escaped: each
// byte that is not part of a UTF-8 character as \xNN, each backslash as
// \\, the rest as it is. Two paths never get one name that way, and a
// path gets the same name at every run.
func BundleName(path string) string {
	if utf8.ValidString(path) {
		return path
	}
	var b strings.Builder
	for i := 0; i < len(path); {
		r, w := utf8.DecodeRuneInString(path[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[path[i]>>4])
			b.WriteByte(hex[path[i]&0xf])
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(path[i : i+w])
		}
		i += w
	}
	return b.String()
}
