package netfilter

import (
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// statsListNames are the counters conntrack-tools 1.4.4 prints one a line
// ("entries\t\t87", "insert_failed\t\t0") when it reads
// /proc/net/stat/nf_conntrack for `conntrack -S`: the sum over the CPUs.
var statsListNames = map[string]bool{
	"entries": true, "searched": true, "found": true, "new": true, "invalid": true, "ignore": true,
	"delete": true, "delete_list": true, "insert": true, "insert_failed": true, "drop": true,
	"early_drop": true, "icmp_error": true, "error": true, "expect_new": true, "expect_create": true,
	"expect_delete": true, "search_restart": true, "clash_resolve": true, "chaintoolong": true,
}

// statsListErrRe is the error conntrack-tools prints after the list when
// it may not read the kernel's per-CPU counters, and kubectl exec's exit.
var statsListErrRe = lazyre.New(`^(?:conntrack v[0-9.]+ \(conntrack-tools\): |command terminated with exit code )`)

// statsList is the one record of a counters list being read.
type statsList struct {
	cur int // the record's index in the output, -1 before the first line
}

// line reads one "name value" line of the list; ok is false for a line
// of another shape.
func (s *statsList) line(l *text.Line, f []string, out *[]model.ConntrackStats) bool {
	if statsListErrRe.MatchString(l.Trimmed) {
		return true // the tool's own complaint, not a counter
	}
	if len(f) != 2 || !statsListNames[f[0]] {
		return false
	}
	n, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return false
	}
	name := f[0]
	if name == "icmp_error" {
		name = "error"
	}
	if s.cur < 0 || hasKey((*out)[s.cur].Counters, name) {
		// A new list; CPU -1: the sum over all CPUs.
		*out = append(*out, model.ConntrackStats{Node: l.Node, CPU: -1, Counters: map[string]uint64{}, Pos: l.Pos()})
		s.cur = len(*out) - 1
	}
	(*out)[s.cur].Counters[name] = n
	return true
}

func hasKey(m map[string]uint64, k string) bool {
	_, ok := m[k]
	return ok
}

// sniffStatsList reports whether line is a counter of the list.
func sniffStatsList(line string) bool {
	f := strings.Fields(line)
	if len(f) != 2 || !statsListNames[f[0]] {
		return false
	}
	_, err := strconv.ParseUint(f[1], 10, 64)
	return err == nil
}
