package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/term"

	"github.com/netmortem/netmortem/report"
)

// colorModes are the values of --color.
var colorModes = []string{"auto", "always", "never"}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// outputWidth is the width the tables written to w are fitted to: the
// terminal's, or else $COLUMNS when it is a positive number, or else 0
// (no limit: a pipe or a file gets the tables at their natural width).
func outputWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
			return width
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
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
