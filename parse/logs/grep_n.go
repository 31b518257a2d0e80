package logs

import (
	"bufio"
	"context"
	"io"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// GrepLogFormat reads log lines as grep prints them with their line
// numbers: "735491:E0112 09:36:32.221463 ..." (grep -n), "kube-proxy.log:
// 735491:E0112 ..." (grep -Hn, grep -rn), and "NNN-" for grep -C's
// context lines.
var GrepLogFormat = &format.Format{
	Name:    "grep-n-log",
	Kind:    model.KindLogs,
	Command: "grep -n PATTERN /var/log/kube-proxy.log (also grep -Hn, grep -rn, grep -n -C N)",
	Doc: "the log lines of any shape the log formats read, after grep's `[FILE:]NNN:` (or `NNN-` for context lines); " +
		"the prefix is dropped and the line read as the log formats read it, at its line in the pasted file; the " +
		"source is the component the first file named is named after (kube-proxy.log), else the pasted file's; " +
		"grep's `--` group separators, and numbered lines that are no log line (the lines of a multi-line entry " +
		"grep picked without its head), are skipped",
	Sniff: sniffGrepLog,
	Parse: parseGrepLog,
}

// grepPrefixRe matches grep's prefix: an optional file name and the line
// number, followed by ":" for a matching line and "-" for a context line.
var grepPrefixRe = lazyre.New(`^(?:([^\s:]+)[:-])?(\d{1,10})[:-]`)

// cutGrepPrefix returns the line grep prefixed, and the file it names
// ("" when none); ok is false when line has no prefix of a line number
// followed by a line of a log shape.
func cutGrepPrefix(lr *logReader, line string) (inner, file string, ok bool) {
	m := grepPrefixRe.FindStringSubmatch(line)
	if m == nil {
		return "", "", false
	}
	inner = line[len(m[0]):]
	if _, _, ok := lr.parseLine(inner); !ok {
		if _, ok := lr.unwrap(strings.TrimLeft(inner, " \t")); !ok {
			return "", "", false
		}
	}
	return inner, m[1], true
}

// sniffGrepLog scores head by the share of its lines that are grep's
// numbered lines, when they are not log lines of their own and most of
// them are log lines after the prefix.
func sniffGrepLog(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	var lr logReader
	matched, other, total := 0, 0, 0
	for _, line := range text.HeadLines(head, 200) {
		t := strings.TrimSpace(line)
		if t == "" || t == "--" || text.IsPromptOrMarker(line) {
			continue
		}
		if _, _, ok := text.ShellCommand(line); ok {
			continue
		}
		total++
		if _, _, ok := lr.parseLine(line); ok {
			continue
		}
		if _, _, ok := cutGrepPrefix(&lr, line); ok {
			matched++
		} else if grepPrefixRe.MatchString(line) {
			other++
		}
	}
	// Numbered lines of no log shape (lines of a multi-line entry) are
	// grep's too, but fewer than its log lines.
	if matched < other {
		return 0
	}
	return text.RatioScore(matched+other, total, 92)
}

func parseGrepLog(ctx context.Context, r io.Reader, src *format.File, snap *model.Snapshot) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	cmd := src.Command
	if cmd == "" {
		// The first file grep names gives the lines' source.
		head, _ := br.Peek(8 << 10)
		var lr logReader
		for _, line := range text.HeadLines(head, 50) {
			if _, file, ok := cutGrepPrefix(&lr, line); ok {
				if file != "" {
					cmd = "grep -n . " + file
				}
				break
			}
		}
	}
	var errs model.ErrorList
	lr := newLogReader(src.Name, src.Node, cmd, &errs)
	lr.read(ctx, &grepStripper{br: br, lr: &logReader{}})
	snap.Logs = append(snap.Logs, lr.events...)
	src.Count("events", len(lr.events))
	return len(lr.events), errs.Err()
}

// grepStripper gives the lines of br with grep's prefix dropped, one line
// for each, so that the positions stay those of the pasted file; grep's
// "--" separators and numbered lines of no log shape become empty lines.
type grepStripper struct {
	br  *bufio.Reader
	lr  *logReader // for cutGrepPrefix's shape checks only
	buf string
	err error
}

func (g *grepStripper) Read(p []byte) (int, error) {
	for g.buf == "" {
		if g.err != nil {
			return 0, g.err
		}
		line, err := g.br.ReadString('\n')
		g.err = err
		if line == "" {
			continue
		}
		body, nl := strings.CutSuffix(line, "\n")
		switch inner, _, ok := cutGrepPrefix(g.lr, strings.TrimSuffix(body, "\r")); {
		case ok:
			body = inner
		case strings.TrimSpace(body) == "--" || grepPrefixRe.MatchString(body):
			// A separator, or a line of a multi-line entry (kube-proxy's
			// iptables-restore input) that grep picked without its head.
			body = ""
		}
		if nl {
			body += "\n"
		}
		g.buf = body
		if g.buf == "" {
			g.buf = "\n"
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}
