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

// ConntrackStatsFormat reads connection tracking counters: conntrack -S
// and /proc/net/stat/nf_conntrack.
var ConntrackStatsFormat = &format.Format{
	Name:    "conntrack-stats",
	Kind:    model.KindConntrack,
	Command: "conntrack -S (also conntrack-tools 1.4.4's one counter a line), cat /proc/net/stat/nf_conntrack",
	Doc: "one record per CPU with every counter the kernel has (found, insert, insert_failed, " +
		"drop, early_drop, clash_resolve, search_restart ...; older kernels' searched, new, " +
		"delete); the /proc table's hexadecimal values read, its names mapped to conntrack -S's " +
		"(clashres is clash_resolve, icmp_error is error, chainlength is chaintoolong), its " +
		"entries column kept; conntrack-tools 1.4.4's list of counters summed over the CPUs is one " +
		"record with cpu -1. `conntrack-drops` reads them",
	Sniff: sniffConntrackStats,
	Parse: format.Records(readConntrackStats, func(s *model.Snapshot, out []model.ConntrackStats) {
		s.ConntrackStats = append(s.ConntrackStats, out...)
	}, "cpus"),
}

// ConntrackStats parses connection tracking counters, one record per CPU:
//
//   - conntrack -S: "cpu=0 found=0 invalid=0 insert=0 insert_failed=0
//     drop=0 early_drop=0 error=0 search_restart=0 clash_resolve=0
//     chaintoolong=0", with whatever counters the kernel has (older ones
//     add searched, new, ignore, delete, delete_list);
//   - conntrack-tools 1.4.4's conntrack -S: one counter a line
//     ("insert_failed\t\t0"), the sum over the CPUs, one record with CPU
//     -1 (the tool's complaint after it is passed over);
//   - /proc/net/stat/nf_conntrack: a header of counter names ("entries
//     clashres found new invalid ...") and one row of hexadecimal values
//     per CPU, the names mapped to conntrack -S's.
//
// Shell prompts name the node of the lines below them, and so do node
// markers. A line that is none of these is reported with its position and
// the rest is read. name is used only in positions.
func ConntrackStats(r io.Reader, name string) ([]model.ConntrackStats, error) {
	return format.ReadAll(r, name, readConntrackStats)
}

// procStatNames maps the column names of /proc/net/stat/nf_conntrack to
// conntrack -S's.
var procStatNames = map[string]string{"clashres": "clash_resolve", "icmp_error": "error", "chainlength": "chaintoolong"}

func readConntrackStats(r io.Reader, src *format.File, errs *model.ErrorList) []model.ConntrackStats {
	var out []model.ConntrackStats
	var header []string // the /proc table's column names, once its header is read
	cpu := 0
	list := statsList{cur: -1} // conntrack-tools 1.4.4's one record
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(*text.Line, string) { header, cpu, list.cur = nil, 0, -1 }}, func(l *text.Line) {
		f := l.Fields()
		switch {
		case list.line(l, f, &out):
		case strings.HasPrefix(f[0], "cpu="):
			st, err := conntrackSLine(f)
			if l.Syntax(err) {
				st.Node, st.Pos = l.Node, l.Pos()
				out = append(out, st)
			}
		case f[0] == "entries":
			header, cpu = f, 0
			for i, h := range header {
				if m, ok := procStatNames[h]; ok {
					header[i] = m
				}
			}
		case header != nil:
			if st, ok := procStatRow(l, header, f); ok {
				st.CPU = cpu
				out = append(out, st)
				cpu++
			}
		default:
			l.Errorf("%w: expected conntrack -S counters (\"cpu=0 found=0 ... insert_failed=0 drop=0 ...\") or the /proc/net/stat/nf_conntrack table", format.ErrSyntax)
		}
	})
	return out
}

// procStatRow reads one CPU's row of /proc/net/stat/nf_conntrack, whose
// columns header names.
func procStatRow(l *text.Line, header, f []string) (model.ConntrackStats, bool) {
	if len(f) != len(header) {
		l.Errorf("%w: %d values for the %d columns of the header", format.ErrSyntax, len(f), len(header))
		return model.ConntrackStats{}, false
	}
	st := model.ConntrackStats{Node: l.Node, Counters: map[string]uint64{}, Pos: l.Pos()}
	for i, v := range f {
		n, err := strconv.ParseUint(v, 16, 64)
		if err != nil {
			l.Errorf("%w: %s %q is not a hexadecimal counter", format.ErrSyntax, header[i], v)
			return model.ConntrackStats{}, false
		}
		st.Counters[header[i]] = n
	}
	return st, true
}

// conntrackSLine reads "cpu=N name=value ...".
func conntrackSLine(f []string) (model.ConntrackStats, error) {
	st := model.ConntrackStats{Counters: map[string]uint64{}}
	for i, w := range f {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return st, fmt.Errorf("expected name=value, got %q", w)
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return st, fmt.Errorf("%s=%q is not a count", k, v)
		}
		if i == 0 {
			st.CPU = int(n)
			continue
		}
		st.Counters[k] = n
	}
	return st, nil
}

func sniffConntrackStats(_ string, head []byte) int {
	header, listed := false, false
	matched, total, _ := text.SniffLines(head, 100, func(cmd string) bool {
		return text.Program(cmd) == "conntrack" && strings.Contains(cmd, "-S") || strings.Contains(cmd, "stat/nf_conntrack")
	}, func(line string) text.Match {
		f := strings.Fields(line)
		switch {
		case sniffStatsList(line):
			listed = listed || f[0] == "insert_failed"
			return text.Hit
		case statsListErrRe.MatchString(strings.TrimSpace(line)):
			return text.Skip
		case len(f) > 2 && strings.HasPrefix(f[0], "cpu=") && strings.Contains(line, "insert_failed="):
			if _, err := conntrackSLine(f); err == nil {
				return text.Hit
			}
		case len(f) > 2 && f[0] == "entries" && strings.Contains(line, "insert_failed"):
			header = true
			return text.Hit
		case header && len(f) > 2 && len(f[0]) == 8:
			if _, err := strconv.ParseUint(f[0], 16, 64); err == nil {
				return text.Hit
			}
		}
		return text.Miss
	})
	if !header && !listed && matched > 0 && !hasCPULine(head) {
		return 0 // a few "name value" lines without insert_failed
	}
	return min(text.RatioScore(matched, total, 95), 95)
}

// hasCPULine reports whether head holds a conntrack -S "cpu=" line.
func hasCPULine(head []byte) bool {
	return strings.Contains(string(head), "cpu=") && strings.Contains(string(head), "insert_failed=")
}
