package report

import (
	"io"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
)

// TableStyle is how the table format is laid out for a terminal.
type TableStyle struct {
	// Width is the terminal's width in columns: lines are wrapped at
	// word boundaries to fit it (a command never: it is printed whole
	// on a line of its own), and positions are shown relative to the
	// bundle's root directory (named once, after the verdict). 0 is no
	// limit: lines at their natural length, with full paths, as Write
	// prints them.
	Width int
	// Color shows severities in colour (ANSI escapes).
	Color bool
	// Detail asks for the full account of findings in place of the
	// first screen: "all" for every finding, a finding's number (from 1)
	// or the start of its fingerprint for that finding alone; "" for
	// the first screen.
	Detail string
}

// WriteTable writes r in the table format laid out by s. With the zero
// TableStyle it writes what Write(w, "table", r) does. A Detail that
// selects no finding is an error wrapping ErrNoFinding, and nothing is
// written.
func WriteTable(w io.Writer, r *Report, s TableStyle) error {
	r, err := forWriting(w, r)
	if err != nil {
		return err
	}
	sc := &screen{width: max(s.Width, 0), color: s.Color}
	if s.Width > 0 {
		sc.root = bundleRoot(r)
	}
	if err := writeScreen(sc, r, s); err != nil {
		return err
	}
	return sc.write(w)
}

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
