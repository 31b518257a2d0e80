package rules

import (
	"fmt"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/internal/shq"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// VXLANPortBlocked finds a firewall rule of a node that drops the
// overlay's VXLAN packets (UDP 4789 or 8472) on their way in.
var VXLANPortBlocked = &analyzer.Rule{
	Name:     "vxlan-port-blocked",
	Severity: analyzer.Warning,
	Needs:    []model.Kind{model.KindNetfilter},
	Uses:     []model.Kind{model.KindLinks, model.KindClient},
	Proof: "a filter rule drops (DROP, REJECT) UDP to a VXLAN port (4789, 8472, or the dstport of a vxlan link " +
		"the bundle lists) on the way in, for every sender, or its counter (iptables-save -c, iptables -nvL) shows " +
		"packets it dropped; the rule names the drop as likely, since a rule alone does not show which tunnel's " +
		"packets it took",
	Unproven: "a drop that only takes VXLAN from hosts outside an allow-list (Calico's \"Drop IPv4 VXLAN packets " +
		"from non-whitelisted hosts\" after its accept from the cali40all-vxlan-net set), without counters, is " +
		"normal and reported as info, with `iptables -nvL CHAIN` (its counter climbing while the traffic fails) " +
		"as what decides; a counter at 0 rules it out; beside a client transcript where a connection goes " +
		"unanswered (timed out, no route to host) it is a warning, still of unknown cause",
	SubjectKeys: []string{"node", "chain", "port"},
	Run:         runVXLANPortBlocked,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(180), ConnectionsTimeOut.At(100)},
	Doc: `a firewall rule drops the overlay's VXLAN packets

VXLAN carries the overlay's packets between nodes in UDP, to port 4789
(IANA's, Calico's, Cilium's) or 8472 (Linux's default, flannel's). A
firewall rule on the receiving node that drops that port (a host firewall,
a security hardening script, an INPUT policy that allows only TCP) cuts
every Pod off from the Pods of other nodes, while the nodes reach each
other. Calico in VXLAN mode drops on purpose the VXLAN packets from hosts
that are not Calico nodes (cali-INPUT "Drop IPv4 VXLAN packets from
non-whitelisted hosts", whatever their VNI): another VXLAN tunnel on the
same port (a VM's, another overlay's) is dropped with them.

Evidence: the filter rules (iptables-save, iptables -S, iptables -L, nft
list ruleset): DROP or REJECT of UDP to a VXLAN port in a chain of the
way in (INPUT, FORWARD and the chains they jump to), the ACCEPT of an
allow-list before it, and the rule's counters when the dump has them;
the dstport of the vxlan links (ip -d link) for other ports.

Severity: a warning of likely cause when the rule drops VXLAN from every
sender, or its counter shows packets dropped; info of unknown cause for
an allow-list's drop without counters (Calico's own, normal), a warning
of unknown cause when a client transcript (curl, nc, telnet) beside it
shows a connection going unanswered (timed out, no route to host: what a
dropped tunnel leaves the client with); nothing when its counter is 0.

Fix: allow the overlay's port between the nodes (iptables -I INPUT -p
udp --dport 4789 -s NODE_CIDR -j ACCEPT, or the firewall's own setting);
for another tunnel beside Calico's, give it another UDP port (or add its
hosts to Calico's allowed hosts).`,
}

// matchSetRE reads an ipset match's set: "--match-set cali40all-vxlan-net src".
var matchSetRE = lazyre.New(`--match-set (\S+) src`)

// dportHas tells whether an iptables or nft port match ("4789",
// "4780:4790", "80,4789", "4780-4790") holds port.
func dportHas(d string, port int) bool {
	for _, part := range strings.Split(strings.Trim(d, "{} "), ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, ":")
		if !isRange {
			lo, hi, isRange = strings.Cut(part, "-")
		}
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				continue
			}
		}
		if a <= port && port <= b {
			return true
		}
	}
	return false
}

// vxlanPortsOf returns the VXLAN ports of node: the well-known ones and
// the dstports of its vxlan links.
func vxlanPortsOf(s *model.Snapshot, node string) []int {
	ports := []int{4789, 8472} // IANA's, and Linux's default that flannel keeps
	for _, l := range s.LinksOf(node) {
		if l.Kind == "vxlan" && l.Port > 0 && !containsInt(ports, l.Port) {
			ports = append(ports, l.Port)
		}
	}
	return ports
}

func containsInt(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// inboundChain tells whether packets on their way in can pass chain: not
// an output or postrouting chain.
func inboundChain(c *model.Chain) bool {
	n := strings.ToLower(c.Name)
	if c.Hook != "" {
		return c.Hook == "input" || c.Hook == "forward" || c.Hook == "prerouting"
	}
	return !strings.Contains(n, "output") && !strings.Contains(n, "postrouting")
}

func runVXLANPortBlocked(p *analyzer.Pass) error {
	s := p.Snap
	for _, rs := range s.Netfilter {
		ports := vxlanPortsOf(s, rs.Node)
		for _, t := range rs.Tables {
			if t.Name != "" && t.Name != "filter" && t.Name != "raw" {
				continue
			}
			for _, c := range t.Chains {
				if !inboundChain(c) {
					continue
				}
				for i, r := range c.Rules {
					if (r.Target != "DROP" && r.Target != "REJECT" && r.Target != "drop" && r.Target != "reject") ||
						r.Proto != "udp" || r.NotProto || r.NotDPort || r.DPort == "" {
						continue
					}
					port := 0
					for _, pt := range ports {
						if dportHas(r.DPort, pt) {
							port = pt
							break
						}
					}
					if port == 0 || (r.Counted && r.Packets == 0) {
						continue
					}
					allow := vxlanAllowBefore(c.Rules[:i], port)
					f := vxlanBlockedFinding(rs, c, r, allow, port)
					if f.Certainty == analyzer.Unknown {
						vxlanUnanswered(s, &f)
					}
					p.Report(f)
				}
			}
		}
	}
	return nil
}

// vxlanAllowBefore returns the ACCEPT of port from some hosts only (a
// source or an ipset match) among rules, the last one, or nil.
func vxlanAllowBefore(rules []*model.Rule, port int) *model.Rule {
	for i := len(rules) - 1; i >= 0; i-- {
		r := rules[i]
		if (r.Target == "ACCEPT" || r.Target == "accept") && r.Proto == "udp" && dportHas(r.DPort, port) &&
			(r.Src != "" || matchSetRE.MatchString(r.Raw)) {
			return r
		}
	}
	return nil
}

func vxlanBlockedFinding(rs *model.Ruleset, c *model.Chain, r, allow *model.Rule, port int) analyzer.Finding {
	restricted := allow != nil || r.Src != "" || matchSetRE.MatchString(r.Raw)
	f := analyzer.Finding{
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Subject:   subject("node", rs.Node, "chain", c.Name, "port", strconv.Itoa(port)),
		Facts:     map[string]any{"chain": c.Name, "port": port, "rule": r.Raw},
		Evidence:  []analyzer.Evidence{{Pos: r.Pos, Note: fmt.Sprintf("%s of UDP %d in %s", r.Target, port, c.Name)}},
		Supports:  []string{fmt.Sprintf("%s: %s", r.Pos, r.Raw)},
	}
	if rs.Node != "" {
		f.Facts["node"] = rs.Node
	}
	from := "every host"
	if allow != nil {
		from = "hosts not accepted by the rule before it"
		if m := matchSetRE.FindStringSubmatch(allow.Raw); m != nil {
			from = "hosts outside the " + m[1] + " set"
			f.Facts["allowed_set"] = m[1]
		} else if allow.Src != "" {
			from = "hosts outside " + allow.Src
		}
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: allow.Pos, Note: fmt.Sprintf("ACCEPT of UDP %d from some hosts", port)})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the rule before it accepts only %s", allow.Pos, strings.TrimPrefix(from, "hosts outside ")))
	} else if restricted {
		from = "the hosts it matches"
	}
	f.Facts["dropped_from"] = from
	decide := fmt.Sprintf("# the counter of the %s of UDP %d climbing while the overlay's traffic fails\niptables -nvL %s",
		r.Target, port, shq.Quote(c.Name))
	on := ""
	if rs.Node != "" {
		on = " on " + rs.Node
	}
	switch {
	case r.Counted:
		f.Facts["packets"] = r.Packets
		f.Supports = append(f.Supports, fmt.Sprintf("its counter shows %d %s dropped", r.Packets, plural(int(r.Packets), "packet", "packets")))
		f.Alternatives = []string{fmt.Sprintf("the dropped packets are another tunnel's on port %d, not the overlay's", port)}
		f.Decide = "# the sources of the VXLAN packets that arrive\ntcpdump -nn -i any udp port " + strconv.Itoa(port)
	case restricted:
		f.Severity, f.Certainty = analyzer.Info, analyzer.Unknown
		f.Alternatives = []string{fmt.Sprintf("a VXLAN tunnel from a host outside the allowed ones (a VM, another overlay) "+
			"on port %d, dropped here", port), "nothing dropped: the allowed hosts are the only senders"}
		f.Decide = decide
		f.Contradicts = []string{fmt.Sprintf("the rule's counter at 0 (iptables -nvL %s)", c.Name)}
	default:
		f.Alternatives = []string{"a rule before it in the way in that accepts the overlay's packets (another chain, a higher priority)"}
		f.Decide = decide
		f.Contradicts = []string{fmt.Sprintf("an ACCEPT of UDP %d from the nodes before the rule, or its counter at 0", port)}
	}
	f.Title = fmt.Sprintf("%s%s drops VXLAN (UDP %d) from %s", c.Name, on, port, from)
	f.Summary = fmt.Sprintf("The rule %s in %s drops UDP packets to port %d, VXLAN's, from %s. VXLAN packets it "+
		"takes never reach the tunnel device, so the Pods behind it are unreachable from the other side of the tunnel.",
		r.Pos, c.Name, port, from)
	if r.Counted {
		f.Summary += fmt.Sprintf(" Its counter shows %d %s dropped.", r.Packets, plural(int(r.Packets), "packet", "packets"))
	}
	f.Cause = fmt.Sprintf("The firewall of the receiving node (%s) drops VXLAN's port %d from %s.", c.Name, port, from)
	if f.Certainty == analyzer.Unknown {
		f.Cause = fmt.Sprintf("Not established: %s drops VXLAN only from %s, which is normal for an overlay that "+
			"allows its own nodes; a tunnel from another host on port %d would be dropped.", c.Name, from, port)
	}
	f.Fix = fmt.Sprintf("Allow UDP %d from the nodes that send the tunnel's packets before that rule; for a tunnel "+
		"beside Calico's, give it another UDP port or add its hosts to Calico's allowed hosts.", port)
	return f
}

// vxlanUnanswered raises the unknown finding f of an allow-list's drop to
// a warning when a client transcript shows a connection that went
// unanswered: what a tunnel whose packets are dropped leaves its client
// with. It stays of unknown cause: nothing ties that client's path to the
// tunnel the rule drops.
func vxlanUnanswered(s *model.Snapshot, f *analyzer.Finding) {
	for i := range s.Client {
		r := &s.Client[i]
		switch r.Outcome {
		case model.ClientTimeout, model.ClientNoAnswer, model.ClientNoRoute:
		default:
			continue
		}
		f.Severity = analyzer.Warning
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: r.Pos, Note: r.Message})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %q: a connection to %s went unanswered (%s)",
			r.Pos, r.Message, r.Target, r.Outcome))
		f.Facts["unanswered"] = r.Target
		f.Summary += fmt.Sprintf(" A client's connection to %s went unanswered (%s, %s): if its packets cross a "+
			"tunnel from a host outside the allowed ones, this rule drops them.", r.Target, r.Outcome, r.Pos)
		return
	}
}
