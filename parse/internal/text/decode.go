package text

import (
	"bufio"
	"bytes"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Byte order marks.
var (
	bomUTF8    = []byte{0xef, 0xbb, 0xbf}
	bomUTF16LE = []byte{0xff, 0xfe}
	bomUTF16BE = []byte{0xfe, 0xff}
)

// Decode returns a reader of br's text as UTF-8, and the encoding it was
// found in ("" for UTF-8 without a byte order mark): a UTF-8 byte order mark
// (which editors and PowerShell write) is dropped, and UTF-16 text that
// starts with its byte order mark (what Windows tools save a paste as) is
// transcoded. Anything else is returned as it is: formats sniff the content
// themselves.
func Decode(br *bufio.Reader) (*bufio.Reader, string) {
	head, _ := br.Peek(3)
	switch {
	case bytes.HasPrefix(head, bomUTF8):
		br.Discard(len(bomUTF8))
		return br, "UTF-8 with BOM"
	case bytes.HasPrefix(head, bomUTF16LE):
		return utf16(br, unicode.LittleEndian), "UTF-16LE"
	case bytes.HasPrefix(head, bomUTF16BE):
		return utf16(br, unicode.BigEndian), "UTF-16BE"
	}
	return br, ""
}

// utf16 transcodes br, UTF-16 in the byte order e that starts with a byte
// order mark, into UTF-8 without one.
func utf16(br *bufio.Reader, e unicode.Endianness) *bufio.Reader {
	d := unicode.UTF16(e, unicode.ExpectBOM).NewDecoder()
	return bufio.NewReaderSize(transform.NewReader(br, d), HeadSize)
}
