// Package fit lays text out for a terminal of a given width: cells and
// paragraphs wrapped at word boundaries, tables whose columns shrink to the
// width, and tables too wide for it folded into one block per row.
//
// A width of 0 or less means no limit: lines keep their length.
package fit

import (
	"strings"

	"github.com/clipperhouse/displaywidth"
)

// Width is the number of terminal columns s takes.
func Width(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return displaywidth.String(s)
		}
	}
	return len(s) // printable ASCII: a column a byte
}

// Wrap breaks s into lines at most width columns wide, at spaces where it
// can; a word wider than width is cut, after a '/' or ':' where it has one
// within the width. Newlines in s are kept as line breaks, and the
// leading spaces of a line indent each line it is wrapped into. width <= 0
// returns the lines of s as they are.
func Wrap(s string, width int) []string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		if width <= 0 || Width(para) <= width {
			out = append(out, para)
			continue
		}
		// A paragraph's leading spaces indent each of its lines.
		body := strings.TrimLeft(para, " ")
		indent := para[:len(para)-len(body)]
		if len(indent) >= width/2 {
			indent = ""
		}
		for _, l := range wrapLine(body, width-len(indent)) {
			out = append(out, indent+l)
		}
	}
	return out
}

func wrapLine(s string, width int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "" && Width(word) <= width:
			line = word
		case line != "" && Width(line)+1+Width(word) <= width:
			line += " " + word
		default:
			if line != "" {
				out = append(out, line)
				line = ""
			}
			for Width(word) > width {
				head, tail := cut(word, width)
				out = append(out, head)
				word = tail
			}
			line = word
		}
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	return out
}

// cut splits word, wider than width, into a head at most width columns
// wide and the rest, between grapheme clusters (a letter and its
// accents, an emoji and its modifiers stay whole), each as wide as a
// terminal draws it, and not inside an escape (inEscape); a cluster or an
// escape wider than width that starts the word is the head alone. The
// head ends, where it can in its second half, after a '/', ':', ',', '-',
// '_' or '.', or before a '#'.
func cut(word string, width int) (string, string) {
	w, end, soft := 0, 0, 0
	for g := displaywidth.StringGraphemes(word); g.Next(); {
		c, cw := g.Value(), g.Width()
		if w+cw > width {
			if end == 0 { // a cluster wider than width: take it alone
				end = len(c)
			}
			break
		}
		if c == "#" && w > width/2 {
			soft = end // before a frame number
		}
		w += cw
		end += len(c)
		if len(c) == 1 && strings.Contains("/:,-_.", c) && w > width/2 {
			soft = end
		}
	}
	if soft > 0 {
		end = soft
	}
	if from, to, ok := inEscape(word, end); ok {
		// Not inside an escape (escape.String's "\u200d"): before it,
		// or after it when it starts the word.
		if end = from; end == 0 {
			end = to
		}
	}
	return word[:end], word[end:]
}

// inEscape returns the escape of word that offset i falls strictly inside,
// if one does: a backslash and a letter, or "\x" and two hexadecimal
// digits, "\u" four or "\U" eight, as escape.String writes them.
func inEscape(word string, i int) (from, to int, ok bool) {
	for j := max(0, i-9); j < i; j++ {
		if word[j] != '\\' || j+1 >= len(word) {
			continue
		}
		c, n := word[j+1], 0
		switch c {
		case 'x':
			n = 4
		case 'u':
			n = 6
		case 'U':
			n = 10
		}
		if n == 0 || j+n > len(word) || !isHex(word[j+2:j+n]) {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				continue // a backslash of the text's own
			}
			n = 2 // a backslash and a letter
		}
		if i < j+n {
			return j, j + n, true
		}
		j += n - 1
	}
	return 0, 0, false
}

// isHex reports whether s is hexadecimal digits only.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Indent wraps s to width with prefix before its first line and an
// indent of the same width before the others, and returns the lines; where
// that leaves s fewer than MinBeside columns, s goes under the prefix
// instead (Under).
func Indent(prefix, s string, width int) []string {
	inner := 0
	if width > 0 {
		if inner = width - Width(prefix); inner < MinBeside {
			return Under(prefix, s, width)
		}
	}
	lines := Wrap(s, inner)
	pad := strings.Repeat(" ", Width(prefix))
	for i := range lines {
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = pad + lines[i]
		}
	}
	return lines
}

// MinBeside is how many columns a text is left beside its label, at the
// least: Indent, a table's blocks and analyze's screen put it under its
// label rather than in fewer.
const MinBeside = 10

// Under returns the lines of prefix, wrapped to width without its
// trailing spaces, and then those of s wrapped under it, indented as
// UnderLabel says (and no more than a quarter of the width).
func Under(prefix, s string, width int) []string {
	lines, depth := UnderLabel(prefix, width)
	indent := Spaces(min(depth, width/4))
	for _, l := range Wrap(s, max(width-len(indent), 1)) {
		lines = append(lines, indent+l)
	}
	return lines
}

// UnderLabel returns the lines of prefix's label, wrapped to width
// without its trailing spaces, for a text to go under it, and how deep
// that text is indented: two more than prefix's leading spaces. A prefix
// of spaces only is an indent: no line, and the text that deep.
func UnderLabel(prefix string, width int) (lines []string, depth int) {
	depth = len(prefix) - len(strings.TrimLeft(prefix, " "))
	if strings.TrimSpace(prefix) == "" {
		return nil, depth
	}
	return Wrap(strings.TrimRight(prefix, " "), width), depth + 2
}
