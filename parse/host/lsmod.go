package host

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// LsmodFormat reads listings of the loaded kernel modules.
var LsmodFormat = &format.Format{
	Name:    "lsmod",
	Kind:    model.KindSysctl,
	Command: "lsmod, lsmod | grep MODULE",
	Doc: "one record per listing: the modules listed (name, size, users), and the grep's pattern when the " +
		"listing is grepped; a grep below its prompt that printed nothing (or the `(empty)` a ticket writes for " +
		"it) is a record of no module: the module is not loaded",
	Sniff: sniffLsmod,
	Parse: format.Records(readLsmod, func(s *model.Snapshot, out []model.KernelModules) {
		s.KernelModules = append(s.KernelModules, out...)
	}, "listings"),
}

// Lsmod parses lsmod's output. A line that is not a module is reported
// with its position and the rest is read. name is used only in positions.
func Lsmod(r io.Reader, name string) ([]model.KernelModules, error) {
	return format.ReadAll(r, name, readLsmod)
}

// lsmodCmd reads a command that lists modules: whether it is one, and the
// pattern of the grep that filters it.
func lsmodCmd(cmd string) (pattern string, ok bool) {
	parts := strings.Split(cmd, "|")
	if text.Program(parts[0]) != "lsmod" {
		return "", false
	}
	for _, part := range parts[1:] {
		f := strings.Fields(part)
		if len(f) == 0 || f[0] != "grep" && f[0] != "egrep" {
			continue
		}
		for _, a := range f[1:] {
			if !strings.HasPrefix(a, "-") {
				pattern = strings.Trim(a, `'"`)
			}
		}
	}
	return pattern, true
}

// lsmodLine reads a module line: "br_netfilter 32768 0" (and its users).
func lsmodLine(line string) (string, bool) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return "", false
	}
	if _, err := strconv.ParseUint(f[1], 10, 64); err != nil {
		return "", false
	}
	if _, err := strconv.Atoi(f[2]); err != nil {
		return "", false
	}
	return f[0], true
}

func readLsmod(r io.Reader, src *format.File, errs *model.ErrorList) []model.KernelModules {
	var out []model.KernelModules
	var cur *model.KernelModules
	start := func(l *text.Line, cmd, pattern string) {
		out = append(out, model.KernelModules{Node: l.Node, Command: cmd, Pattern: pattern, Loaded: []string{}, Pos: l.Pos()})
		cur = &out[len(out)-1]
	}
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(l *text.Line, cmd string) {
		cur = nil
		if pattern, ok := lsmodCmd(cmd); ok {
			start(l, cmd, pattern)
		}
	}}, func(l *text.Line) {
		switch {
		case strings.HasPrefix(l.Trimmed, "Module ") && strings.Contains(l.Trimmed, "Used by"):
			if cur == nil {
				start(l, "lsmod", "")
			}
			return
		case l.Trimmed == "(empty)" && cur != nil:
			return // the ticket's word for a grep that printed nothing
		}
		name, ok := lsmodLine(l.Trimmed)
		if !ok {
			l.Syntax(fmt.Errorf("expected a module line (\"br_netfilter 32768 0\"), got %q", l.Trimmed))
			return
		}
		if cur == nil {
			start(l, "lsmod", "")
		}
		cur.Loaded = append(cur.Loaded, name)
	})
	return out
}

func sniffLsmod(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	for _, line := range text.HeadLines(head, 200) {
		if _, cmd, ok := text.Prompt(line); ok {
			if _, ok := lsmodCmd(cmd); ok {
				return 95
			}
			continue
		}
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "Module ") && strings.Contains(t, "Size") && strings.Contains(t, "Used by") {
			return 95
		}
	}
	return 0
}
