package escape

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"bundle/node1/sysctl.txt", "bundle/node1/sysctl.txt"},
		{"a\nb", `a\nb`},
		{"a\r\nb\tc", `a\r\nb\tc`},
		{"\x1b[2J\x1b[31mred", `\x1b[2J\x1b[31mred`},
		{"x\n/etc/ipt.txt:1: error: stale-dnat: forged", `x\n/etc/ipt.txt:1: error: stale-dnat: forged`},
		{"evil\u202etxt.pcap", `evil\u202etxt.pcap`},                     // right-to-left override
		{"a\u2066b\u2069c\u200bd\ufeff", `a\u2066b\u2069c\u200bd\ufeff`}, // isolates, zero width, BOM
		{"line\u2028sep\u2029par\u0085nel", `line\u2028sep\u2029par\u0085nel`},
		{"csi\u009b2J", `csi\u009b2J`}, // the one-byte CSI of 8-bit terminals
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{"nul\x00del\x7fbel\a", `nul\x00del\x7fbel\a`},
		{"private\U000F0000", `private\U000f0000`},
		{"Grüße 東京 ŝ ✓ �", "Grüße 東京 ŝ ✓ �"}, // printable, and a real U+FFFD
		{`C:\path\n`, `C:\path\n`},           // backslashes in the input stay
	} {
		got := String(c.in)
		if got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("String(%q) = %q is not UTF-8", c.in, got)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x202e {
				t.Errorf("String(%q) kept %U", c.in, r)
			}
		}
	}
}

func TestStringNoCopy(t *testing.T) {
	s := "plain/path.txt:12"
	if got := String(s); got != s {
		t.Fatalf("changed %q to %q", s, got)
	}
	if n := testing.AllocsPerRun(100, func() { String(s) }); n != 0 {
		t.Errorf("%v allocations for printable text, want 0", n)
	}
}

type stringer struct{ s string }

func (s *stringer) String() string { return s.s }

func TestFprintf(t *testing.T) {
	var b bytes.Buffer
	var nilStringer *stringer
	Fprintf(&b, "skip %s: %v (%d) %-6s| %s %s %v\n", "a\nb", errors.New("c\x1bd"), 42, "e\tf", &stringer{"g\rh"},
		[]string{"i\nj"}, nilStringer)
	want := "skip a\\nb: c\\x1bd (42) e\\tf  | g\\rh [i\\nj] <nil>\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	Fprintln(&b, "warning:", "x\n/y:1: error: r: t", 3)
	if b.String() != "warning: x\\n/y:1: error: r: t 3\n" || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("Fprintln: %q", b.String())
	}
}
