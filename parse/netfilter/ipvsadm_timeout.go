package netfilter

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// IPVSTimeoutFormat reads IPVS's connection timeouts.
var IPVSTimeoutFormat = &format.Format{
	Name:    "ipvsadm-timeout",
	Kind:    model.KindIPVS,
	Command: "ipvsadm -l --timeout",
	Doc: "the `Timeout (tcp tcpfin udp): 900 120 300` line, in seconds, one per node; the command line above " +
		"it, with or without a shell prompt, is skipped",
	Sniff: sniffIPVSTimeout,
	Parse: format.Records(readIPVSTimeouts, func(s *model.Snapshot, out []model.IPVSTimeouts) {
		s.IPVSTimeouts = append(s.IPVSTimeouts, out...)
	}, "timeouts"),
}

// IPVSTimeouts parses the output of ipvsadm -l --timeout. A line that is
// neither the timeouts nor the command is reported with its position and
// the rest is read. name is used only in positions.
func IPVSTimeouts(r io.Reader, name string) ([]model.IPVSTimeouts, error) {
	return format.ReadAll(r, name, readIPVSTimeouts)
}

const ipvsTimeoutHead = "Timeout (tcp tcpfin udp):"

// ipvsTimeoutCmd reports whether line is an ipvsadm command printing the
// timeouts, pasted without its prompt.
func ipvsTimeoutCmd(line string) bool {
	f := strings.Fields(line)
	for len(f) > 0 && f[0] == "sudo" {
		f = f[1:]
	}
	return len(f) > 1 && (f[0] == "ipvsadm" || strings.HasSuffix(f[0], "/ipvsadm")) && strings.Contains(line, "--timeout")
}

// ipvsTimeoutLine reads the timeouts line.
func ipvsTimeoutLine(line string) (model.IPVSTimeouts, error) {
	var t model.IPVSTimeouts
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), ipvsTimeoutHead)
	if !ok {
		return t, fmt.Errorf("expected %q and three numbers, got %q", ipvsTimeoutHead+" 900 120 300", line)
	}
	f := strings.Fields(rest)
	if len(f) != 3 {
		return t, fmt.Errorf("expected three timeouts (tcp tcpfin udp), got %q", rest)
	}
	var n [3]int
	for i, v := range f {
		x, err := strconv.Atoi(v)
		if err != nil || x < 0 {
			return t, fmt.Errorf("timeout %q is not a number of seconds", v)
		}
		n[i] = x
	}
	t.TCP, t.TCPFin, t.UDP = n[0], n[1], n[2]
	return t, nil
}

func readIPVSTimeouts(r io.Reader, src *format.File, errs *model.ErrorList) []model.IPVSTimeouts {
	var out []model.IPVSTimeouts
	text.ReadLines(r, src, errs, text.Hooks{}, func(l *text.Line) {
		if ipvsTimeoutCmd(l.Trimmed) {
			return
		}
		t, err := ipvsTimeoutLine(l.Trimmed)
		if l.Syntax(err) {
			t.Node, t.Pos = l.Node, l.Pos()
			out = append(out, t)
		}
	})
	return out
}

func sniffIPVSTimeout(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	found, other := 0, 0
	for _, line := range text.HeadLines(head, 200) {
		t := strings.TrimSpace(line)
		if t == "" || ipvsTimeoutCmd(t) {
			continue
		}
		if _, ok := text.NodeMarker(line); ok {
			continue
		}
		if _, _, ok := text.Prompt(line); ok {
			continue
		}
		if _, err := ipvsTimeoutLine(t); err == nil {
			found++
			continue
		}
		other++
	}
	if found == 0 || other > found {
		return 0
	}
	return 99
}
