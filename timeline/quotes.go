package timeline

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// Bounds of Quotes: at most MaxQuotes quotes (the findings' first
// evidence first), each line cut to MaxQuoteBytes.
const (
	MaxQuotes     = 2000
	MaxQuoteBytes = 500
)

// stdinName is the name parse gives standard input, which cannot be read
// again.
const stdinName = "<stdin>"

// Quotes returns the text at the findings' evidence positions and at
// those their timelines (by fingerprint, as Build returns them) cite, for
// the HTML report's appendix, one Quote per distinct position in the order
// the findings cite them, each finding's evidence before its timeline's
// (at most MaxQuotes): the line of a text file
// (read again: a member of an archive or of a compressed file too), a
// one-line decode of a capture's frame (see capture.Frames), and for a
// Kubernetes object the object and field path before the line that shows
// it. A position that cannot be read again gets a quote saying why; a
// position naming no line, frame or object gets none. Quotes reads each
// file once, up to the highest line or frame needed, and stops early,
// quoting what it could not read as such, when ctx ends.
func Quotes(ctx context.Context, findings []analyzer.Finding, timelines map[string]*report.Timeline) []report.Quote {
	if ctx == nil {
		ctx = context.Background()
	}
	var order []model.Pos
	seen := map[model.Pos]bool{}
	add := func(p model.Pos) {
		if seen[p] || p.Line == 0 && p.Frame == 0 && p.Object == "" || len(order) == MaxQuotes {
			return
		}
		seen[p] = true
		order = append(order, p)
	}
	for _, f := range findings {
		for _, e := range f.Evidence {
			add(e.Pos)
		}
		if tl := timelines[f.Fingerprint]; tl != nil && f.Fingerprint != "" {
			timelinePositions(tl, add)
		}
	}
	if len(order) == 0 {
		return nil
	}
	roots := map[string]*want{}
	for _, p := range order {
		if p.File == "" || p.File == stdinName || p.Line == 0 && p.Frame == 0 {
			continue
		}
		parts := splitMember(p.File)
		w := roots[parts[0]]
		if w == nil {
			w = &want{}
			roots[parts[0]] = w
		}
		for _, m := range parts[1:] {
			if w.sub == nil {
				w.sub = map[string]*want{}
			}
			if w.sub[m] == nil {
				w.sub[m] = &want{}
			}
			w = w.sub[m]
		}
		// A packet read from text (tcpdump, tshark) is quoted by its
		// line, one read from a pcap by its frame.
		if p.Line > 0 {
			w.lines = append(w.lines, p.Line)
		} else {
			w.frames = append(w.frames, p.Frame)
		}
	}
	q := newQuoted()
	names := make([]string, 0, len(roots))
	for n := range roots {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			q.fail(n, roots[n], err)
			continue
		}
		readFile(ctx, n, roots[n], q)
	}
	out := make([]report.Quote, 0, len(order))
	for _, p := range order {
		out = append(out, report.Quote{Pos: p, Text: quoteText(p, q)})
	}
	return out
}

// timelinePositions calls add with each position tl cites: its lanes'
// events and spans, its spans and marks.
func timelinePositions(tl *report.Timeline, add func(model.Pos)) {
	for _, l := range tl.Lanes {
		for _, e := range l.Events {
			add(e.Pos)
		}
		for _, s := range l.Spans {
			add(s.Pos)
		}
	}
	for _, s := range tl.Spans {
		add(s.Pos)
	}
	for _, m := range tl.Marks {
		add(m.Pos)
	}
}

// quoteText is the quote of one position.
func quoteText(p model.Pos, q *quoted) string {
	obj := strings.TrimSpace(p.Object + " " + p.Path)
	var text string
	switch {
	case p.File == stdinName:
		text = "(read from standard input, which cannot be read again to quote)"
	case p.Line == 0 && p.Frame == 0:
		return obj
	case p.Line > 0:
		t, ok := q.lines[p.File][p.Line]
		text = t
		if !ok {
			text = notRead(q.lineErrs[p.File], fmt.Sprintf("line %d", p.Line))
		}
	default:
		t, ok := q.frames[p.File][p.Frame]
		text = t
		if !ok {
			text = notRead(q.frameErrs[p.File], fmt.Sprintf("frame %d", p.Frame))
		}
	}
	switch {
	case obj != "" && strings.Trim(text, "{}[],: \t") == "":
		return obj // the line opens the object and says nothing more
	case obj != "":
		return obj + ": " + text
	}
	return text
}

// notRead says why a line or frame has no text: err stopped reading it,
// or the file ended before it.
func notRead(err error, what string) string {
	if err != nil && err != io.EOF {
		return fmt.Sprintf("(cannot quote %s: %v)", what, err)
	}
	return fmt.Sprintf("(cannot quote %s: the file ends before it)", what)
}
