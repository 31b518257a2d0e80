package host

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// NstatFormat reads the kernel's counters as nstat prints them.
var NstatFormat = &format.Format{
	Name:    "nstat",
	Kind:    model.KindCounters,
	Command: "nstat -az (also nstat -a, nstat's increments since it last ran, and either with counter names: nstat -az TcpExtIPReversePathFilter)",
	Doc: "one record per counter with its name (TcpExtIPReversePathFilter, IpInReceives ...) and value: the " +
		"absolute value with -a, the increase since nstat last ran without it; the rate column is not kept; " +
		"prompts and banners name the node. netstat -s is not this format",
	Sniff: sniffNstat,
	Parse: format.Records(readNstat, func(s *model.Snapshot, out []model.Counter) { s.Counters = append(s.Counters, out...) }, "counters"),
}

// Nstat parses nstat output: a "#kernel" header, then one "Name value
// rate" line per counter. A line that is not a counter is reported with
// its position and the rest is read. name is used only in positions.
func Nstat(r io.Reader, name string) ([]model.Counter, error) {
	return format.ReadAll(r, name, readNstat)
}

// nstatLineRe matches a counter line: the name, its value and the rate
// nstat computes from its history (absent from some versions' output).
var nstatLineRe = lazyre.New(`^([A-Z][A-Za-z0-9_]*)\s+(\d+)(?:\s+\d+(?:\.\d+)?)?$`)

// nstatPrefixes are the MIB prefixes of the counters nstat prints, from
// /proc/net/snmp, /proc/net/snmp6, /proc/net/netstat and /proc/net/sctp/snmp.
var nstatPrefixes = []string{"Ip", "Icmp", "Tcp", "Udp", "Sctp", "MPTcp", "Tls", "Xfrm", "Trans"}

func readNstat(r io.Reader, src *format.File, errs *model.ErrorList) []model.Counter {
	var out []model.Counter
	// The "#kernel" header reads as a root prompt and is not handed over.
	text.ReadLines(r, src, errs, text.Hooks{}, func(l *text.Line) {
		m := nstatLineRe.FindStringSubmatch(l.Trimmed)
		if m == nil {
			l.Syntax(fmt.Errorf("expected a counter line (\"TcpExtIPReversePathFilter 7 0.0\") or #kernel, got %q", l.Trimmed))
			return
		}
		v, err := strconv.ParseUint(m[2], 10, 64)
		if !l.Syntax(err) {
			return
		}
		out = append(out, model.Counter{Node: l.Node, Name: m[1], Value: v, Pos: l.Pos()})
	})
	return out
}

// nstatCounter reports whether line is a counter line whose name starts
// with a MIB prefix nstat prints.
func nstatCounter(line string) bool {
	m := nstatLineRe.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	for _, p := range nstatPrefixes {
		if strings.HasPrefix(m[1], p) {
			return true
		}
	}
	return false
}

func sniffNstat(_ string, head []byte) int {
	header := false
	// nstat's "#kernel" header reads as a root prompt running "kernel".
	matched, total, _ := text.SniffLines(head, 200, func(cmd string) bool {
		if cmd == "kernel" {
			header = true
			return true
		}
		return text.Program(cmd) == "nstat"
	}, func(line string) text.Match {
		if nstatCounter(strings.TrimSpace(line)) {
			return text.Hit
		}
		return text.Miss
	})
	// Without its header, a listing needs several counters to be told
	// from other name-and-number tables.
	if matched == 0 || (!header && matched < 3) {
		return 0
	}
	return min(text.RatioScore(matched, total, 96), 96)
}
