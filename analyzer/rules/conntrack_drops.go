package rules

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// ConntrackDrops finds nodes whose connection tracking drops packets.
var ConntrackDrops = &analyzer.Rule{
	Name:        "conntrack-drops",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindConntrack, model.KindLogs},
	Uses:        []model.Kind{model.KindSysctl},
	SubjectKeys: []string{"node", "counter"},
	Run:         runConntrackDrops,
	Symptoms:    []analyzer.SymptomRef{ProbesTimeOut.At(70), LoadBalancer502.At(100), DNSTimeouts.At(20), ConnectionsTimeOut.At(130)},
	Decide: "# on the node: insert_failed or drop rising, the table full\n" +
		"conntrack -S; sysctl net.netfilter.nf_conntrack_count net.netfilter.nf_conntrack_max",
	Proof: "the conntrack counters of the node (conntrack -S, /proc/net/stat/nf_conntrack) and a second source: for " +
		"insert failures, DNS lookups timing out in the logs; for a full table, the kernel's \"table full\" lines or " +
		"nf_conntrack_max from sysctl",
	Unproven: "one source alone shows that packets were dropped but not what it cost or why (insert_failed also " +
		"counts other clashes, drop other failures): a warning (likely), with the command that decides",
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
from sysctl output, or else the size kube-proxy's log says it set at its
start ("Setting nf_conntrack_max to 786432"); log lines of DNS lookups
timing out.

Severity: error when two kinds of evidence agree: a full table's drops in
the counters and the kernel's log or nf_conntrack_max, insert failures and
DNS timeouts in the logs; warning from one alone, and for early drops
without drops.

Fix: for insert failures, "options single-request-reopen" in the Pods'
resolv.conf (spec.dnsConfig), NodeLocal DNSCache (DNS then bypasses the
DNAT), or a 5.x kernel; for a full table, raise nf_conntrack_max
(kube-proxy's conntrack.maxPerCore) or find what opens so many connections.`,
}

// ctGroup are the conntrack counters of one node's listing, per CPU.
type ctGroup struct {
	node, file string
	sum        map[string]uint64
	cpus       []*model.ConntrackStats
	entries    uint64
}

// cite cites the CPUs whose counter is not zero, line by line.
func (g *ctGroup) cite(counter string) []analyzer.Evidence {
	var ev []analyzer.Evidence
	for _, c := range g.cpus {
		if v := c.Counters[counter]; v > 0 && len(ev) < 8 {
			ev = append(ev, analyzer.Evidence{Pos: c.Pos, Note: fmt.Sprintf("cpu %d: %s=%d", c.CPU, counter, v)})
		}
	}
	return ev
}

// facts are the facts of every finding of g.
func (g *ctGroup) facts() map[string]any {
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

func runConntrackDrops(p *analyzer.Pass) error {
	s := p.Snap
	var groups []*ctGroup
	byKey := map[string]*ctGroup{}
	for i := range s.ConntrackStats {
		st := &s.ConntrackStats[i]
		k := st.Node + "|" + st.Pos.File
		g := byKey[k]
		if g == nil {
			g = &ctGroup{node: st.Node, file: st.Pos.File, sum: map[string]uint64{}}
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
		if failed := g.sum["insert_failed"]; failed > 0 {
			x := &conntrackInserts{node: g.node, cpus: len(g.cpus), failed: failed, dnsTimeouts: dnsN}
			f := judgeConntrackInserts(g, x, dnsEv)
			f.Title, f.Summary, f.Cause, f.Fix = insertWords(x)
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
			t := &tableFull{node: g.node, dropped: dropped, early: early, entries: g.entries, kernel: kernel}
			f := judgeTableFull(p, t, g.facts(), append(g.cite("drop"), g.cite("early_drop")...))
			f.Title, f.Summary, f.Cause, f.Fix = tableFullWords(t)
			p.Report(f)
		}
	}
	// Nodes whose kernel logged a full table, without counters.
	for _, node := range slices.Sorted(maps.Keys(full)) {
		f := map[string]any{}
		if node != "" {
			f["node"] = node
		}
		t := &tableFull{node: node, kernel: full[node]}
		tf := judgeTableFull(p, t, f, nil)
		tf.Title, tf.Summary, tf.Cause, tf.Fix = tableFullWords(t)
		p.Report(tf)
	}
	return nil
}

// conntrackInserts are a node's failed conntrack inserts, and their
// judgement (judgeConntrackInserts): DNS lookups timing out in the logs show
// what they cost. insertWords words them.
type conntrackInserts struct {
	node        string
	cpus        int
	failed      uint64
	dnsTimeouts int // the DNS lookups the logs show timing out
}

// judgeConntrackInserts judges x, the insert failures of g; dnsEv cites the
// DNS lookups that timed out. It returns the finding without its words.
func judgeConntrackInserts(g *ctGroup, x *conntrackInserts, dnsEv []analyzer.Evidence) analyzer.Finding {
	f := analyzer.Finding{Severity: analyzer.Warning, Facts: g.facts(), Subject: subject("node", g.node, "counter", "insert_failed"),
		Evidence: g.cite("insert_failed")}
	f.Supports = []string{fmt.Sprintf("%s: insert_failed=%d over %d %s", g.cpus[0].Pos.File, x.failed, len(g.cpus),
		plural(len(g.cpus), "CPU", "CPUs"))}
	if x.dnsTimeouts > 0 {
		f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
		f.Supports = append(f.Supports, fmt.Sprintf("%s: a DNS lookup timed out (%d in the logs)", dnsEv[0].Pos, x.dnsTimeouts))
		f.Facts["dns_timeouts"] = x.dnsTimeouts
		f.Evidence = append(f.Evidence, dnsEv...)
		return f
	}
	f.Certainty = analyzer.Unknown
	f.Contradicts = []string{"no DNS lookup timing out in the logs of the bundle: what the failed inserts cost is not shown"}
	f.Alternatives = []string{"two packets of one new UDP flow racing through NAT (DNS A and AAAA at once)",
		"clashes of other new flows through NAT (not DNS), which their clients retry",
		"SNAT or MASQUERADE out of source ports towards one destination (see snat-port-exhaustion)"}
	f.Decide = "# on the node, before and after running DNS lookups from a Pod on it\nconntrack -S | grep -o 'insert_failed=[0-9]*'"
	return f
}

// insertWords words the finding of x, as judgeConntrackInserts judged it.
func insertWords(x *conntrackInserts) (title, summary, cause, fix string) {
	where := "this node"
	if x.node != "" {
		where = x.node
	}
	cpus := fmt.Sprintf("%d %s", x.cpus, plural(x.cpus, "CPU", "CPUs"))
	inserts := fmt.Sprintf("%d %s", x.failed, plural(int(x.failed), "insert", "inserts"))
	if x.dnsTimeouts > 0 {
		title = fmt.Sprintf("conntrack failed %s on %s: racing packets of new connections were dropped", inserts, where)
		summary = fmt.Sprintf("The conntrack counters of %s show insert_failed=%d: packets sent at once for one new "+
			"flow went through NAT on two CPUs and the second was dropped. DNS lookups through the kube-dns Service are "+
			"the usual victims (glibc sends A and AAAA at once), and wait for the resolver's 5 s timeout. "+
			"The logs show %d DNS %s timing out.", cpus, x.failed, x.dnsTimeouts, plural(x.dnsTimeouts, "lookup", "lookups"))
		cause = "A race in the kernel's connection tracking: two packets of one new UDP flow create two entries, and " +
			"the second cannot be inserted (kernels before 5.0; later ones mostly resolve the clash, counted as clash_resolve)."
	} else {
		title = fmt.Sprintf("conntrack failed %s on %s: packets of new connections were dropped", inserts, where)
		summary = fmt.Sprintf("The conntrack counters of %s show insert_failed=%d: packets of new connections "+
			"were dropped because their conntrack entry could not be inserted. Nothing in the bundle shows which "+
			"connections they were.", cpus, x.failed)
		cause = "Not established by the evidence: most often two packets of one new UDP flow (DNS's A and AAAA " +
			"queries) racing through NAT on two CPUs; a SNAT or MASQUERADE without a free source port fails " +
			"the same way."
	}
	fix = "Add \"options single-request-reopen\" to the Pods' resolv.conf (spec.dnsConfig.options), run NodeLocal " +
		"DNSCache so DNS does not go through the kube-dns DNAT, or move the node to a 5.x kernel."
	return title, summary, cause, fix
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

// tableFull is a node's full conntrack table, from its counters and the
// kernel's log, and its judgement (judgeTableFull). tableFullWords words it.
type tableFull struct {
	node                    string
	dropped, early, entries uint64
	kernel                  kernelLines

	atLimit bool // the entries reach nf_conntrack_max
}

// judgeTableFull judges t from the counters (facts, cited by ev) and the
// node's nf_conntrack_max. It fills in t and returns the finding without its
// words.
func judgeTableFull(p *analyzer.Pass, t *tableFull, facts map[string]any, ev []analyzer.Evidence) analyzer.Finding {
	dropped, early, entries, kernel := t.dropped, t.early, t.entries, t.kernel
	sev := analyzer.Warning
	if dropped > 0 || kernel.n > 0 {
		sev = analyzer.Error
	}
	f := analyzer.Finding{Severity: sev, Facts: facts, Evidence: ev, Subject: subject("node", t.node, "counter", "drop")}
	if len(ev) > 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("%s: drop=%d, early_drop=%d", ev[0].Pos.File, dropped, early))
	}
	if kernel.n > 0 {
		f.Facts["kernel_messages"] = kernel.n
		f.Evidence = append(f.Evidence, kernel.ev...)
		lines := fmt.Sprintf("%d lines", kernel.n)
		if kernel.n == 1 {
			lines = "1 line"
		} else if kernel.n > len(kernel.ev) {
			lines += fmt.Sprintf(", the first %d cited", len(kernel.ev))
		}
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the kernel logs \"nf_conntrack: table full, dropping packet\" (%s)",
			kernel.ev[0].Pos, lines))
	}
	if entries > 0 {
		f.Facts["entries"] = entries
	}
	if limit, ok := p.Snap.Sysctl(t.node, "net.netfilter.nf_conntrack_max"); !ok {
		if n, pos, ok := kubeProxyConntrackMax(p.Snap, t.node); ok {
			// No sysctl: the size kube-proxy set at its start.
			f.Facts["nf_conntrack_max"] = n
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: pos, Note: "kube-proxy sets nf_conntrack_max to " + n})
			f.Supports = append(f.Supports, fmt.Sprintf("%s: kube-proxy set nf_conntrack_max to %s at its start: the "+
				"table holds that many entries at most", pos, n))
		}
	} else {
		f.Facts["nf_conntrack_max"] = limit.Value
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: limit.Pos, Note: "net.netfilter.nf_conntrack_max = " + limit.Value})
		if n, err := strconv.ParseUint(limit.Value, 10, 64); err == nil && entries > 0 && entries >= n {
			t.atLimit = true
			f.Supports = append(f.Supports, fmt.Sprintf("%s: nf_conntrack_max = %s, the entries the counters show", limit.Pos, limit.Value))
		} else if err == nil && entries > 0 {
			f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: nf_conntrack_max = %s, above the %d entries the counters show",
				limit.Pos, limit.Value, entries))
		}
	}
	f.Certainty = analyzer.Likely
	if p.Joins(f.Evidence) && (dropped > 0 || kernel.n > 0) && len(f.Contradicts) == 0 {
		f.Certainty = analyzer.Proven
	} else {
		f.Severity = analyzer.Warning
		if kernel.n == 0 {
			f.Contradicts = append(f.Contradicts, "no kernel \"table full\" line in the bundle")
		}
		f.Alternatives = []string{"drops for another reason than a full table (an allocation failure, a helper)"}
		if dropped == 0 && kernel.n == 0 {
			f.Alternatives = []string{"a table close to full that evicts unconfirmed entries but has not dropped yet"}
		}
		f.Decide = "conntrack -C; sysctl net.netfilter.nf_conntrack_max; dmesg | grep nf_conntrack"
	}
	return f
}

// tableFullWords words the finding of t, as judgeTableFull judged it.
func tableFullWords(t *tableFull) (title, summary, cause, fix string) {
	where := "this node"
	if t.node != "" {
		where = t.node
	}
	dropped, early := t.dropped, t.early
	var says []string
	switch {
	case dropped > 0 || early > 0:
		title = fmt.Sprintf("conntrack table full on %s: %d new %s dropped, %d early %s", where, dropped,
			plural(int(dropped), "packet", "packets"), early, plural(int(early), "drop", "drops"))
		says = append(says, fmt.Sprintf("The conntrack table had no room: the kernel evicted %d unconfirmed %s (early_drop) "+
			"and dropped %d %s of new connections it could not track (drop).", early, plural(int(early), "entry", "entries"),
			dropped, plural(int(dropped), "packet", "packets")))
	default:
		title = fmt.Sprintf("conntrack table full on %s: the kernel dropped packets of new connections", where)
	}
	if t.kernel.n > 0 {
		says = append(says, fmt.Sprintf("The kernel logged \"nf_conntrack: table full, dropping packet\" %d %s (rate-limited: "+
			"each line stands for more).", t.kernel.n, plural(t.kernel.n, "time", "times")))
	}
	if t.entries > 0 {
		says = append(says, fmt.Sprintf("It holds %d entries.", t.entries))
	}
	if t.atLimit {
		says = append(says, "That is nf_conntrack_max: the table is full.")
	}
	cause = "More connections are tracked at once than nf_conntrack_max allows: a burst of connections, a flood, " +
		"or entries that stay long (idle established connections keep theirs for 5 days by default)."
	fix = "Raise net.netfilter.nf_conntrack_max (kube-proxy sets it from conntrack.maxPerCore and conntrack.min), " +
		"lower nf_conntrack_tcp_timeout_established, and find what opens so many connections (conntrack -L | sort by source)."
	return title, strings.Join(says, " "), cause, fix
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

// kubeProxySetsMaxRe matches kube-proxy's line at its start setting the
// table's size ("Setting nf_conntrack_max to 786432").
var kubeProxySetsMaxRe = lazyre.New(`Setting nf_conntrack_max to (\d+)`)

// kubeProxyConntrackMax returns the nf_conntrack_max the last of
// kube-proxy's lines (its log's source or file names it) on node, or of
// no node, set, and where.
func kubeProxyConntrackMax(s *model.Snapshot, node string) (string, model.Pos, bool) {
	n, pos, ok := "", model.Pos{}, false
	for i := range s.Logs {
		le := &s.Logs[i]
		if le.Node != node && le.Node != "" || !facts.IsKubeProxyLog(le) {
			continue
		}
		if m := kubeProxySetsMaxRe.FindStringSubmatch(le.Message); m != nil {
			n, pos, ok = m[1], le.Pos, true
		}
	}
	return n, pos, ok
}
