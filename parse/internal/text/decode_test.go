package text

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		name, enc string
		in        []byte
	}{
		{"plain", "", []byte("a = 1\nb = ü\n")},
		{"utf-8 bom", "UTF-8 with BOM", []byte("\xef\xbb\xbfa = 1\nb = ü\n")},
		{"utf-16le", "UTF-16LE", []byte("\xff\xfea\x00 \x00=\x00 \x001\x00\n\x00b\x00 \x00=\x00 \x00\xfc\x00\n\x00")},
		{"utf-16be", "UTF-16BE", []byte("\xfe\xff\x00a\x00 \x00=\x00 \x001\x00\n\x00b\x00 \x00=\x00 \x00\xfc\x00\n")},
	} {
		r, enc := Decode(bufio.NewReader(bytes.NewReader(c.in)))
		got, err := io.ReadAll(r)
		if err != nil || string(got) != "a = 1\nb = ü\n" || enc != c.enc {
			t.Errorf("%s: %q %q %v, want the text as UTF-8 and %q", c.name, got, enc, err, c.enc)
		}
	}
}
