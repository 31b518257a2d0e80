// Package escape makes text from a bundle safe to print on a terminal or in
// a line-oriented format. A bundle is hostile input: a file or archive member
// named "x\n/etc/ipt.txt:1: error: stale-dnat: ..." would forge a finding
// line in `-o text`, and one holding "\x1b[2J" would drive the terminal.
// String shows every control character, every other non-printing rune
// (bidirectional overrides such as U+202E, zero-width and format
// characters, line and paragraph separators) and every byte that is not
// UTF-8 as a Go escape: `\n`, `\t`, `\x1b`, `\u202e`, `\xff`. Printable
// text, non-ASCII letters included, is left as it is, and so is the
// backslash: an escape in the output is either one that String wrote or
// backslashes that were in the input, never a control character.
//
// JSON and YAML output need none of this: their encoders escape what they
// must, and they keep the exact bytes.
package escape

import (
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// String returns s with its non-printing runes and invalid bytes written
// as Go escapes. It returns s itself when there is nothing to escape.
func String(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return escapeFrom(s, i)
		}
	}
	return s
}

// escapeFrom escapes s, whose first i bytes are printable ASCII.
func escapeFrom(s string, i int) string {
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			b = appendHex(b, 'x', uint32(s[i]), 2)
		case r >= 0x20 && r < 0x7f, r >= 0x80 && strconv.IsPrint(r):
			b = append(b, s[i:i+w]...)
		default:
			b = appendEscape(b, r)
		}
		i += w
	}
	return string(b)
}

func appendEscape(b []byte, r rune) []byte {
	switch r {
	case '\a':
		return append(b, `\a`...)
	case '\b':
		return append(b, `\b`...)
	case '\f':
		return append(b, `\f`...)
	case '\n':
		return append(b, `\n`...)
	case '\r':
		return append(b, `\r`...)
	case '\t':
		return append(b, `\t`...)
	case '\v':
		return append(b, `\v`...)
	}
	switch {
	case r < 0x80:
		return appendHex(b, 'x', uint32(r), 2)
	case r < 0x10000:
		return appendHex(b, 'u', uint32(r), 4)
	}
	return appendHex(b, 'U', uint32(r), 8)
}

func appendHex(b []byte, kind byte, v uint32, digits int) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '\\', kind)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b = append(b, hex[v>>uint(shift)&0xf])
	}
	return b
}

// Args returns args with every string, []string, error and fmt.Stringer
// replaced by its escaped text, for a format whose verbs for them are %s
// or %v (widths and flags work as before). Numbers, booleans and other
// values are left as they are.
func Args(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = String(v)
		case []string:
			e := make([]string, len(v))
			for j, s := range v {
				e[j] = String(s)
			}
			out[i] = e
		case error, fmt.Stringer:
			// fmt calls Error or String, and survives their panics.
			out[i] = String(fmt.Sprint(v))
		default:
			out[i] = a
		}
	}
	return out
}

// Fprintf is fmt.Fprintf with its arguments escaped (see Args). The format
// itself is the program's own and is written as it is.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return fmt.Fprintf(w, format, Args(args)...)
}

// Fprintln is fmt.Fprintln with its arguments escaped (see Args).
func Fprintln(w io.Writer, args ...any) (int, error) {
	return fmt.Fprintln(w, Args(args)...)
}
