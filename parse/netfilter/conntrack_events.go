package netfilter

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// ConntrackEventsFormat reads conntrack event streams: conntrack -E, with
// or without -o timestamp.
var ConntrackEventsFormat = &format.Format{
	Name:    "conntrack-events",
	Kind:    model.KindConntrack,
	Command: "conntrack -E, conntrack -E -o timestamp (and other filters), journalctl -o cat of a unit that runs it",
	Doc: "one event a line: the event (`[NEW]`, `[UPDATE]`, `[DESTROY]`, right-aligned or not), " +
		"the `[1795538917.206647]` time of `-o timestamp`, then the entry as `conntrack -L` prints " +
		"it (protocol, timeout, TCP state, both tuples, flags, counters of DESTROY events with " +
		"accounting on); `[USERSPACE] portid= progname=` of changes made with conntrack -I/-D " +
		"keeps USERSPACE in the flags; conntrack's \"flow events have been shown\" summary is " +
		"checked against the lines read; prompts and banners name the node",
	Sniff: sniffConntrackEvents,
	Parse: format.Records(readConntrackEvents, func(s *model.Snapshot, out []model.ConntrackEntry) {
		s.ConntrackEvents = append(s.ConntrackEvents, out...)
	}, "events"),
}

// ConntrackEvents parses a conntrack -E event stream: "[NEW] tcp 6 120
// SYN_SENT src=... [UNREPLIED] src=...", "[DESTROY] udp 17 src=...", each
// line perhaps led by the "[1795538917.206647]" time -o timestamp prints.
// Each event is an entry with Event (and Time) set. conntrack's own summary
// ("conntrack v1.4.7 (conntrack-tools): 25 flow events have been shown.") is
// checked against the event lines; shell prompts and node markers name the
// node of the lines below them. A line that is none of these is reported
// with its position and the rest is read. name is used only in positions.
func ConntrackEvents(r io.Reader, name string) ([]model.ConntrackEntry, error) {
	return format.ReadAll(r, name, readConntrackEvents)
}

func readConntrackEvents(r io.Reader, src *format.File, errs *model.ErrorList) []model.ConntrackEntry {
	var out []model.ConntrackEntry
	sum := newCtSummary(src.Command)
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(_ *text.Line, cmd string) { sum.prompt(errs, cmd) }}, func(l *text.Line) {
		if sum.summary(l) {
			return // the summary conntrack writes to stderr
		}
		sum.lines++
		c, err := conntrackEventLine(l.Trimmed)
		if l.Syntax(err) {
			c.Node, c.Pos = l.Node, l.Pos()
			out = append(out, c)
		}
	})
	sum.check(errs)
	return out
}

// conntrackEvents are the events conntrack -E prints.
var conntrackEvents = map[string]bool{"NEW": true, "UPDATE": true, "DESTROY": true}

// conntrackEventHead splits an event line into its time (zero without -o
// timestamp), its event and the entry that follows; ok is false when the
// line does not start as an event does.
func conntrackEventHead(line string) (t time.Time, event, rest string, ok bool, err error) {
	rest = strings.TrimSpace(line)
	if ts, after, found := strings.Cut(rest, "]"); found && strings.HasPrefix(ts, "[") && len(ts) > 1 && ts[1] >= '0' && ts[1] <= '9' {
		sec, frac, _ := strings.Cut(ts[1:], ".")
		s, err1 := strconv.ParseInt(sec, 10, 64)
		ns, err2 := strconv.ParseInt(frac+strings.Repeat("0", max(0, 9-len(frac))), 10, 64)
		if err1 != nil || err2 != nil || len(frac) > 9 || s > 1<<40 || ns < 0 {
			return t, "", "", true, fmt.Errorf("time %q is not seconds.microseconds since 1970", ts+"]")
		}
		t = time.Unix(s, ns).UTC()
		rest = strings.TrimSpace(after)
	}
	tag, after, found := strings.Cut(rest, "]")
	if !found || !strings.HasPrefix(tag, "[") || !conntrackEvents[tag[1:]] {
		return t, "", "", false, nil
	}
	return t, tag[1:], strings.TrimSpace(after), true, nil
}

// conntrackEventLine reads one event.
func conntrackEventLine(line string) (model.ConntrackEntry, error) {
	t, event, rest, ok, err := conntrackEventHead(line)
	if err != nil {
		return model.ConntrackEntry{}, err
	}
	if !ok {
		return model.ConntrackEntry{}, fmt.Errorf("expected a conntrack event (\"[NEW] tcp 6 120 SYN_SENT src=10.0.0.1 dst=10.0.0.2 sport=40000 dport=80 [UNREPLIED] src=...\")")
	}
	c, err := conntrackLine(strings.Fields(rest))
	if err != nil {
		return c, fmt.Errorf("[%s] event: %w", event, err)
	}
	c.Event, c.Time = event, t
	return c, nil
}

// sniffConntrackEvents counts lines that start as events with a protocol
// conntrack knows: an event whose addresses were replaced by words is
// still an event, read with an error at its line.
func sniffConntrackEvents(_ string, head []byte) int {
	matched, total, _ := text.SniffLines(head, 200, func(cmd string) bool {
		return text.Program(cmd) == "conntrack" && strings.Contains(cmd, "-E")
	}, func(line string) text.Match {
		if strings.HasPrefix(line, "conntrack v") {
			return text.Skip
		}
		_, _, rest, ok, err := conntrackEventHead(line)
		if !ok || err != nil {
			return text.Miss
		}
		f := strings.Fields(rest)
		if len(f) >= 2 && f[0] == "ipv4" || len(f) >= 2 && f[0] == "ipv6" {
			f = f[2:]
		}
		if len(f) >= 2 {
			if num, known := conntrackProtos[f[0]]; known && (num == "" || f[1] == num) {
				return text.Hit
			}
		}
		return text.Miss
	})
	return min(text.RatioScore(matched, total, 95), 95)
}
