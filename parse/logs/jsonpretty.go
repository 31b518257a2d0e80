package logs

import (
	"encoding/json"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// A JSON log record pasted pretty-printed, one key a line, as a ticket
// quotes the one record that matters:
//
//	{
//	  "level": "error",
//	  "ts": "2020-05-18T08:52:22.632Z",
//	  "msg": "Initialization failure: failed to allocate one IP addresses on ENI eni-0aaaafcedcb7b0940e,
//	          err: ... InsufficientFreeAddressesInSubnet: ..."
//	}
//
// Its lines are joined with spaces, which also mends a string value the
// paste broke over lines (no longer JSON as printed); the record is read
// as a JSON log line at the position of its "{", which starts its line:
// an indented one is inside something else (a JSON array of objects).
// Lines that make no log record by maxPrettyLines are read one by one, as
// before.

// maxPrettyLines bounds the lines of one pretty-printed record.
const maxPrettyLines = 64

// prettyLines are the lines of a pretty-printed record being read, from
// its "{" on.
type prettyLines struct {
	lines []string
	pos   []model.Pos
}

// opensPretty reports whether line opens a pretty-printed record: "{"
// alone, at the line's start.
func opensPretty(line string) bool { return strings.TrimRight(line, " \t\r") == "{" }

// prettyRecord joins the trimmed lines of a record, the first its "{",
// and reports whether they make a complete JSON value.
func prettyRecord(lines []string) (string, bool) {
	last := strings.TrimSpace(lines[len(lines)-1])
	if !strings.HasPrefix(last, "}") {
		return "", false
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.TrimSpace(l))
	}
	rec := strings.TrimSuffix(b.String(), ",")
	return rec, json.Valid([]byte(rec))
}

// prettyLogAt reads the pretty-printed log record that starts at lines[i]
// ("{" alone): the record joined and the number of lines it takes; ok is
// false when no log record ends there within maxPrettyLines.
func prettyLogAt(lines []string, i int) (rec string, n int, ok bool) {
	if !opensPretty(lines[i]) {
		return "", 0, false
	}
	for j := i + 1; j < len(lines) && j-i < maxPrettyLines; j++ {
		if rec, complete := prettyRecord(lines[i : j+1]); complete {
			_, ok := parseJSONLog(rec)
			return rec, j + 1 - i, ok
		}
	}
	return "", 0, false
}

// pretty reads line as a line of a pretty-printed record: the first, "{"
// alone, or one after it. It reports whether it took the line; a record
// read whole is read as a log line, and lines that make none are read one
// by one.
func (lr *logReader) pretty(line string, pos model.Pos) bool {
	p := lr.prettyRec
	if p == nil {
		if !opensPretty(line) {
			return false
		}
		lr.prettyRec = &prettyLines{lines: []string{line}, pos: []model.Pos{pos}}
		return true
	}
	p.lines, p.pos = append(p.lines, line), append(p.pos, pos)
	rec, complete := prettyRecord(p.lines)
	switch {
	case complete:
		lr.prettyRec = nil
		if _, ok := parseJSONLog(rec); ok {
			lr.entry(rec, p.pos[0], nil)
			return true
		}
		lr.replayPretty(p)
	case len(p.lines) >= maxPrettyLines:
		lr.prettyRec = nil
		lr.replayPretty(p)
	}
	return true
}

// replayPretty reads the lines of p one by one: they made no log record.
func (lr *logReader) replayPretty(p *prettyLines) {
	for i, l := range p.lines {
		lr.entry(l, p.pos[i], nil)
	}
}
