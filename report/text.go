package report

import (
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// The text format is one line per finding in the style compilers use, so
// that Emacs compilation-mode, Vim's quickfix list (errorformat
// "%f:%l:%c: %m") and GitHub problem matchers read it:
//
//	FILE:LINE:COL: SEVERITY: RULE: MESSAGE
//
// FILE, LINE and COL are the first piece of evidence's: 0 for a line or a
// column it does not have (a packet capture has neither), and "-" for the
// file of a finding without evidence or whose first evidence names no file
// (a Kubernetes object known only by name).
// MESSAGE is the title, then "(cause likely)" or "(cause unknown)" when the
// cause is not proven, then in brackets what the first position names
// beyond its line (the frame "#frame=N", the Kubernetes object and field)
// and its note. The other pieces of evidence follow, one per line,
// indented by a tab, as "position (note)". When the analysis is
// incomplete, each reason comes first, on a line of its own:
//
//	-:0:0: incomplete: REASON

// writeText prints the text format.
func writeText(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	// Why the analysis is incomplete comes first, one line a reason, as
	// a message of no position.
	for _, why := range r.Incomplete {
		ew.printf("-:0:0: incomplete: %s\n", why)
	}
	for _, f := range r.Findings {
		var first analyzer.Evidence
		if len(f.Evidence) > 0 {
			first = f.Evidence[0]
		}
		ew.printf("%s: %s: %s: %s\n", textPos(first.Pos), f.Severity, f.Rule, textMessage(f, first))
		for i, e := range f.Evidence {
			if i > 0 {
				ew.printf("\t%s\n", e)
			}
		}
		for _, l := range candidateLines(f, plain, plain, decideLine) {
			ew.printf("\t%s\n", l)
		}
	}
	writeSuppressedText(ew, r)
	return ew.err
}

// textMessage is the message of a finding's line in the text format; first
// is the evidence whose file and line begin that line.
func textMessage(f analyzer.Finding, first analyzer.Evidence) string {
	msg := f.Title
	if f.Certainty != "" && f.Certainty != analyzer.Proven {
		msg += " (cause " + string(f.Certainty) + ")"
	}
	var where []string
	if first.Frame > 0 {
		where = append(where, "#frame="+strconv.Itoa(first.Frame))
	}
	if obj := strings.TrimSpace(first.Object + " " + first.Path); obj != "" {
		where = append(where, obj)
	}
	detail := strings.Join(where, " ")
	if first.Note != "" {
		if detail != "" {
			detail += ": "
		}
		detail += first.Note
	}
	if detail != "" {
		msg += " [" + detail + "]"
	}
	return msg
}

// textPos is the FILE:LINE:COL a position gives in the text format.
func textPos(p model.Pos) string {
	file := p.File
	if file == "" {
		file = "-"
	}
	return file + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col)
}
