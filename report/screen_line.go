package report

import (
	"io"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/fit"
)

// sline is one logical line of the table format: prose, wrapped to the
// width under its continuation prefix, or a command, never wrapped.
type sline struct {
	// lead is printed before the first line (indent and label), cont
	// before each line the text wraps onto.
	lead, cont string
	// text is the line's text, escaped.
	text string
	// command is a line to paste into a shell: printed whole on its
	// line, however wide, with neither its paths made relative nor any
	// colour.
	command bool
	// most is how many lines the text may wrap onto (0: no limit): the
	// last ends in "…" when it is cut.
	most int
	// sev, when set, colours the first line's severity word.
	sev analyzer.Severity
}

// prose is a line of text wrapped under an indent as wide as lead.
func prose(lead, text string) sline {
	return sline{lead: lead, cont: strings.Repeat(" ", fit.Width(lead)), text: text}
}

// hanging is a line of text wrapped under an indent of cont.
func hanging(lead, cont, text string) sline {
	return sline{lead: lead, cont: cont, text: text}
}

// commandLine is a command printed whole after indent.
func commandLine(indent, command string) sline {
	return sline{lead: indent, text: command, command: true}
}

// blank is an empty line.
var blank = sline{}

// screen renders lines: wrapped to width (no limit if 0), the paths
// under root made relative, severities coloured when color is set.
type screen struct {
	width int
	root  string
	color bool
	b     strings.Builder
}

// add renders each of lines.
func (s *screen) add(lines ...sline) {
	for _, l := range lines {
		s.line(l)
	}
}

func (s *screen) line(l sline) {
	if l.command {
		s.b.WriteString(l.lead + l.text + "\n")
		return
	}
	text := relText(l.text, s.root)
	if s.width > 0 && min(s.width-fit.Width(l.lead), s.width-fit.Width(l.cont)) < fit.MinBeside {
		// Too narrow for the text beside its label: the label alone,
		// the text under it, as fit.Under lays it out; an indent no
		// deeper than a quarter of the width, nor than leaves the text
		// its ten columns (wrapAtoms gives it no fewer).
		labels, depth := fit.UnderLabel(l.lead, s.width)
		for _, o := range labels {
			s.b.WriteString(o + "\n")
		}
		l.lead = fit.Spaces(max(0, min(depth, s.width/4, s.width-fit.MinBeside)))
		l.cont = l.lead
	}
	var out []string
	if s.width <= 0 {
		out = []string{text}
	} else {
		out = wrapAtoms(text, s.width-fit.Width(l.lead), s.width-fit.Width(l.cont))
	}
	if l.most > 0 && len(out) > l.most {
		out = out[:l.most]
		last := out[l.most-1]
		room := s.width - fit.Width(l.cont)
		if l.most == 1 {
			room = s.width - fit.Width(l.lead)
		}
		for fit.Width(last)+1 > room && last != "" {
			_, size := lastRune(last)
			last = last[:len(last)-size]
		}
		out[l.most-1] = strings.TrimRight(last, " ") + "…"
	}
	for i, o := range out {
		if i == 0 {
			o = l.lead + o
			if s.color && l.sev != 0 {
				word := strings.ToUpper(l.sev.String())
				if k := strings.Index(o, word); k >= 0 {
					o = o[:k] + colorSeverity(l.sev, word) + o[k+len(word):]
				}
			}
		} else {
			o = l.cont + o
		}
		s.b.WriteString(strings.TrimRight(o, " ") + "\n")
	}
}

// write writes what was rendered to w.
func (s *screen) write(w io.Writer) error {
	_, err := io.WriteString(w, s.b.String())
	return err
}

func lastRune(s string) (rune, int) {
	r := []rune(s)
	if len(r) == 0 {
		return 0, 0
	}
	return r[len(r)-1], len(string(r[len(r)-1]))
}

// wrapAtoms wraps s, its first line to first columns and the others to
// rest, at spaces; a code span (`...`) is never broken: it goes whole to
// a line of its own when it does not fit on the current one, and one
// wider than the width goes there bare (without its backticks and the
// punctuation around it, indented two more columns), so that the command
// it holds can be pasted.
// A word wider than the width that is not a code span is cut (fit.Wrap).
func wrapAtoms(s string, first, rest int) []string {
	first, rest = max(first, fit.MinBeside), max(rest, fit.MinBeside)
	var out []string
	line := ""
	room := func() int {
		if len(out) == 0 {
			return first
		}
		return rest
	}
	flush := func() {
		out = append(out, line)
		line = ""
	}
	for _, word := range atoms(s) {
		switch {
		case line == "" && fit.Width(word) <= room():
			line = word
		case line != "" && fit.Width(line)+1+fit.Width(word) <= room():
			line += " " + word
		case strings.Count(word, "`") == 2 && fit.Width(word) > room():
			// A command too wide for the line: on a line of its own,
			// bare, so that the line pastes as it is; the punctuation
			// around it stays with the prose.
			i, j := strings.Index(word, "`"), strings.LastIndex(word, "`")
			if pre := word[:i]; pre != "" {
				if line != "" && fit.Width(line)+1+fit.Width(pre) <= room() {
					line += " " + pre
				} else {
					if line != "" {
						flush()
					}
					line = pre
				}
			}
			if line != "" {
				flush()
			}
			line = "  " + word[i+1:j]
			flush()
			line = word[j+1:]
		default:
			if line != "" {
				flush()
			}
			if fit.Width(word) <= room() || strings.Contains(word, "`") {
				line = word
				continue
			}
			pieces := fit.Wrap(word, room())
			for _, p := range pieces[:len(pieces)-1] {
				line = p
				flush()
			}
			line = pieces[len(pieces)-1]
		}
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	return out
}

// atoms splits s into the words it may be wrapped between: at spaces,
// except those inside a code span, which is one word with the text
// around it up to the next space (`ss -lnt`, on "(`ss -lnt`)."). An
// unclosed backtick opens no span.
func atoms(s string) []string {
	var out []string
	fields := strings.Fields(s)
	for i := 0; i < len(fields); i++ {
		w := fields[i]
		if strings.Count(w, "`")%2 == 1 {
			// Join the fields up to the one that closes the span.
			for j := i + 1; j < len(fields); j++ {
				if strings.Contains(fields[j], "`") {
					w = strings.Join(fields[i:j+1], " ")
					i = j
					break
				}
			}
		}
		out = append(out, w)
	}
	return out
}
