package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/report"
)

// colorModes are the values of --color.
var colorModes = []string{"auto", "always", "never"}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := unwrapSized(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// defaultWidth is the width of output that goes to no terminal (a pipe, a
// file) when neither --width nor $COLUMNS gives one.
const defaultWidth = 80

// pipeWidth is the width outputWidth gives output that goes to no
// terminal when neither --width nor $COLUMNS gives one: defaultWidth (the
// tests that hold a table's layout at its natural width set it to 0).
var pipeWidth = defaultWidth

// outputWidth is the width the text and tables written to w are fitted
// to: --width's when it is given (w is then a sizedWriter), else the
// terminal's, else $COLUMNS when it is a positive number, else
// defaultWidth. 0 (--width 0) is no limit: the tables at their natural
// width.
func outputWidth(w io.Writer) int {
	if s, ok := w.(*sizedWriter); ok {
		return s.width
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
			return width
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return pipeWidth
}

// sizedWriter is an output whose width --width gives.
type sizedWriter struct {
	io.Writer
	width int
}

// unwrapSized is the writer under w when w is a sizedWriter, else w.
func unwrapSized(w io.Writer) io.Writer {
	if s, ok := w.(*sizedWriter); ok {
		return s.Writer
	}
	return w
}

// widthFlag is the value of --width: the number of columns, when given.
type widthFlag struct {
	n   int
	set bool
}

func (f *widthFlag) String() string {
	if !f.set {
		return ""
	}
	return strconv.Itoa(f.n)
}

func (f *widthFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want a number of columns, 0 or more (0: no limit), got %q", s)
	}
	f.n, f.set = n, true
	return nil
}

func (f *widthFlag) Type() string { return "int" }

// sized returns w as --width sizes it: w itself without the flag.
func (f *widthFlag) sized(w io.Writer) io.Writer {
	if !f.set {
		return w
	}
	return &sizedWriter{Writer: unwrapSized(w), width: f.n}
}

// useColor says whether output to w is coloured under --color=mode: auto
// colours a terminal unless NO_COLOR is set (to anything but "") or TERM
// is dumb; always and never override both.
func useColor(mode string, w io.Writer) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
		return isTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb", nil
	}
	return false, fmt.Errorf("--color %q: want auto, always or never", mode)
}

// tableStyle is how the table format is laid out on w under --color=mode.
func tableStyle(mode string, w io.Writer) (report.TableStyle, error) {
	color, err := useColor(mode, w)
	return report.TableStyle{Width: outputWidth(w), Color: color}, err
}

// fitText returns the lines of s wrapped to width (fit.Wrap), the other
// lines of each line that is too wide hanging under its text: after its
// indent and, when its first word is a short marker ("+", "25.0%",
// "[3/10]"), after that word; or else two columns in from its indent.
// width <= 0 returns s as it is.
func fitText(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if fit.Width(l) <= width {
			out = append(out, l)
			continue
		}
		body := strings.TrimLeft(l, " ")
		first := l[:len(l)-len(body)]
		hang := first + "  "
		if word, rest, ok := strings.Cut(body, " "); ok && fit.Width(word) <= maxMarker {
			text := strings.TrimLeft(rest, " ")
			first, body = first+body[:len(body)-len(text)], text
			hang = strings.Repeat(" ", fit.Width(first))
		}
		if fit.Width(first) > width/2 || fit.Width(hang) > width/2 {
			first, hang, body = "", "", strings.TrimLeft(l, " ")
		}
		for i, w := range fit.Wrap(body, width-max(fit.Width(first), fit.Width(hang))) {
			if i == 0 {
				out = append(out, first+w)
			} else {
				out = append(out, hang+w)
			}
		}
	}
	return strings.Join(out, "\n")
}

// maxMarker is the widest first word of a line that fitText hangs the
// line's other lines after.
const maxMarker = 8

// fprintfFitted writes format, its arguments escaped (escape.Fprintf),
// fitted to width (fitText).
func fprintfFitted(w io.Writer, width int, format string, args ...any) {
	var b strings.Builder
	escape.Fprintf(&b, format, args...)
	io.WriteString(w, fitText(b.String(), width))
}
