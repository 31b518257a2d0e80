package netfilter

import (
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// conntrackSummaryRe matches the summary conntrack writes to standard
// error: "conntrack v1.4.7 (conntrack-tools): 6 flow entries have been
// shown." (-L) or "... 25 flow events have been shown." (-E).
var conntrackSummaryRe = lazyre.New(`^conntrack v\S+ \(conntrack-tools\): (\d+) flow (?:entries|events) ha(?:ve|s) been shown\.`)

// ctSummary checks conntrack's summary against the lines of one command's
// output: a paste cut short, or lines lost, shows as a count that differs.
type ctSummary struct {
	want  int // the summary's count, -1 before one is met
	lines int // entry lines met (read or not)
	pos   model.Pos
	text  string
	// piped is set when the command's output went through a pipe
	// (conntrack -L | grep 80): the summary, on standard error, counts
	// lines the pipe took out.
	piped bool
}

func newCtSummary(cmd string) *ctSummary {
	return &ctSummary{want: -1, piped: strings.Contains(cmd, "|")}
}

// prompt checks the output of the previous command at a prompt that names
// the next one (node markers, without one, go on counting).
func (s *ctSummary) prompt(errs *model.ErrorList, cmd string) {
	if cmd == "" {
		return
	}
	s.check(errs)
	s.piped = strings.Contains(cmd, "|")
}

// summary reads a summary line; false when l is not one.
func (s *ctSummary) summary(l *text.Line) bool {
	m := conntrackSummaryRe.FindStringSubmatch(l.Trimmed)
	if m == nil {
		return false
	}
	s.want, _ = strconv.Atoi(m[1])
	s.pos, s.text = l.Pos(), l.Trimmed
	return true
}

// check reports a summary whose count is not the number of lines met, and
// starts over (at a prompt, and at the end).
func (s *ctSummary) check(errs *model.ErrorList) {
	if s.want >= 0 && s.want != s.lines && !s.piped {
		errs.Addf(s.pos, s.text, "conntrack says it showed %d, but %d were read here: the output is incomplete", s.want, s.lines)
	}
	s.want, s.lines = -1, 0
}
