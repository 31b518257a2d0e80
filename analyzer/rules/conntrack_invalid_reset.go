package rules

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// ConntrackInvalidReset finds NATed connections reset because conntrack
// marked one of their segments INVALID and the node forwarded it
// untranslated.
var ConntrackInvalidReset = &analyzer.Rule{
	Name:        "conntrack-invalid-reset",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindCapture, model.KindNetfilter},
	Uses:        []model.Kind{model.KindConntrack, model.KindSysctl},
	Requires:    []analyzer.FactKey{facts.NATPairs},
	SubjectKeys: []string{"node", "vip", "backend", "chain"},
	Run:         runConntrackInvalidReset,
	Symptoms:    []analyzer.SymptomRef{LoadBalancer502.At(165), ServiceUnreachable.At(285)},
	Proof: "the node's capture shows a translated connection whose client resets the endpoint's own address " +
		"(a segment reached it untranslated) and the connection reset after, and the node's filter table " +
		"(iptables-save) has no rule dropping conntrack INVALID packets, with nf_conntrack_tcp_be_liberal not 1",
	Unproven: "from the capture alone, a warning of likely cause (asymmetric routing around the node is not ruled " +
		"out; iptables-save -c decides); from the filter table without the drop and conntrack -S counting invalid " +
		"packets, a warning of likely cause: the resets themselves are not shown, a capture on the node decides",
	Doc: `a segment conntrack finds INVALID resets a NATed connection

Connection tracking checks every TCP segment against the window of its
connection. A segment it finds out of window (a late retransmission, a
burst that outran the window it last saw, an ACK for data it did not see)
is marked INVALID, and NAT does not touch a packet conntrack does not
track: a Service connection's segment from its endpoint goes on to the
client with the endpoint's own address instead of the Service's. The client
has no connection with that address and answers it with an RST, which
carries the sequence number the endpoint expects: the endpoint drops the
connection, and the client's next request is reset ("connection reset by
peer" under load, large transfers cut short; kubernetes/kubernetes#74839).
kube-proxy since 1.15 drops such packets (-A KUBE-FORWARD -m conntrack
--ctstate INVALID -j DROP), and leaves that rule out when
nf_conntrack_tcp_be_liberal = 1 (conntrack then lets out-of-window segments
through, translated); an older kube-proxy, a node whose FORWARD rules are
managed by hand, or a CNI that bypasses KUBE-FORWARD lacks it. Only
forwarded connections are judged (a drop in INPUT does not cover them, nor
one in FORWARD the node's own).

Evidence: a capture of -i any on the node (the client's RST to the
endpoint's address, on a connection it opened to a Service address);
iptables-save (the filter table's INVALID drop, or its absence); conntrack
-S (the invalid counters); sysctl net.netfilter.nf_conntrack_tcp_be_liberal.

Severity: error when the capture shows the reset and the filter table shows
no drop; a warning of likely cause from either alone (with conntrack -S
counting invalid packets, for the filter table).

Fix: upgrade kube-proxy (1.15+ adds the drop), or add
iptables -I FORWARD -m conntrack --ctstate INVALID -j DROP on the nodes, or
set net.netfilter.nf_conntrack_tcp_be_liberal = 1 (kube-proxy's
--conntrack-tcp-be-liberal).`,
}

// invalidNode is what a node's dumps say of INVALID packets.
type invalidNode struct {
	node     string
	filter   *model.Ruleset // the dump holding the node's filter table; nil when none was dumped
	chain    *model.Chain   // the chain kube-proxy's drop belongs in (KUBE-FORWARD, or FORWARD)
	drop     *model.Rule    // a rule dropping INVALID packets; nil when none
	nat      bool           // the node translates: kube-proxy's chains or a DNAT rule
	liberal  *model.Sysctl  // nf_conntrack_tcp_be_liberal as the node's sysctl output shows it
	invalid  uint64         // conntrack -S invalid, summed over the CPUs
	counters []model.Pos    // the conntrack -S lines counting invalid packets
}

const beLiberal = "net.netfilter.nf_conntrack_tcp_be_liberal"

func runConntrackInvalidReset(p *analyzer.Pass) error {
	s := p.Snap
	nodes := invalidNodes(s)
	reported := map[string]bool{}
	for _, pr := range facts.NATPairs.Of(p).Pairs() {
		b, a := pr.Before, pr.After
		if !pr.DNAT || a.FirstAck == nil || b.FirstAck == nil || len(a.ClientRST) == 0 || len(b.ClientRST) > 0 {
			continue // not an established connection whose client reset the endpoint's own address
		}
		n := nodes[a.Node]
		if n == nil {
			n = &invalidNode{node: a.Node}
		}
		if n.drop != nil || liberalOn(n) {
			continue // INVALID segments are dropped, or conntrack lets them through translated
		}
		// One finding per node when its filter table is shown (the cause is
		// the node's), per Service and endpoint otherwise.
		key := fmt.Sprint(a.Node, "|")
		if n.filter == nil {
			key += fmt.Sprint(b.Server, "|", a.Server)
		}
		if reported[key] {
			continue
		}
		reported[key] = true
		p.Report(invalidResetFinding(n, pr))
	}
	for _, name := range s.Nodes() {
		if n := nodes[name]; n != nil {
			reportInvalidForwarded(p, n, reported)
		}
	}
	if n := nodes[""]; n != nil {
		reportInvalidForwarded(p, n, reported)
	}
	return nil
}

// reportInvalidForwarded reports a node whose filter table forwards the
// INVALID packets conntrack counts, when no capture finding named it.
func reportInvalidForwarded(p *analyzer.Pass, n *invalidNode, reported map[string]bool) {
	for k := range reported {
		if strings.HasPrefix(k, n.node+"|") {
			return
		}
	}
	if n.filter == nil || !n.nat || n.drop != nil || liberalOn(n) || n.invalid == 0 {
		return
	}
	p.Report(invalidCountFinding(n))
}

// liberalOn reports whether the node's conntrack lets out-of-window
// segments through.
func liberalOn(n *invalidNode) bool {
	return n.liberal != nil && strings.TrimSpace(n.liberal.Value) == "1"
}

// invalidNodes reads, node by node, the filter table's INVALID drop, the
// NAT, the be_liberal setting and the invalid counters.
func invalidNodes(s *model.Snapshot) map[string]*invalidNode {
	out := map[string]*invalidNode{}
	get := func(node string) *invalidNode {
		if out[node] == nil {
			out[node] = &invalidNode{node: node}
		}
		return out[node]
	}
	for _, rs := range s.Netfilter {
		if rs.Family == "ipv6" {
			continue
		}
		n := get(rs.Node)
		for _, t := range rs.Tables {
			for _, c := range t.Chains {
				if strings.HasPrefix(c.Name, "KUBE-") {
					n.nat = true
				}
				for _, r := range c.Rules {
					if r.Target == "DNAT" {
						n.nat = true
					}
				}
			}
			if t.Name != "filter" && !(rs.Format == "nft" && hasForwardHook(t)) {
				continue
			}
			fwd := forwardChains(t)
			if len(fwd) == 0 {
				continue // a listing without FORWARD shows nothing of what forwarded packets meet
			}
			if n.filter == nil {
				n.filter = rs
			}
			for _, c := range fwd {
				if n.chain == nil || c.Name == "KUBE-FORWARD" {
					n.chain = c
				}
				for _, r := range c.Rules {
					if n.drop == nil && dropsInvalid(r) {
						n.drop = r
					}
				}
			}
		}
	}
	for _, st := range s.ConntrackStats {
		if v := st.Counters["invalid"]; v > 0 {
			n := get(st.Node)
			n.invalid += v
			n.counters = append(n.counters, st.Pos)
		}
	}
	for node, n := range out {
		if sc, ok := s.Sysctl(node, beLiberal); ok {
			n.liberal = &sc
		}
	}
	return out
}

// hasForwardHook reports whether an nftables table has a base chain on the
// forward hook.
func hasForwardHook(t *model.Table) bool {
	for _, c := range t.Chains {
		if c.Hook == "forward" {
			return true
		}
	}
	return false
}

// forwardChains returns the chains of a filter table that forwarded
// packets go through: FORWARD (an nftables base chain on the forward hook)
// first, then the chains its rules jump or go to, and theirs. A drop of
// INVALID packets in INPUT does not cover forwarded ones.
func forwardChains(t *model.Table) []*model.Chain {
	var out []*model.Chain
	seen := map[string]bool{}
	for _, c := range t.Chains {
		if c.Name == "FORWARD" || c.Hook == "forward" {
			out = append(out, c)
			seen[c.Name] = true
		}
	}
	for i := 0; i < len(out) && i < 1000; i++ {
		for _, r := range out[i].Rules {
			if c := t.Chain(r.Target); c != nil && !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// dropsInvalid reports whether r drops (or rejects) packets conntrack
// marked INVALID.
func dropsInvalid(r *model.Rule) bool {
	if r.NotCTState || (r.Target != "DROP" && r.Target != "REJECT") {
		return false
	}
	for _, st := range strings.Split(strings.ToUpper(r.CTState), ",") {
		if strings.TrimSpace(st) == "INVALID" {
			return true
		}
	}
	return false
}

// invalidResetFinding judges a translated connection whose client reset the
// endpoint's own address, from the node's filter table, sysctl and
// counters, then words it.
func invalidResetFinding(n *invalidNode, pr facts.NATPair) analyzer.Finding {
	b, a := pr.Before, pr.After
	rst := a.ClientRST[0]
	ev := []analyzer.Evidence{
		{Pos: a.SegPos(rst), Note: fmt.Sprintf("RST from %s to the endpoint's own address %s", a.Client, a.Server)},
		{Pos: a.Pos, Note: fmt.Sprintf("%s -> %s, translated to %s", b.Client, b.Server, a.Server)},
	}
	if len(b.ServerRST) > 0 {
		ev = append(ev, analyzer.Evidence{Pos: b.SegPos(b.ServerRST[0]),
			Note: fmt.Sprintf("the connection to %s reset after", b.Server)})
	}
	values := map[string]any{"client": b.Client.String(), "service": b.Server.String(), "endpoint": a.Server.String()}
	c := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely,
		Supports: []string{fmt.Sprintf("%s: the client %s resets %s, an address it never connected to: a segment of "+
			"its connection to %s reached it untranslated", a.SegPos(rst), a.Client, a.Server, b.Server)},
		Alternatives: []string{"the endpoint's replies took a path around the node that did the NAT (asymmetric routing)"},
		Decide:       collected("iptables-save", "-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP rules this out"),
	}
	var says []string
	subj := subject("node", n.node, "vip", b.Server.String(), "backend", a.Server.String())
	if n.filter != nil {
		c.Severity, c.Certainty, c.Alternatives, c.Decide = analyzer.Error, analyzer.Proven, nil, ""
		where, chain := n.filter.Pos, "filter"
		if n.chain != nil {
			where, chain = n.chain.Pos, n.chain.Name
		}
		values["chain"] = chain
		subj = subject("node", n.node, "chain", chain)
		ev = append(ev, analyzer.Evidence{Pos: where, Note: "no rule on the forward path drops INVALID packets"})
		c.Supports = append(c.Supports, fmt.Sprintf("%s: the node's filter table has no rule dropping conntrack "+
			"INVALID packets: they are forwarded untranslated", where))
		says = append(says, "Its filter table has no rule dropping conntrack INVALID packets.")
	}
	ev, says = invalidExtras(n, values, &c, ev, says)
	where := nodeName(n.node)
	return withFinding(c, analyzer.Finding{
		Subject: subj,
		Title:   fmt.Sprintf("connections to %s reset: a segment from %s reached the client untranslated", b.Server, a.Server),
		Summary: strings.TrimSpace(fmt.Sprintf("On %s, %s connected to %s, translated to %s. A segment of that "+
			"connection reached the client with the endpoint's own address %s: conntrack did not translate it back, "+
			"as it does not for a segment it marks INVALID (out of window). The client answered with an RST, which "+
			"dropped the connection on the endpoint's side, and the connection was reset. %s", where, b.Client,
			b.Server, a.Server, a.Server, strings.Join(says, " "))),
		Cause: "conntrack marks out-of-window segments INVALID and NAT leaves them untranslated; nothing drops them " +
			"before they reach the client (kube-proxy before 1.15, or FORWARD rules without its INVALID drop)",
		Fix: "Upgrade kube-proxy (1.15+ drops INVALID packets in KUBE-FORWARD), or add iptables -I FORWARD -m " +
			"conntrack --ctstate INVALID -j DROP on the node, or set net.netfilter.nf_conntrack_tcp_be_liberal = 1.",
		Facts:    values,
		Evidence: dedupEvidence(ev),
	})
}

// invalidExtras adds the be_liberal setting and the invalid counters to a
// finding's evidence and words.
func invalidExtras(n *invalidNode, values map[string]any, c *analyzer.Finding, ev []analyzer.Evidence, says []string) ([]analyzer.Evidence, []string) {
	if n.liberal != nil {
		values["be_liberal"] = n.liberal.Value
		ev = append(ev, analyzer.Evidence{Pos: n.liberal.Pos, Note: beLiberal + " = " + n.liberal.Value})
		c.Supports = append(c.Supports, fmt.Sprintf("%s: %s = %s: conntrack marks out-of-window segments INVALID",
			n.liberal.Pos, beLiberal, n.liberal.Value))
	}
	if n.invalid > 0 {
		values["invalid"] = n.invalid
		for _, pos := range n.counters {
			ev = append(ev, analyzer.Evidence{Pos: pos, Note: "invalid"})
		}
		c.Supports = append(c.Supports, fmt.Sprintf("%s: conntrack -S counts %d invalid packets", n.counters[0], n.invalid))
		says = append(says, fmt.Sprintf("Conntrack counts %d invalid %s.", n.invalid, plural(int(n.invalid), "packet", "packets")))
	}
	return ev, says
}

// invalidCountFinding judges a node whose filter table forwards the INVALID
// packets its conntrack counts, without a capture of the resets, then
// words it.
func invalidCountFinding(n *invalidNode) analyzer.Finding {
	where, chain := n.filter.Pos, "filter"
	if n.chain != nil {
		where, chain = n.chain.Pos, n.chain.Name
	}
	values := map[string]any{"chain": chain}
	ev := []analyzer.Evidence{{Pos: where, Note: "no rule on the forward path drops INVALID packets"}}
	c := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely,
		Supports: []string{fmt.Sprintf("%s: the node's filter table has no rule dropping conntrack INVALID packets", where)},
		Decide: collected("capture", "an RST from a client to an endpoint's own address on a connection it opened "+
			"to a Service address"),
	}
	ev, says := invalidExtras(n, values, &c, ev, nil)
	name := nodeName(n.node)
	return withFinding(c, analyzer.Finding{
		Subject: subject("node", n.node, "chain", chain),
		Title:   fmt.Sprintf("%s forwards the packets conntrack marks INVALID, untranslated", name),
		Summary: strings.TrimSpace(fmt.Sprintf("%s translates Service connections, and its filter table has no rule "+
			"dropping conntrack INVALID packets: a segment conntrack finds out of window goes on untranslated, and "+
			"the client's RST for it resets the connection. %s Whether connections were reset is not shown.",
			name, strings.Join(says, " "))),
		Cause: "nothing drops the packets conntrack marks INVALID (kube-proxy before 1.15, or FORWARD rules without " +
			"its INVALID drop), and nf_conntrack_tcp_be_liberal is not 1",
		Fix: "Upgrade kube-proxy (1.15+ drops INVALID packets in KUBE-FORWARD), or add iptables -I FORWARD -m " +
			"conntrack --ctstate INVALID -j DROP on the node, or set net.netfilter.nf_conntrack_tcp_be_liberal = 1.",
		Facts:    values,
		Evidence: dedupEvidence(ev),
	})
}
