package fit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWrapKeepsWidthAndWords(t *testing.T) {
	s := "kube-proxy cannot list EndpointSlice, Service: its dataplane is not updated at fixtures/incidents/stale-dnat/iptables-nat-nvL.txt:48"
	for _, width := range []int{12, 20, 33, 80} {
		lines := Wrap(s, width)
		for _, l := range lines {
			if Width(l) > width {
				t.Errorf("width %d: line %q is %d wide", width, l, Width(l))
			}
		}
		if got := strings.ReplaceAll(strings.Join(lines, ""), " ", ""); got != strings.ReplaceAll(s, " ", "") {
			t.Errorf("width %d: wrapping lost text: %q", width, got)
		}
	}
	if got := Wrap("a b c", 0); len(got) != 1 || got[0] != "a b c" {
		t.Errorf("width 0: %q, want the line as it is", got)
	}
	if got := Wrap("  one two three", 10); strings.Join(got, "|") != "  one two|  three" {
		t.Errorf("Wrap of an indented line at 10 = %q, want each line indented", got)
	}
	if got := Wrap("one two three", 8); strings.Join(got, "|") != "one two|three" {
		t.Errorf("Wrap at 8 = %q, want breaks at spaces", got)
	}
}

// A word cut to a width is cut between grapheme clusters: an emoji keeps
// its skin-tone modifier, a family its joined members, a flag both its
// letters, a heart its emoji presentation, a keycap its digit and a letter
// its accent, each line as wide as the width allows; a flag, a heart shown
// as an emoji and a keycap take two columns, as terminals draw them.
func TestCutKeepsClusters(t *testing.T) {
	for s, want := range map[string]int{"🇫🇷": 2, "❤\ufe0f": 2, "1\ufe0f\u20e3": 2, "👍🏽": 2, "e\u0301": 1, "漢": 2, "❤": 1} {
		if got := Width(s); got != want {
			t.Errorf("Width(%q) = %d, want %d", s, got, want)
		}
	}
	clusters := []string{"👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "e\u0301", "x", "漢", "❤\ufe0f", "1\ufe0f\u20e3"}
	var word strings.Builder
	for i := range 40 {
		word.WriteString(clusters[i%len(clusters)])
	}
	for _, width := range []int{2, 3, 4, 5, 9} {
		lines := Wrap(word.String(), width)
		if got := strings.Join(lines, ""); got != word.String() {
			t.Fatalf("width %d: wrapping changed the text: %q", width, got)
		}
		for i, l := range lines {
			if Width(l) > width {
				t.Errorf("width %d: line %q is %d wide", width, l, Width(l))
			}
			for _, c := range clusters {
				if r := []rune(c); len(r) > 1 && (strings.HasPrefix(l, string(r[1:])) || strings.HasSuffix(l, string(r[:len(r)-1]))) && !strings.HasSuffix(l, c) {
					t.Errorf("width %d: line %d %q cuts %q", width, i, l, c)
				}
			}
			if i < len(lines)-1 && Width(l)+2 <= width {
				t.Errorf("width %d: line %q is %d wide, with room for the next cluster", width, l, Width(l))
			}
		}
	}
}

func TestTableFitsOrFolds(t *testing.T) {
	tb := &Table{Header: []string{"SEVERITY", "RULE", "FINDING", "EVIDENCE"}, MinWidth: []int{0, 22}, Rows: [][]string{
		{"ERROR", "kube-proxy-sync-errors", "kube-proxy cannot list EndpointSlice, Service: its dataplane is not updated", "kube-proxy.log:4\nkube-proxy.log:5"},
		{"WARNING", "syn-unanswered", "10.244.2.7:53 does not answer", "capture.pcap#frame=5"},
	}}
	var natural strings.Builder
	if err := tb.Render(&natural, 0); err != nil {
		t.Fatal(err)
	}
	naturalWidth := maxWidth(natural.String())
	for _, width := range []int{30, 60, 80, 200} {
		var b strings.Builder
		if err := tb.Render(&b, width); err != nil {
			t.Fatal(err)
		}
		got := maxWidth(b.String())
		if got > width {
			t.Errorf("width %d: widest line is %d:\n%s", width, got, b.String())
		}
		if width >= naturalWidth && got != naturalWidth {
			t.Errorf("width %d: table is %d wide, want its natural %d", width, got, naturalWidth)
		}
		for _, want := range []string{"kube-proxy-sync-errors", "syn-unanswered", "kube-proxy.log:5"} {
			if width >= 80 && !strings.Contains(b.String(), want) {
				t.Errorf("width %d: %q missing:\n%s", width, want, b.String())
			}
		}
	}
	var narrow strings.Builder
	_ = tb.Render(&narrow, 30)
	if !strings.Contains(narrow.String(), "SEVERITY: WARNING\nRULE:     syn-unanswered\n") || strings.Contains(narrow.String(), "┌") {
		t.Errorf("width 30: want one block per row:\n%s", narrow.String())
	}
}

func maxWidth(s string) int {
	m := 0
	for _, l := range strings.Split(s, "\n") {
		m = max(m, Width(l))
	}
	return m
}

// ColumnWidths narrows the widest column first, keeps each at its minimum,
// and says when the table cannot fit; WriteBox lays the cells out at those
// widths.
func TestColumnWidthsAndWriteBox(t *testing.T) {
	header := []string{"RULE", "TITLE"}
	rows := [][]string{{"ephemeral-nodeport-overlap", "ephemeral port range overlaps the NodePort range"}}
	if w, ok := ColumnWidths(header, rows, nil, 0); !ok || w[0] != 26 || w[1] != 48 {
		t.Errorf("natural widths %v %v, want [26 48]", w, ok)
	}
	w, ok := ColumnWidths(header, rows, []int{26, 10}, 60)
	if !ok || w[0] != 26 || w[0]+w[1]+BoxOverhead(2) != 60 {
		t.Errorf("at 60: %v %v, want the name whole and the title narrowed to fit", w, ok)
	}
	var b strings.Builder
	if err := WriteBox(&b, header, rows, w); err != nil {
		t.Fatal(err)
	}
	if got := maxWidth(b.String()); got != 60 || !strings.Contains(b.String(), "ephemeral-nodeport-overlap") ||
		!strings.Contains(b.String(), "NodePort range") {
		t.Errorf("box %d wide, want 60:\n%s", got, b.String())
	}
	if _, ok := ColumnWidths(header, rows, []int{26, 40}, 60); ok {
		t.Errorf("a title kept at 40 beside the name fits 60 columns")
	}
}

// A text too wide to leave ten columns beside its label goes under it,
// indented two more than the label: no line wider than the width, no word
// lost; with room, it stays beside. With no label, no line is blank.
func TestIndentUnderWhenNarrow(t *testing.T) {
	for _, prefix := range []string{"", "    "} {
		if got := Indent(prefix, "word word", 6); len(got) == 0 || strings.TrimSpace(got[0]) != "word" {
			t.Errorf("Indent(%q, ..., 6) = %q", prefix, got)
		}
	}
	text := "synack-reset, nat-reply-untranslated, hairpin-drop, mtu-blackhole"
	for _, prefix := range []string{"Rules that can run: ", "  Shown by: "} {
		for width := 6; width <= 60; width++ {
			lines := Indent(prefix, text, width)
			for _, l := range lines {
				if Width(l) > width {
					t.Errorf("%q at %d: line %q is %d wide", prefix, width, l, Width(l))
				}
			}
			switch under := width-Width(prefix) < 10; {
			case under && strings.Contains(lines[0], "synack"):
				t.Errorf("%q at %d: the text beside its label: %q", prefix, width, lines)
			case !under && !strings.HasPrefix(lines[0], prefix+"synack"):
				t.Errorf("%q at %d: the text not beside its label: %q", prefix, width, lines)
			}
			flat := strings.ReplaceAll(strings.Join(lines, ""), " ", "")
			if !strings.Contains(flat, strings.ReplaceAll(text, " ", "")) {
				t.Errorf("%q at %d: text lost: %q", prefix, width, lines)
			}
		}
	}
}

// A word is not cut inside an escape that escape.String wrote (a
// zero-width joiner of an emoji family, a control character), unless the
// escape alone is wider than the width.
func TestCutKeepsEscapes(t *testing.T) {
	if got := Wrap("\\漢字漢字", 2); strings.Join(got, "") != "\\漢字漢字" || !utf8.ValidString(got[0]) {
		t.Errorf("a backslash before a character of the text's own: %q", got)
	}
	word := `👨\u200d👩\u200d👧-family\x1b[31m-red\tname\U0001f600.pcap`
	escapes := []string{`\u200d`, `\x1b`, `\t`, `\U0001f600`}
	for width := 3; width <= 30; width++ {
		lines := Wrap(word, width)
		if strings.Join(lines, "") != word {
			t.Fatalf("width %d: %q", width, lines)
		}
		for i, l := range lines[:len(lines)-1] {
			joined := l + lines[i+1]
			for _, e := range escapes {
				if k := strings.Index(joined, e); k >= 0 && k < len(l) && k+len(e) > len(l) && len(e) <= width {
					t.Errorf("width %d: %q cut between %q and %q", width, e, l, lines[i+1])
				}
			}
		}
	}
}
