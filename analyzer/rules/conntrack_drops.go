package rules

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// ConntrackDrops finds nodes whose connection tracking drops packets.
var ConntrackDrops = &analyzer.Rule{
	Name:     "conntrack-drops",
	Severity: analyzer.Error,
	NeedsAny: []model.Kind{model.KindConntrack, model.KindLogs},
	Uses:     []model.Kind{model.KindSysctl},
	Run:      runConntrackDrops,
	Doc: `connection tracking drops packets on a node

Every connection through kube-proxy's NAT gets a conntrack entry. Its
counters (conntrack -S, /proc/net/stat/nf_conntrack, per CPU) tell two ways
it drops packets:

- insert_failed: two packets of one new UDP flow, sent at once, went
  through DNAT on two CPUs; both made an entry and the second could not be
  inserted, so its packet was dropped. glibc sends the A and AAAA queries of
  one lookup that way, so DNS lookups through the kube-dns Service time out
  after the resolver's 5 seconds, now and then. Kernels from 5.0 resolve
  most such clashes instead (clash_resolve, which is harmless).
- drop and early_drop: the table was full (nf_conntrack_max); the kernel
  evicted entries not yet confirmed (early_drop) and, when it could not,
  dropped the new connection's packet (drop). Every kind of new connection
  fails then.

Evidence: the counters per CPU; the kernel's "nf_conntrack: table full,
dropping packet" lines (dmesg, journalctl -k); net.netfilter.nf_conntrack_max
from sysctl output; log lines of DNS lookups timing out.

Severity: error when two kinds of evidence agree: a full table's drops in
the counters and the kernel's log or nf_conntrack_max, insert failures and
DNS timeouts in the logs; warning from one alone, and for early drops
without drops.

Fix: for insert failures, "options single-request-reopen" in the Pods'
resolv.conf (spec.dnsConfig), NodeLocal DNSCache (DNS then bypasses the
DNAT), or a 5.x kernel; for a full table, raise nf_conntrack_max
(kube-proxy's conntrack.maxPerCore) or find what opens so many connections.`,
}

func runConntrackDrops(p *analyzer.Pass) error {
	s := p.Snap
	type group struct {
		node, file string
		sum        map[string]uint64
		cpus       []*model.ConntrackStats
		entries    uint64
	}
	var groups []*group
	byKey := map[string]*group{}
	for i := range s.ConntrackStats {
		st := &s.ConntrackStats[i]
		k := st.Node + "|" + st.Pos.File
		g := byKey[k]
		if g == nil {
			g = &group{node: st.Node, file: st.Pos.File, sum: map[string]uint64{}}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.cpus = append(g.cpus, st)
		for name, v := range st.Counters {
			if name == "entries" { // the table's size, on every row
				g.entries = max(g.entries, v)
				continue
			}
			g.sum[name] += v
		}
	}
	dnsN, dnsEv := dnsTimeouts(s)
	full := tableFullLines(s)
	for _, g := range groups {
		where := "this node"
		if g.node != "" {
			where = g.node
		}
		// CPUs whose counter is not zero, cited line by line.
		cite := func(counter string) []analyzer.Evidence {
			var ev []analyzer.Evidence
			for _, c := range g.cpus {
				if v := c.Counters[counter]; v > 0 && len(ev) < 8 {
					ev = append(ev, analyzer.Evidence{Pos: c.Pos, Note: fmt.Sprintf("cpu %d: %s=%d", c.CPU, counter, v)})
				}
			}
			return ev
		}
		facts := func() map[string]any {
			f := map[string]any{"cpus": len(g.cpus)}
			for _, k := range []string{"insert_failed", "drop", "early_drop", "clash_resolve", "search_restart"} {
				if v, ok := g.sum[k]; ok {
					f[k] = v
				}
			}
			if g.node != "" {
				f["node"] = g.node
			}
			return f
		}
		if failed := g.sum["insert_failed"]; failed > 0 {
			f := analyzer.Finding{Severity: analyzer.Warning, Facts: facts(), Evidence: cite("insert_failed"), Sources: []model.Kind{model.KindConntrack}}
			f.Title = fmt.Sprintf("conntrack failed %d %s on %s: racing packets of new connections were dropped", failed,
				plural(int(failed), "insert", "inserts"), where)
			f.Summary = fmt.Sprintf("The conntrack counters of %d %s show insert_failed=%d: packets sent at once for one new "+
				"flow went through NAT on two CPUs and the second was dropped. DNS lookups through the kube-dns Service are "+
				"the usual victims (glibc sends A and AAAA at once), and wait for the resolver's 5 s timeout.",
				len(g.cpus), plural(len(g.cpus), "CPU", "CPUs"), failed)
			if dnsN > 0 {
				f.Severity = analyzer.Error
				f.Facts["dns_timeouts"] = dnsN
				f.Evidence = append(f.Evidence, dnsEv...)
				f.Sources = append(f.Sources, model.KindLogs)
				f.Summary += fmt.Sprintf(" The logs show %d DNS %s timing out.", dnsN, plural(dnsN, "lookup", "lookups"))
			}
			f.Cause = "A race in the kernel's connection tracking: two packets of one new UDP flow create two entries, and " +
				"the second cannot be inserted (kernels before 5.0; later ones mostly resolve the clash, counted as clash_resolve)."
			f.Fix = "Add \"options single-request-reopen\" to the Pods' resolv.conf (spec.dnsConfig.options), run NodeLocal " +
				"DNSCache so DNS does not go through the kube-dns DNAT, or move the node to a 5.x kernel."
			p.Report(f)
		}
		dropped := g.sum["drop"]
		if failed := g.sum["insert_failed"]; dropped > failed {
			dropped -= failed // the insert failures drop their packets too
		} else {
			dropped = 0
		}
		kernel := full[g.node]
		delete(full, g.node)
		if early := g.sum["early_drop"]; dropped > 0 || early > 0 || kernel.n > 0 {
			p.Report(tableFullFinding(s, g.node, facts(), append(cite("drop"), cite("early_drop")...), dropped, early, g.entries, kernel))
		}
	}
	// Nodes whose kernel logged a full table, without counters.
	for _, node := range slices.Sorted(maps.Keys(full)) {
		f := map[string]any{}
		if node != "" {
			f["node"] = node
		}
		p.Report(tableFullFinding(s, node, f, nil, 0, 0, 0, full[node]))
	}
	return nil
}

// kernelLines are a node's kernel log lines of one kind.
type kernelLines struct {
	n  int
	ev []analyzer.Evidence
}

// tableFullLines gathers, per node, the kernel's "nf_conntrack: table
// full, dropping packet" lines.
func tableFullLines(s *model.Snapshot) map[string]kernelLines {
	out := map[string]kernelLines{}
	for _, le := range s.Logs {
		if !strings.Contains(le.Message, "nf_conntrack: table full") {
			continue
		}
		k := out[le.Node]
		k.n++
		if len(k.ev) < 3 {
			k.ev = append(k.ev, analyzer.Evidence{Pos: le.Pos, Note: "kernel: nf_conntrack: table full, dropping packet"})
		}
		out[le.Node] = k
	}
	return out
}

// tableFullFinding reports a full conntrack table from its counters and the
// kernel's log.
func tableFullFinding(s *model.Snapshot, node string, facts map[string]any, ev []analyzer.Evidence, dropped, early, entries uint64, kernel kernelLines) analyzer.Finding {
	where := "this node"
	if node != "" {
		where = node
	}
	sev := analyzer.Warning
	if dropped > 0 || kernel.n > 0 {
		sev = analyzer.Error
	}
	f := analyzer.Finding{Severity: sev, Facts: facts, Evidence: ev}
	if len(ev) > 0 {
		f.Sources = append(f.Sources, model.KindConntrack)
	}
	var says []string
	switch {
	case dropped > 0 || early > 0:
		f.Title = fmt.Sprintf("conntrack table full on %s: %d new %s dropped, %d early %s", where, dropped,
			plural(int(dropped), "packet", "packets"), early, plural(int(early), "drop", "drops"))
		says = append(says, fmt.Sprintf("The conntrack table had no room: the kernel evicted %d unconfirmed %s (early_drop) "+
			"and dropped %d %s of new connections it could not track (drop).", early, plural(int(early), "entry", "entries"),
			dropped, plural(int(dropped), "packet", "packets")))
	default:
		f.Title = fmt.Sprintf("conntrack table full on %s: the kernel dropped packets of new connections", where)
	}
	if kernel.n > 0 {
		f.Facts["kernel_messages"] = kernel.n
		f.Evidence = append(f.Evidence, kernel.ev...)
		f.Sources = append(f.Sources, model.KindLogs)
		says = append(says, fmt.Sprintf("The kernel logged \"nf_conntrack: table full, dropping packet\" %d %s (rate-limited: "+
			"each line stands for more).", kernel.n, plural(kernel.n, "time", "times")))
	}
	if entries > 0 {
		f.Facts["entries"] = entries
		says = append(says, fmt.Sprintf("It holds %d entries.", entries))
	}
	if limit, ok := s.Sysctl(node, "net.netfilter.nf_conntrack_max"); ok {
		f.Facts["nf_conntrack_max"] = limit.Value
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: limit.Pos, Note: "net.netfilter.nf_conntrack_max = " + limit.Value})
		f.Sources = append(f.Sources, model.KindSysctl)
		if n, err := strconv.ParseUint(limit.Value, 10, 64); err == nil && entries > 0 && entries >= n {
			says = append(says, "That is nf_conntrack_max: the table is full.")
		}
	}
	f.Summary = strings.Join(says, " ")
	f.Cause = "More connections are tracked at once than nf_conntrack_max allows: a burst of connections, a flood, " +
		"or entries that stay long (idle established connections keep theirs for 5 days by default)."
	f.Fix = "Raise net.netfilter.nf_conntrack_max (kube-proxy sets it from conntrack.maxPerCore and conntrack.min), " +
		"lower nf_conntrack_tcp_timeout_established, and find what opens so many connections (conntrack -L | sort by source)."
	return f
}

// dnsTimeouts counts log lines of DNS lookups that timed out: a timeout
// talking to port 53, or a lookup that timed out.
func dnsTimeouts(s *model.Snapshot) (int, []analyzer.Evidence) {
	n := 0
	var ev []analyzer.Evidence
	for _, le := range s.Logs {
		m := strings.ToLower(le.Message)
		if !strings.Contains(m, "timeout") && !strings.Contains(m, "timed out") {
			continue
		}
		if !strings.Contains(m, ":53") && !strings.Contains(m, "lookup ") && !strings.Contains(m, "dns") {
			continue
		}
		n++
		if len(ev) < 3 {
			ev = append(ev, analyzer.Evidence{Pos: le.Pos, Note: "DNS lookup timed out"})
		}
	}
	return n, ev
}
