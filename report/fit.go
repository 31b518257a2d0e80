package report

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/fit"
)

// TableStyle is how the table format is laid out for a terminal.
type TableStyle struct {
	// Width is the terminal's width in columns: the table's columns are
	// narrowed and its cells and detail lines wrapped at word boundaries
	// to fit it, positions are shown relative to the bundle's root
	// directory (named once above the table), and below FoldWidth the
	// evidence is folded under each finding. 0 is no limit: the table at
	// its natural width, with full paths, as Write prints it.
	Width int
	// Color shows severities in colour (ANSI escapes).
	Color bool
}

// FoldWidth is the width below which the table format shows each
// finding's evidence under its title instead of in a column of its own.
const FoldWidth = 120

// WriteTable writes r in the table format laid out by s. With the zero
// TableStyle it writes what Write(w, "table", r) does.
func WriteTable(w io.Writer, r *Report, s TableStyle) error {
	r, err := forWriting(w, r)
	if err != nil {
		return err
	}
	if s.Width <= 0 && !s.Color {
		return writeTable(w, r)
	}
	root := ""
	if s.Width > 0 {
		root = bundleRoot(r)
	}
	var head bytes.Buffer
	ew := &errWriter{w: &head}
	if root != "" && s.Width > 0 {
		ew.printf("Bundle %s (paths below are relative to it)\n\n", root)
	}
	if len(r.Findings) == 0 {
		writeNoFindings(ew, r)
		if ew.err != nil {
			return ew.err
		}
		return fitLines(w, head.Bytes(), root, s)
	}
	writeVerdict(ew, r.Verdict, "table")
	if ew.err != nil {
		return ew.err
	}
	if err := fitLines(w, head.Bytes(), root, s); err != nil {
		return err
	}
	if err := fitTable(w, r, root, s); err != nil {
		return err
	}
	var details bytes.Buffer
	ew = &errWriter{w: &details}
	writeDetails(ew, r)
	if ew.err != nil {
		return ew.err
	}
	return fitLines(w, details.Bytes(), root, s)
}

// fitTable writes the findings table of r laid out by s.
func fitTable(w io.Writer, r *Report, root string, s TableStyle) error {
	fold := s.Width > 0 && s.Width < FoldWidth
	t := &fit.Table{Header: []string{"SEVERITY", "RULE", "FINDING", "EVIDENCE"}}
	if fold {
		t.Header = t.Header[:3]
	}
	longestRule := 0
	for _, f := range r.Findings {
		longestRule = max(longestRule, fit.Width(escape.String(f.Rule)))
		var ev []string
		for i, e := range f.Evidence {
			if i == maxTableEvidence {
				ev = append(ev, fmt.Sprintf("(+%d more)", len(f.Evidence)-i))
				break
			}
			ev = append(ev, relPath(escape.String(e.Pos.String()), root))
		}
		row := []string{strings.ToUpper(f.Severity.String()) + certaintyCell(f.Certainty), escape.String(f.Rule), escape.String(f.Title)}
		if fold {
			for _, e := range ev {
				row[2] += "\n  " + e
			}
		} else {
			row = append(row, strings.Join(ev, "\n"))
		}
		t.Rows = append(t.Rows, row)
	}
	// A rule's name is kept whole while the table can be made to fit.
	t.MinWidth = []int{len("WARNING"), min(longestRule, 24), 12, 16}
	if s.Color {
		t.Style = func(row, col int, text string) string {
			if col != 0 {
				return text
			}
			return colorSeverity(r.Findings[row].Severity, text)
		}
	}
	return t.Render(w, s.Width)
}

// heading matches the first line of a finding in the details: "[3] ERROR".
var heading = regexp.MustCompile(`^\[\d+\] (ERROR|WARNING|INFO)`)

// fitLines writes the lines of text with root's paths made relative and
// each line wrapped to s.Width, its continuation lines indented as far as
// the line's text (past a "Label: " of the details).
func fitLines(w io.Writer, text []byte, root string, s TableStyle) error {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		if len(text) == 0 {
			break
		}
		line = relText(line, root)
		body := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(body)]
		hang := indent
		if lbl := detailLabel.FindString(body); lbl != "" {
			hang += strings.Repeat(" ", len(lbl))
			indent += lbl
			body = body[len(lbl):]
		} else if strings.HasPrefix(body, "[") {
			hang += "    "
		} else if strings.HasPrefix(body, "- ") {
			hang += "  "
		}
		for i, l := range wrapHanging(body, s.Width, len(indent), len(hang)) {
			if i == 0 {
				l = indent + l
				if s.Color {
					if m := heading.FindStringSubmatchIndex(l); m != nil {
						sev, _ := analyzer.ParseSeverity(strings.ToLower(l[m[2]:m[3]]))
						l = l[:m[2]] + colorSeverity(sev, l[m[2]:m[3]]) + l[m[3]:]
					}
				}
			} else {
				l = hang + l
			}
			b.WriteString(l + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrapHanging wraps s to width (no limit if 0): its first line
// after an indent of first columns, the others after one of rest.
func wrapHanging(s string, width, first, rest int) []string {
	if width <= 0 {
		return []string{s}
	}
	lines := fit.Wrap(s, max(width-first, 10))
	if len(lines) < 2 {
		return lines
	}
	tail := strings.Join(lines[1:], " ")
	return append(lines[:1], fit.Wrap(tail, max(width-rest, 10))...)
}

// detailLabel matches the label a detail line begins with ("Cause: ",
// "Fix:   ", "Shown by: "), under which its continuation lines are
// indented.
var detailLabel = regexp.MustCompile(`^[A-Z][a-z]+( [a-z]+)?: +`)

// bundleRoot is the directory all of r's inputs are under, or "" when
// they share none.
func bundleRoot(r *Report) string {
	root, first := "", true
	for _, in := range r.Inputs {
		dir := in.Path
		if i := strings.LastIndex(dir, "/"); i >= 0 {
			dir = dir[:i]
		} else {
			dir = ""
		}
		if first {
			root, first = dir, false
			continue
		}
		for root != "" && dir != root && !strings.HasPrefix(dir, root+"/") {
			if i := strings.LastIndex(root, "/"); i >= 0 {
				root = root[:i]
			} else {
				root = ""
			}
		}
	}
	return root
}

// relPath is p (a position or path) relative to root.
func relPath(p, root string) string {
	if root == "" {
		return p
	}
	return strings.TrimPrefix(p, root+"/")
}

// relText is s with the paths under root made relative to it.
func relText(s, root string) string {
	if root == "" {
		return s
	}
	return strings.ReplaceAll(s, root+"/", "")
}

// colorSeverity is text in the colour of severity sev.
func colorSeverity(sev analyzer.Severity, text string) string {
	code := "36" // info: cyan
	switch sev {
	case analyzer.Error:
		code = "1;31"
	case analyzer.Warning:
		code = "33"
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}
