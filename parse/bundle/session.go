package bundle

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// maxSessionBytes bounds a terminal session read whole: sessions are pasted
// by hand.
const maxSessionBytes = 32 << 20

// SessionFormat returns the format of pasted terminal sessions: several
// commands with their output, each output read by the one of formats that
// recognizes it (formats should hold neither the session format nor binary
// captures).
func SessionFormat(formats []*format.Format) *format.Format {
	s := session{formats: formats}
	return &format.Format{
		Name: "terminal-session",
		Kind: model.KindSession, // each command's output is an input of its own
		Command: "a pasted terminal session: several commands of different programs (kubectl, cat, ip, ss " +
			"...) with their output, one after the other, as tickets carry them; bash (user@host:~#, " +
			"[user@host ~]$), zsh (user@host dir %) and bare $ prompts",
		Doc: "split at its prompts; each command's output is read by the format that recognizes it " +
			"(the command's program breaking ties, without the prompt line unless only the prompt " +
			"makes it recognizable), with the file's own line numbers, the prompt's host as the node," +
			" and listed as an input of its own (`file:LINE`, its format and kind) so that rules see " +
			"what it holds; output no format reads (nslookup, an editor's message) is counted as " +
			"\"commands not read\". A file whose commands are all read by one format (iptables listings" +
			" of several commands, one program's outputs) is read whole by that format",
		Sniff: s.sniff,
		Parse: s.parse,
	}
}

// session reads terminal sessions with formats.
type session struct {
	formats []*format.Format
}

// sessionCommand is one command of a session: its prompt line and the lines
// of output up to the next prompt (0-based, end exclusive).
type sessionCommand struct {
	host, cmd  string
	start, end int
}

// sessionPrompt recognizes the prompt of a command in a session: bash's and
// zsh's "user@host" prompts, a bare "$ " and BusyBox ash's "/ # ". Comment lines ("# ...") are not
// prompts here: in a session they are as often part of the output (YAML,
// shell scripts).
func sessionPrompt(line string) (host, cmd string, ok bool) {
	if host, cmd, ok := text.HostPrompt(line); ok {
		return host, cmd, true
	}
	if rest, found := strings.CutPrefix(line, "$ "); found {
		return "", strings.TrimSpace(rest), true
	}
	if cmd, ok := text.PathPrompt(line); ok && cmd != "" {
		return "", cmd, true
	}
	return "", "", false
}

func sessionCommands(lines []string) []sessionCommand {
	var out []sessionCommand
	for i, l := range lines {
		if host, cmd, ok := sessionPrompt(l); ok {
			if n := len(out); n > 0 {
				out[n-1].end = i
			}
			out = append(out, sessionCommand{host: host, cmd: cmd, start: i, end: len(lines)})
		}
	}
	return out
}

// sniff claims text holding the commands of at least two programs
// (kubectl and cat, ss and netstat ...), each followed by its output: no
// single format reads it, each command's output is read by its own.
func (s session) sniff(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	lines := text.HeadLines(head, 1000)
	progs := map[string]bool{}
	withOutput := 0
	for _, c := range sessionCommands(lines) {
		if p := text.Program(c.cmd); p != "" {
			progs[p] = true
		}
		if c.end-c.start > 1 {
			withOutput++
		}
	}
	if len(progs) < 2 || withOutput < 2 {
		return 0
	}
	// The commands' outputs must be of different formats; netfilter
	// listings of several commands are read whole by their own parser.
	formats := map[string]bool{}
	netfilterOnly := true
	for _, c := range sessionCommands(lines) {
		if f, _ := s.formatFor(lines, c); f != nil {
			formats[f.Name] = true
			netfilterOnly = netfilterOnly && f.Kind == model.KindNetfilter
		}
	}
	if len(formats) < 2 || netfilterOnly {
		return 0
	}
	// Above the formats that find their own lines among the others (a
	// kubectl YAML, a table between other commands' output, a table
	// before a curl's error): they would read one command and stumble on
	// the rest.
	return 97
}

// parse splits a terminal session at its prompts and reads each
// command's output with the format that recognizes it (the command's
// program breaking ties, as a bundle layout's command does), with the
// positions of the whole file. Output that no format recognizes (nslookup,
// an editor's message) is passed over and counted.
func (s session) parse(ctx context.Context, r io.Reader, src *format.File, snap *model.Snapshot) (int, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSessionBytes+1))
	if err != nil {
		return 0, fmt.Errorf("%w", err)
	}
	if len(b) > maxSessionBytes {
		return 0, model.Errorf(model.Pos{File: src.Name}, "", "%w: a terminal session of more than %d MiB", ErrLimit, maxSessionBytes>>20)
	}
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	var errs model.ErrorList
	records := 0
	for _, c := range sessionCommands(lines) {
		if ctx.Err() != nil {
			errs = append(errs, model.Stopped(src.Pos(c.start+1), ctx.Err()))
			break
		}
		f, from := s.formatFor(lines, c)
		if f == nil {
			src.Count("commands not read", 1)
			continue
		}
		node := src.Node
		if node == "" && !text.ClusterClient(c.cmd) {
			node = c.host // the prompt names the host, as in the other parsers
			if h := sshHost(c.cmd); h != "" {
				node = h
			}
		}
		sub := &format.File{Name: src.Name, Node: node, Command: c.cmd, Format: f.Name,
			Summary: src.Summary, EachAttempt: src.EachAttempt, LendAttempts: src.LendAttempts, EachRow: src.EachRow}
		body := []byte(strings.Join(lines[from:c.end], "\n") + "\n")
		n, perr := f.Parse(ctx, text.NewSectionReader(from, body), sub, snap)
		var list model.ErrorList
		list.Append(perr)
		errs = append(errs, list...)
		records += n
		src.Count(f.Name, 1)
		// Each command's output is evidence of its own kind: listed as an
		// input at the command's line, so that rules see the kinds read.
		snap.Inputs = append(snap.Inputs, model.Input{Path: src.Pos(c.start + 1).String(), Format: sub.Format, Kind: f.Kind,
			Node: node, Command: c.cmd, Records: n, Warnings: len(list), Details: sub.Details})
	}
	return records, errs.Err()
}

// formatFor picks the format of one command's output, trying it
// without and with the prompt line (others want the output alone; some
// parsers recognize output by its prompt), and returns the line (0-based)
// the text to parse starts at.
func (s session) formatFor(lines []string, c sessionCommand) (*format.Format, int) {
	prog := text.Program(c.cmd)
	var best *format.Format
	bestScore, bestFrom := 0, c.start
	// Without the prompt line first: on a tie the output alone is parsed
	// (the command reaches the parser as File.Command anyway).
	for _, from := range []int{c.start + 1, c.start} {
		if from >= c.end || bestScore >= 80 {
			continue // recognized without the prompt: no need to try with it
		}
		head := sectionHead(lines[from:c.end])
		func() {
			// Let go of even when a sniffer panics (runParser
			// recovers).
			defer text.ShareHead(head)()
			for _, f := range s.formats {
				sc := f.Sniff("", head)
				if sc <= 0 {
					continue
				}
				if prog != "" && text.Program(f.Command) == prog {
					sc += layoutCommandBonus
				}
				if sc > bestScore {
					best, bestScore, bestFrom = f, sc, from
				}
			}
		}()
	}
	return best, bestFrom
}

// sectionHead is the start of a section's text, as much as a sniffer sees of
// a file.
func sectionHead(lines []string) []byte {
	var b []byte
	for _, l := range lines {
		if len(b)+len(l)+1 > text.HeadSize {
			break
		}
		b = append(b, l...)
		b = append(b, '\n')
	}
	return b
}

// sshHost returns the host of "ssh [-opts] [user@]host command", "" for
// another command.
func sshHost(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) < 3 || path.Base(f[0]) != "ssh" {
		return ""
	}
	for i := 1; i < len(f); i++ {
		w := f[i]
		if strings.HasPrefix(w, "-") {
			if len(w) == 2 && strings.ContainsRune("bcDEeFIiJLlmOopQRSWw", rune(w[1])) {
				i++ // the option's argument
			}
			continue
		}
		if _, host, ok := strings.Cut(w, "@"); ok {
			return host
		}
		return w
	}
	return ""
}
