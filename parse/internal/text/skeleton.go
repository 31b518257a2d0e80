package text

import (
	"io"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// Line is one line of a line format, as ReadLines hands it over.
type Line struct {
	*Lines
	// Trimmed is the line without its leading and trailing spaces; never
	// empty.
	Trimmed string
	// Node is the node of the line: the source's, until a node marker or
	// a shell prompt names another.
	Node string
}

// Fields returns the line's space-separated words (at least one).
func (l *Line) Fields() []string { return strings.Fields(l.Trimmed) }

// Syntax reports err, when not nil, as a syntax error at the line, and
// tells whether there was none.
func (l *Line) Syntax(err error) bool {
	if err != nil {
		l.Errorf("%w: %v", format.ErrSyntax, err)
		return false
	}
	return true
}

// Hooks are what a line format does at the lines ReadLines does not hand
// it. Either may be nil.
type Hooks struct {
	// Command is called with the source's command, then with the
	// command of every shell prompt that names one: what the command
	// says of the output below it (its device, its family ...).
	Command func(cmd string)
	// Prompt is called at every node marker and shell prompt, with the
	// prompt's command ("" for a marker or a prompt without one).
	Prompt func(l *Line, cmd string)
}

// ReadLines is the reading loop line formats share. It reads r line by
// line and skips blank lines; node markers and shell prompts name the node
// of the lines below them and go to hooks; every other line is handed to
// line. A command line pasted without a prompt as the first line
// (Lines.PastedCommand) is a prompt too. Positions name src.Name; read
// errors go to errs.
func ReadLines(r io.Reader, src *format.File, errs *model.ErrorList, hooks Hooks, line func(l *Line)) {
	if hooks.Command != nil {
		hooks.Command(src.Command)
	}
	l := &Line{Lines: NewLines(r, src.Name, errs), Node: src.Node}
	for l.Next() {
		text := l.Text()
		l.Trimmed = strings.TrimSpace(text)
		if l.Trimmed == "" {
			continue
		}
		cmd, ok := NodeLine(text, &l.Node)
		if !ok {
			cmd, ok = l.PastedCommand()
		}
		if ok {
			if hooks.Command != nil && cmd != "" {
				hooks.Command(cmd)
			}
			if hooks.Prompt != nil {
				hooks.Prompt(l, cmd)
			}
			continue
		}
		line(l)
	}
}

// Match is what a sniffer makes of one line: whether the format reads
// it (Hit), does not (Miss), or cannot tell (Skip).
type Match int

// The matches.
const (
	Miss Match = iota // a line the format does not read
	Hit               // a line the format reads
	Skip              // a line that tells nothing either way
)

// SniffLines is the sniffing loop line formats share, over the first max
// non-empty lines of head. Node markers tell nothing; a shell prompt, or a
// first line that is a command pasted without one (BareCommand), counts as
// three lines read when cmd (which may be nil) says its command prints the
// format; line judges every other line. It returns the lines read
// (hits) and judged (total); ok is false when head is not text.
func SniffLines(head []byte, max int, cmd func(cmd string) bool, line func(line string) Match) (hits, total int, ok bool) {
	if !IsText(head) {
		return 0, 0, false
	}
	lines := HeadLines(head, max)
	kinds := HeadValue(head, headKindsKey{max}, func() []headKind { return headKinds(lines) })
	for i, l := range lines {
		k := &kinds[i]
		if k.marker {
			continue
		}
		if k.isCmd {
			if cmd != nil && cmd(k.cmd) {
				hits += 3
			}
			continue
		}
		switch line(l) {
		case Hit:
			hits++
			total++
		case Miss:
			total++
		}
	}
	return hits, total, true
}

// headKind is what every line format makes of a line of a head before its
// own judgement (SniffLines): a node marker, or a command.
type headKind struct {
	marker bool
	isCmd  bool
	cmd    string
}

// headKindsKey keeps the headKinds of a head's first max lines
// (HeadValue).
type headKindsKey struct{ max int }

// headKinds tells the kind of each of lines, a head's.
func headKinds(lines []string) []headKind {
	kinds := make([]headKind, len(lines))
	for i, l := range lines {
		if _, ok := NodeMarker(l); ok {
			kinds[i].marker = true
			continue
		}
		kinds[i].cmd, kinds[i].isCmd = HeadCommand(i, l)
	}
	return kinds
}
