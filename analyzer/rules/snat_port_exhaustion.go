package rules

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// SNATPortExhaustion finds source NAT that has no port left for new
// connections to one destination.
var SNATPortExhaustion = &analyzer.Rule{
	Name:     "snat-port-exhaustion",
	Severity: analyzer.Error,
	Needs:    []model.Kind{model.KindNetfilter},
	Uses:     []model.Kind{model.KindConntrack, model.KindCapture},
	Requires: []analyzer.FactKey{facts.FailedAttempts},
	Proof: "a SNAT or MASQUERADE rule (iptables, nft) with its source port range, conntrack -L entries translated " +
		"by it that hold every port of the range towards one destination, and new connections to that " +
		"destination failing: conntrack -S insert_failed, or SYNs unanswered in a capture",
	Unproven: "without conntrack -L, a rule with a range smaller than the connections the capture shows to one " +
		"destination, some unanswered, is reported as likely, with `conntrack -L -o extended` (the entries to the destination) as " +
		"the command that decides; a full range without failures shown is a warning; unanswered SYNs without a " +
		"source NAT rule in the bundle are left to syn-unanswered and conntrack-drops",
	SubjectKeys: []string{"node", "address", "proto"},
	Run:         runSNATPortExhaustion,
	Symptoms:    []analyzer.SymptomRef{LoadBalancer502.At(80), DNSTimeouts.At(80), ConnectionsTimeOut.At(120)},
	Decide: "# on the node: the entries to the destination, against the SNAT rule's port range\n" +
		"conntrack -L -o extended",
	Doc: `source NAT has no port left for new connections

A node that source-NATs Pod traffic (MASQUERADE to the node's address,
SNAT --to-source for an egress gateway or a NAT gateway) gives each
connection a source port from the rule's range. One translated address
can hold only as many connections to one destination address and port as
the range has ports. When every port is taken, the next connection finds
no free tuple: its conntrack entry cannot be inserted (conntrack -S counts
insert_failed and drop), the SYN is dropped, and the client retransmits
until it times out. Many Pods calling one external endpoint (a database, an
API, a proxy) through one egress address hit this first; a narrow
--to-source range or --to-ports makes it come sooner.

Evidence: the nat table's SNAT and MASQUERADE rules and their ranges
(iptables-save, iptables -t nat -L, nft list ruleset); conntrack -L: the
entries whose reply goes to the translated address, by destination, and
the ports they hold; conntrack -S: insert_failed; the capture's unanswered
SYNs to the destination.

Severity: error when the entries hold every port of the range towards one
destination and new connections to it fail (the counters or the capture);
warning when the range is full but no failure is shown, or when failures
and a range too small for the connections seen are shown without the
entries (likely; the finding names the conntrack command that decides).

Fix: widen the range (--to-source ADDR:1024-65535, or drop --to-ports), add
translated addresses (a range of --to-source addresses, or more egress
gateway IPs), add --random-fully so ports are picked without collisions,
or have the clients reuse connections (keep-alive, pooling) instead of
opening one per request.`,
}

// snatTarget is one source NAT rule with its translated addresses and
// ports.
type snatTarget struct {
	rule  *model.Rule
	node  string
	addrs []netip.Addr // empty for MASQUERADE: the outgoing interface's address
	ports model.PortRange
	src   netip.Prefix // the rule's -s, when it has one
}

// capacity is how many connections the target can translate to one
// destination.
func (t snatTarget) capacity() int { return max(1, len(t.addrs)) * t.ports.Len() }

var (
	snatToSource = lazyre.New(`^([0-9.]+)(?:-([0-9.]+))?(?::(\d+)(?:-(\d+))?)?$`)
	snatToPorts  = lazyre.New(`(?:--to-ports|masq ports:|masquerade to :)\s*(\d+)(?:-(\d+))?`)
)

// snatTargets returns the SNAT and MASQUERADE rules of the nat tables.
func snatTargets(s *model.Snapshot) []snatTarget {
	var out []snatTarget
	for _, rs := range s.Netfilter {
		for _, tb := range rs.Tables {
			if tb.Name != "nat" {
				continue
			}
			for _, ch := range tb.Chains {
				for _, r := range ch.Rules {
					if t, ok := snatTargetOf(r); ok {
						t.node = rs.Node
						out = append(out, t)
					}
				}
			}
		}
	}
	return out
}

// snatTargetOf reads the addresses and ports a SNAT or MASQUERADE rule
// translates to; a rule without a port range gets the kernel's default,
// 1024-65535.
func snatTargetOf(r *model.Rule) (snatTarget, bool) {
	t := snatTarget{rule: r, ports: model.PortRange{First: 1024, Last: 65535}}
	switch strings.ToUpper(r.Target) {
	case "SNAT":
		m := snatToSource.FindStringSubmatch(strings.TrimSpace(r.ToSource))
		if m == nil {
			return t, false
		}
		first, err := netip.ParseAddr(m[1])
		if err != nil || !first.Is4() {
			return t, false
		}
		last := first
		if m[2] != "" {
			if last, err = netip.ParseAddr(m[2]); err != nil || last.Less(first) {
				return t, false
			}
		}
		for a := first; len(t.addrs) < 256; a = a.Next() {
			t.addrs = append(t.addrs, a)
			if a == last {
				break
			}
		}
		if m[3] != "" {
			pr, err := model.ParsePortRange(m[3] + "-" + cmp.Or(m[4], m[3]))
			if err != nil {
				return t, false
			}
			t.ports = pr
		}
	case "MASQUERADE":
		if m := snatToPorts.FindStringSubmatch(r.Raw); m != nil {
			pr, err := model.ParsePortRange(m[1] + "-" + cmp.Or(m[2], m[1]))
			if err != nil {
				return t, false
			}
			t.ports = pr
		}
	default:
		return t, false
	}
	if r.Src != "" && !r.NotSrc {
		if p, err := netip.ParsePrefix(r.Src); err == nil {
			t.src = p.Masked()
		} else if a, err := netip.ParseAddr(r.Src); err == nil {
			t.src = netip.PrefixFrom(a, a.BitLen())
		}
	}
	return t, true
}

// snatUse is what one target holds towards one destination.
type snatUse struct {
	proto   string
	dst     netip.AddrPort
	ports   map[netip.AddrPort]bool // translated address and port
	entries []*model.ConntrackEntry
}

// translatedBy tells whether conntrack entry e was source-NATed by t.
func (t snatTarget) translatedBy(e *model.ConntrackEntry) bool {
	to := e.Reply.Dst
	if !to.IsValid() || to == e.Orig.Src || e.Node != t.node || !t.ports.Contains(to.Port()) {
		return false
	}
	if len(t.addrs) > 0 && !slices.Contains(t.addrs, to.Addr()) {
		return false
	}
	if t.rule.Proto != "" && !t.rule.NotProto && !strings.EqualFold(t.rule.Proto, e.Proto) {
		return false
	}
	return !t.src.IsValid() || t.src.Contains(e.Orig.Src.Addr())
}

func runSNATPortExhaustion(p *analyzer.Pass) error {
	s := p.Snap
	fails := facts.FailedAttempts.Of(p).Of(model.OutcomeUnanswered)
	for _, t := range snatTargets(s) {
		// The entries it translated, per destination.
		var order []string
		uses := map[string]*snatUse{}
		for i := range s.Conntrack {
			e := &s.Conntrack[i]
			if !t.translatedBy(e) {
				continue
			}
			k := e.Proto + " " + e.Orig.Dst.String()
			u := uses[k]
			if u == nil {
				u = &snatUse{proto: e.Proto, dst: e.Orig.Dst, ports: map[netip.AddrPort]bool{}}
				uses[k] = u
				order = append(order, k)
			}
			u.ports[e.Reply.Dst] = true
			u.entries = append(u.entries, e)
		}
		inserts, insertEv := insertFailures(s, t.node)
		reported := map[netip.AddrPort]bool{}
		for _, k := range order {
			u := uses[k]
			if len(u.ports) < t.capacity() {
				continue
			}
			g := failsTo(fails, t, u.dst)
			reported[u.dst] = true
			p.Report(snatFinding(t, u.dst, u, g, inserts, insertEv))
		}
		// Without the entries: connections in a capture to one destination,
		// more than the range holds, some unanswered.
		if slices.ContainsFunc(s.Conntrack, func(e model.ConntrackEntry) bool { return e.Node == t.node }) {
			continue // the node's entries were shown: they decide
		}
		for _, g := range fails {
			if reported[g.Server] || g.Node != t.node || (g.N == 1 && g.Retx == 0) {
				continue
			}
			if failsTo([]*facts.FailGroup{g}, t, g.Server) == nil {
				continue
			}
			seen := connectionsTo(s, g.Server, t)
			if seen <= t.capacity() {
				continue
			}
			p.Report(snatLikelyFinding(t, g, seen, inserts, insertEv))
		}
	}
	return nil
}

// failsTo returns the group of unanswered attempts to dst from clients the
// target translates, or nil.
func failsTo(fails []*facts.FailGroup, t snatTarget, dst netip.AddrPort) *facts.FailGroup {
	for _, g := range fails {
		if g.Server != dst || g.Node != t.node {
			continue
		}
		for _, c := range g.Clients {
			if a, err := netip.ParseAddr(c); err == nil && (!t.src.IsValid() || t.src.Contains(a)) {
				return g
			}
		}
	}
	return nil
}

// connectionsTo counts the capture's connection attempts to dst from
// clients the target translates: those kept one by one, and those a
// summarized capture counted (EndpointStats) when every client of the
// count is known to be one the target translates. A count whose clients
// are not all known is left out: the total is then too low, never too
// high.
func connectionsTo(s *model.Snapshot, dst netip.AddrPort, t snatTarget) int {
	n := 0
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.Server == dst && a.Node == t.node && (!t.src.IsValid() || t.src.Contains(a.Client.Addr())) {
			n++
		}
	}
	for i := range s.EndpointStats {
		st := &s.EndpointStats[i]
		if st.Server != dst || st.Node != t.node {
			continue
		}
		if !t.src.IsValid() || (st.Clients == len(st.ClientAddrs) &&
			!slices.ContainsFunc(st.ClientAddrs, func(a netip.Addr) bool { return !t.src.Contains(a) })) {
			n += st.Attempts
		}
	}
	return n
}

// insertFailures sums node's conntrack insert_failed counters and cites
// the CPUs that counted some.
func insertFailures(s *model.Snapshot, node string) (uint64, []analyzer.Evidence) {
	var n uint64
	var ev []analyzer.Evidence
	for _, st := range s.ConntrackStats {
		if st.Node != node {
			continue
		}
		if v := st.Counters["insert_failed"]; v > 0 {
			n += v
			ev = append(ev, analyzer.Evidence{Pos: st.Pos, Note: fmt.Sprintf("cpu %d: insert_failed=%d", st.CPU, v)})
		}
	}
	return n, ev
}

// snatWhat names a target: "SNAT to 10.85.0.2:40000-40009".
func snatWhat(t snatTarget) string {
	if len(t.addrs) == 0 {
		return "MASQUERADE to ports " + t.ports.String()
	}
	a := t.addrs[0].String()
	if len(t.addrs) > 1 {
		a += "-" + t.addrs[len(t.addrs)-1].String()
	}
	return fmt.Sprintf("SNAT to %s:%s", a, t.ports)
}

// snatFacts are the facts every finding of a target has.
func snatFacts(t snatTarget, dst netip.AddrPort) map[string]any {
	f := map[string]any{"snat": snatWhat(t), "port_range": t.ports.String(), "capacity": t.capacity(),
		"destination": dst.String()}
	if t.node != "" {
		f["node"] = t.node
	}
	return f
}

// snatFinding reports a target whose conntrack entries hold every port
// of its range towards dst.
func snatFinding(t snatTarget, dst netip.AddrPort, u *snatUse, g *facts.FailGroup, inserts uint64, insertEv []analyzer.Evidence) analyzer.Finding {
	what := snatWhat(t)
	f := analyzer.Finding{Severity: analyzer.Warning, Facts: snatFacts(t, dst),
		Subject: subject("node", t.node, "address", dst.String(), "proto", strings.ToLower(u.proto))}
	f.Facts["ports_in_use"] = len(u.ports)
	f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: t.rule.Pos, Note: what})
	for i, e := range u.entries {
		if i == maxGroupEvidence {
			break
		}
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: e.Pos,
			Note: fmt.Sprintf("%s -> %s translated to %s", e.Orig.Src, e.Orig.Dst, e.Reply.Dst)})
	}
	f.Supports = []string{
		fmt.Sprintf("%s: %s gives %d source %s per destination", t.rule.Pos, what, t.capacity(),
			plural(t.capacity(), "port", "ports")),
		fmt.Sprintf("conntrack -L (%s) lists %d %s connections to %s translated by it, holding %d of those ports",
			u.entries[0].Pos.File, len(u.entries), u.proto, dst, len(u.ports)),
	}
	var failed []string
	if g != nil {
		f.Facts["failed_attempts"] = g.N
		f.Facts["clients"] = listSome(g.Clients, g.More)
		for i, a := range g.Attempts {
			if i == maxGroupEvidence {
				break
			}
			f.Evidence = append(f.Evidence, failedSegEvidence(a, false)...)
		}
		f.Supports = append(f.Supports, fmt.Sprintf("the capture shows %d connection %s to %s unanswered (%d SYN %s)",
			g.N, plural(g.N, "attempt", "attempts"), dst, g.Retx, plural(g.Retx, "retransmission", "retransmissions")))
		failed = append(failed, fmt.Sprintf("%d connection %s to %s got no answer in the capture", g.N,
			plural(g.N, "attempt", "attempts"), dst))
	}
	if inserts > 0 {
		f.Facts["insert_failed"] = inserts
		f.Evidence = append(f.Evidence, insertEv...)
		f.Supports = append(f.Supports, fmt.Sprintf("conntrack -S (%s) counts insert_failed=%d: new entries found no "+
			"free tuple", insertEv[0].Pos.File, inserts))
		failed = append(failed, fmt.Sprintf("conntrack counted %d failed %s", inserts, plural(int(inserts), "insert", "inserts")))
	}
	f.Evidence = dedupEvidence(f.Evidence)
	f.Summary = fmt.Sprintf("The node translates these connections with %s: %d %s towards one destination. "+
		"conntrack lists %d connections to %s holding all of them.", what, t.capacity(),
		plural(t.capacity(), "port", "ports"), len(u.entries), dst)
	if len(failed) > 0 {
		f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
		f.Title = fmt.Sprintf("SNAT ports exhausted towards %s: all %d ports of %s in use, new connections fail",
			dst, t.capacity(), what)
		f.Summary += " New connections fail: " + strings.Join(failed, "; ") + "."
		f.Cause = fmt.Sprintf("Source NAT port exhaustion: every port of %s is held by a connection to %s, so a new "+
			"connection there gets no unique tuple, its conntrack entry cannot be inserted and its SYN is dropped.", what, dst)
		f.Contradicts = []string{
			fmt.Sprintf("a conntrack -L taken while the connections failed showing fewer than %d ports held towards %s", t.capacity(), dst),
		}
	} else {
		f.Certainty = analyzer.Likely
		f.Title = fmt.Sprintf("SNAT ports full towards %s: all %d ports of %s in use", dst, t.capacity(), what)
		f.Summary += " No failed connection is shown, but the next one to that destination has no port."
		f.Cause = fmt.Sprintf("Source NAT port exhaustion is imminent: every port of %s is held by a connection to %s.", what, dst)
		f.Contradicts = []string{"conntrack -S insert_failed at 0 on every CPU while new connections are made"}
		f.Alternatives = []string{
			"the range is full only at the moment of the listing, and connections close before others need a port",
		}
		f.Decide = "conntrack -S"
	}
	f.Fix = snatFix(t)
	return f
}

// snatLikelyFinding reports failures to a destination through a target
// whose range is smaller than the connections the capture shows to it,
// without the conntrack entries that would prove the range full.
func snatLikelyFinding(t snatTarget, g *facts.FailGroup, seen int, inserts uint64, insertEv []analyzer.Evidence) analyzer.Finding {
	what := snatWhat(t)
	dst := g.Server
	f := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely, Facts: snatFacts(t, dst),
		Subject: subject("node", t.node, "address", dst.String(), "proto", "tcp")}
	f.Facts["attempts_seen"] = seen
	f.Facts["failed_attempts"] = g.N
	f.Facts["clients"] = listSome(g.Clients, g.More)
	f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: t.rule.Pos, Note: what})
	for i, a := range g.Attempts {
		if i == maxGroupEvidence {
			break
		}
		f.Evidence = append(f.Evidence, failedSegEvidence(a, false)...)
	}
	f.Supports = []string{
		fmt.Sprintf("%s: %s gives %d source %s per destination", t.rule.Pos, what, t.capacity(),
			plural(t.capacity(), "port", "ports")),
		fmt.Sprintf("the capture shows %d connection attempts to %s from clients the rule translates, %d of them unanswered",
			seen, dst, g.N),
	}
	if inserts > 0 {
		f.Facts["insert_failed"] = inserts
		f.Evidence = append(f.Evidence, insertEv...)
		f.Supports = append(f.Supports, fmt.Sprintf("conntrack -S (%s) counts insert_failed=%d", insertEv[0].Pos.File, inserts))
	}
	f.Evidence = dedupEvidence(f.Evidence)
	f.Title = fmt.Sprintf("SNAT ports likely exhausted towards %s: %d attempts for %d ports of %s", dst, seen,
		t.capacity(), what)
	f.Summary = fmt.Sprintf("%d connection %s to %s got no answer (%d SYN %s). The node translates them with %s, "+
		"%d %s towards one destination, and the capture shows %d attempts to it.", g.N, plural(g.N, "attempt", "attempts"),
		dst, g.Retx, plural(g.Retx, "retransmission", "retransmissions"), what, t.capacity(),
		plural(t.capacity(), "port", "ports"), seen)
	f.Cause = fmt.Sprintf("Most likely source NAT port exhaustion: more connections to %s than %s has ports; the "+
		"conntrack entries that would show the ports held are not in the bundle.", dst, what)
	f.Contradicts = []string{
		fmt.Sprintf("conntrack -L showing fewer than %d connections to %s translated by the rule while the SYNs went unanswered",
			t.capacity(), dst),
		"the attempts seen were not open at the same time (each closed before the next)",
	}
	f.Alternatives = []string{
		"source NAT port exhaustion (" + what + ")",
		fmt.Sprintf("%s itself drops or cannot take more connections (a firewall, a full accept queue)", dst),
		"a full conntrack table on the node (conntrack -S drop, nf_conntrack_max)",
	}
	f.Decide = collected("conntrack-list", fmt.Sprintf("the TCP entries to %s: how many, and their states", dst))
	f.Fix = snatFix(t)
	return f
}

// snatFix says how to give a target more ports.
func snatFix(t snatTarget) string {
	ports := strconv.Itoa(t.ports.Len())
	return "Give the translation more room: widen the port range (" + ports + " ports now; --to-source ADDR:1024-65535, " +
		"or drop --to-ports), add translated addresses, add --random-fully, or have the clients reuse connections " +
		"(keep-alive, pooling) instead of opening one per request."
}
