package logs

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// NetErrorLinesFormat reads a component's failing network calls quoted
// without their log prefix: Go's net errors, one a line, as a ticket
// pastes the one line its logs fill with.
var NetErrorLinesFormat = &format.Format{
	Name: "net-error-lines",
	Kind: model.KindLogs,
	Command: "a component's log lines cut down to their error, without time or level (`dial tcp 10.96.0.1:443: " +
		"connect: network is unreachable`)",
	Doc: "each line must hold a Go network error (`dial tcp ADDR: connect: ...`, `read tcp A->B: read: connection " +
		"reset by peer`, `... i/o timeout`, `... cannot assign requested address`); the event has no time, its " +
		"level is error and its source is the component the file (coredns.log, capo-controller-manager.log) or " +
		"the command above it is named after",
	Sniff: sniffNetErrorLines,
	Parse: format.Records(readNetErrorLines, func(s *model.Snapshot, out []model.LogEvent) {
		s.Logs = append(s.Logs, out...)
	}, "events"),
}

// NetErrorLines parses lines of Go network errors. A line that holds none
// is reported with its position and the rest is read. name names the
// lines' source and is used in positions.
func NetErrorLines(r io.Reader, name string) ([]model.LogEvent, error) {
	return format.ReadAll(r, name, readNetErrorLines)
}

// netErrorRe finds a Go network error: the operation, its network and
// addresses, and the error.
var netErrorRe = lazyre.New(`\b(?:dial|read|write) (?:tcp|udp)[46]? (?:\S+->)?\S+: (?:(?:connect|read|write|getsockopt): )?` +
	`(connection refused|no route to host|network is unreachable|i/o timeout|cannot assign requested address|` +
	`connection reset by peer|connection timed out|broken pipe)`)

// netErrorSource names the component of a file of error lines: the one
// it is named after, or its name without extensions.
func netErrorSource(name string) string {
	base := path.Base(strings.ReplaceAll(name, "\\", "/"))
	if c := knownComponent(base); c != "" {
		return c
	}
	stem, _, _ := strings.Cut(base, ".")
	return stem
}

func readNetErrorLines(r io.Reader, src *format.File, errs *model.ErrorList) []model.LogEvent {
	var out []model.LogEvent
	source := netErrorSource(src.Name)
	text.ReadLines(r, src, errs, text.Hooks{Command: func(cmd string) {
		if s := sourceFromCommand(cmd); s != "" {
			source = s
		}
	}}, func(l *text.Line) {
		m := netErrorRe.FindStringSubmatch(l.Trimmed)
		if m == nil {
			l.Syntax(fmt.Errorf("expected a network error (\"dial tcp 10.96.0.1:443: connect: connection refused\"), got %q", l.Trimmed))
			return
		}
		out = append(out, model.LogEvent{Node: l.Node, Source: source, Level: "error", Message: l.Trimmed,
			Fields: map[string]string{"error": m[1]}, Pos: l.Pos()})
	})
	return out
}

func sniffNetErrorLines(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	found := 0
	for _, line := range text.HeadLines(head, 200) {
		t := strings.TrimSpace(line)
		if t == "" || text.IsPromptOrMarker(line) {
			continue
		}
		if !netErrorRe.MatchString(t) || strings.HasPrefix(t, "{") {
			return 0 // JSON records holding an error are JSON's
		}
		found++
	}
	if found == 0 {
		return 0
	}
	return 80 // below the log formats, which read a line with its prefix
}
