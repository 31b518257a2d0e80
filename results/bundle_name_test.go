package results

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestBundleName(t *testing.T) {
	for in, want := range map[string]string{
		"tickets/b.tar.gz":   "tickets/b.tar.gz",
		"b\xfe.tar.gz":       `b\xfe.tar.gz`,
		"b\xff.tar.gz":       `b\xff.tar.gz`,
		"c:\\b\xff\u00e9.gz": `c:\\b\xffé.gz`,
		`c:\b.gz`:            `c:\b.gz`,
	} {
		if got := BundleName(in); got != want {
			t.Errorf("BundleName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBundleNameJSON: two paths that differ in a byte that is not UTF-8
// keep two names through a JSON line, each read back as written.
func TestBundleNameJSON(t *testing.T) {
	seen := map[string]string{}
	for _, p := range []string{"b\xfe.tar.gz", "b\xff.tar.gz", "b\ufffd.tar.gz", `b\xfe.tar.gz`[:0] + "b\\\xfe.tar.gz"} {
		line, err := json.Marshal(Line{Bundle: BundleName(p)})
		if err != nil {
			t.Fatal(err)
		}
		var back Line
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatal(err)
		}
		if back.Bundle != BundleName(p) || !utf8.ValidString(back.Bundle) {
			t.Errorf("%q: line names it %q, want %q", p, back.Bundle, BundleName(p))
		}
		if other, dup := seen[back.Bundle]; dup {
			t.Errorf("%q and %q share the name %q", other, p, back.Bundle)
		}
		seen[back.Bundle] = p
	}
}
