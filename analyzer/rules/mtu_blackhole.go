package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// MTUBlackhole finds connections whose large segments a path drops while
// small ones pass.
var MTUBlackhole = &analyzer.Rule{
	Name:        "mtu-blackhole",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindCapture},
	Uses:        []model.Kind{model.KindNetfilter, model.KindLinks},
	SubjectKeys: []string{"node", "source", "destination"},
	Run:         runMTUBlackhole,
	Explains:    []*analyzer.Rule{ICMPUnreachable},
	Symptoms:    []analyzer.SymptomRef{ProbesTimeOut.At(80), ServiceUnreachable.At(120), ConnectionsTimeOut.At(60)},
	Decide: "# from the client's node, then with smaller sizes: the largest that passes is the path's MTU, less 28\n" +
		"ping -M do -s 1472 SERVER\n# the overlay's and the Pods' MTU\nip -d link",
	Plot: analyzer.Plot{
		Parts: []analyzer.PlotPart{analyzer.PlotAttempts, analyzer.PlotICMP, analyzer.PlotCitedLogs},
		ICMP:  analyzer.ICMPTooBig,
		// The sender of the large segments is the server of its
		// connections, the receiver their client.
		Servers: []analyzer.Selector{analyzer.InSubject("source")},
		Clients: []analyzer.Selector{analyzer.InSubject("destination")},
	},
	Proof: "the capture's large segments retransmitted without acknowledgment while small ones pass, and a " +
		"firewall rule in the bundle (iptables-save, ip6tables-save) that drops or rejects ICMP fragmentation-needed " +
		"or Packet Too Big (or all ICMP)",
	Unproven: "the connections whose large segments were retransmitted without acknowledgment while smaller ones " +
		"passed, whether an ICMP fragmentation-needed (Packet Too Big) for them was seen, the causes not ruled out " +
		"and the ping that finds the largest packet the path carries; a fragmentation-needed (Packet Too Big) error " +
		"in a capture that holds no connection (a ticket's one line of tcpdump) is reported with its MTU as a " +
		"warning of unknown cause: whether its sender heeded it is not shown",
	Doc: `a path drops large segments while small ones pass

A connection completes its handshake and small segments (a request, a
response's headers) are acknowledged, but the full-size segments that follow
are retransmitted again and again and never acknowledged: a link on the path
has a smaller MTU than the sender's, the packets carry DF (Linux sets it on
TCP), and the ICMP fragmentation-needed (ICMPv6 Packet Too Big) that should
tell the sender to send smaller is dropped by a firewall or never sent. The
application sees transfers hang after the first bytes: TLS handshakes with
large certificates, HTTP responses, kubectl exec and logs. Overlays
(VXLAN 50 bytes, Geneve, WireGuard 60-80 bytes) on a node MTU that leaves no
room for them are the usual cause in a cluster.

Evidence: the capture's retransmissions of each large segment, the largest
segment the peer acknowledged, the handshake, and the ICMP errors quoting the
connection if any; the links' MTUs and types where the bundle lists them
(ip -d link, ip -j link): a link, or an overlay (its own MTU, or the MTU of
the node's other links minus its overhead: VXLAN and Geneve 50, WireGuard
60, IP-in-IP 20), too small for the packets the large segments make
supports the cause, and so does an MSS the handshake announced that makes
packets larger than that link carries; links that all carry them weigh
against an overlay on those nodes. A capture on the sending host sees segments before
segmentation offload splits them: their sizes are those the host handed to
its NIC.

An ICMP fragmentation-needed or Packet Too Big on a connection whose larger
segments then get through is path-MTU discovery working: icmp-unreachable
reports it as info, and this rule is silent.

Severity: error when a firewall rule in the bundle drops or rejects ICMP
fragmentation-needed (Packet Too Big, or all ICMP) and no such ICMP for the
connection reached the capture; warning (likely) from the capture alone: the
pattern is that of a blackhole, but which link and which filter it does not
show.

Fix: find the largest packet the path carries (ping -M do -s SIZE), then lower
the sender's MTU (the CNI's MTU: the node's minus the overlay's overhead),
clamp the MSS on the router (iptables -t mangle -A FORWARD -p tcp --tcp-flags
SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu), and let ICMP
fragmentation-needed / Packet Too Big through every firewall on the path.`,
}

// minBlackholeRetx is how many retransmissions of never acknowledged large
// segments a connection needs to count.
const minBlackholeRetx = 2

// mtuGroup is the stalled connections of one sender to one receiver.
type mtuGroup struct {
	node             string
	sender, receiver netip.Addr
	attempts         []*model.Attempt
	data             []*model.DataSizes

	// The judgement (judgeMTU), which mtuWords words.
	retx, size, acked int              // the large segments' retransmissions, their size, the largest acknowledged
	icmp              *model.ICMPEvent // an ICMP error that quotes the sender's packets, nil when none
	dropRule          *model.Rule      // a firewall rule that drops such errors, when no error was seen
}

func runMTUBlackhole(p *analyzer.Pass) error {
	s := p.Snap
	var groups []*mtuGroup
	byKey := map[string]*mtuGroup{}
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.FirstAck == nil && a.Outcome != model.OutcomeEstablished {
			continue // the handshake must have passed: small packets get through
		}
		for _, side := range []struct {
			d        *model.DataSizes
			toServer bool
		}{{a.ServerData, false}, {a.ClientData, true}} {
			d := side.d
			if d == nil || d.LargeRetx < minBlackholeRetx || d.LargeRetxSize < minBlackholeSize {
				continue
			}
			snd, rcv := a.Server.Addr(), a.Client.Addr()
			if side.toServer {
				snd, rcv = rcv, snd
			}
			key := a.Node + "|" + snd.String() + "|" + rcv.String()
			g := byKey[key]
			if g == nil {
				g = &mtuGroup{node: a.Node, sender: snd, receiver: rcv}
				byKey[key] = g
				groups = append(groups, g)
			}
			g.attempts = append(g.attempts, a)
			g.data = append(g.data, d)
		}
	}
	for _, g := range groups {
		f := judgeMTU(s, g)
		f.Title, f.Summary, f.Cause, f.Fix = mtuWords(g)
		p.Report(f)
	}
	if len(s.Attempts) == 0 {
		reportFragNeededAlone(p)
	}
	return nil
}

// reportFragNeededAlone reports the fragmentation-needed errors of a
// capture that holds no connection (a ticket's one line of tcpdump): a
// hop said the packets to a destination were larger than it carries, and
// nothing shows whether their sender heeded it.
func reportFragNeededAlone(p *analyzer.Pass) {
	seen := map[string]bool{}
	for i := range p.Snap.ICMP {
		e := &p.Snap.ICMP[i]
		dst := e.Quoted.Dst.Addr()
		if e.Copy || e.MTU == 0 || !dst.IsValid() || !(e.What == "frag-needed" || e.What == "packet-too-big") ||
			seen[e.Node+dst.String()] {
			continue
		}
		seen[e.Node+dst.String()] = true
		src := ""
		if e.To.IsValid() {
			src = e.To.String()
		}
		p.Report(analyzer.Finding{
			Severity: analyzer.Warning, Certainty: analyzer.Unknown,
			Subject: subject("node", e.Node, "source", src, "destination", dst.String()),
			Title:   fmt.Sprintf("Packets to %s are larger than a hop on the path carries (%s: MTU %d)", dst, icmpWhat(e.V6), e.MTU),
			Summary: fmt.Sprintf("An %s (%s) says packets to %s must be at most %d bytes. The capture holds no "+
				"connection to show whether their sender heeded it: a sender behind a tunnel or a VPN, or one the error "+
				"does not reach, keeps sending packets too large, and large transfers hang.", icmpWhat(e.V6), e.Pos, dst, e.MTU),
			Cause: fmt.Sprintf("Not established: the packets to %s are larger than the path's MTU of %d; whether they are "+
				"lost depends on whether their sender lowers them on the error.", dst, e.MTU),
			Fix: fmt.Sprintf("Make the sender's packets fit: set the MTU of its interface or tunnel to %d or less (an "+
				"overlay's or VPN client's MTU), or clamp TCP's MSS to it.", e.MTU),
			Supports: []string{fmt.Sprintf("%s: %s, MTU %d, for packets to %s", e.Pos, icmpWhat(e.V6), e.MTU, dst)},
			Alternatives: []string{
				"the sender lowers its packets on the error (path MTU discovery works) and nothing is lost",
				"the error does not reach the application's sender (a tunnel or a VPN client inside, a firewall dropping ICMP)",
			},
			Decide:   fmt.Sprintf("# from the sender: it fails when the path carries less\nping -M do -s %d %s", e.MTU-28, dst),
			Facts:    map[string]any{"mtu": e.MTU, "destination": dst.String()},
			Evidence: []analyzer.Evidence{{Pos: e.Pos, Note: fmt.Sprintf("%s, mtu %d", e.What, e.MTU)}},
		})
	}
}

// minBlackholeSize is the smallest segment whose loss can be the path's
// MTU: 576-byte IPv4 packets (RFC 791) always pass.
const minBlackholeSize = 536

// judgeMTU judges g: the large segments never acknowledged while smaller
// ones pass, the ICMP errors seen or the rule that drops them, the links
// too small. It fills in g and returns the finding without its words.
func judgeMTU(s *model.Snapshot, g *mtuGroup) analyzer.Finding {
	var ev []analyzer.Evidence
	var conns []string
	for i, a := range g.attempts {
		d := g.data[i]
		g.retx += d.LargeRetx
		g.size = max(g.size, d.LargeRetxSize)
		g.acked = max(g.acked, d.MaxAcked)
		conns = append(conns, fmt.Sprintf("%s -> %s", a.Client, a.Server))
		if i >= maxGroupEvidence {
			continue
		}
		if len(a.SYN) > 0 {
			ev = append(ev, analyzer.Evidence{Pos: a.SegPos(a.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s", a.Client, a.Server)})
		}
		if a.FirstAck != nil {
			ev = append(ev, analyzer.Evidence{Pos: a.SegPos(*a.FirstAck), Note: "handshake completed"})
		}
		for _, r := range d.Retx {
			ev = append(ev, analyzer.Evidence{Pos: a.SegPos(r), Note: fmt.Sprintf("%d-byte segment from %s retransmitted, never acknowledged",
				d.LargeRetxSize, g.sender)})
		}
	}
	retx, size, acked := g.retx, g.size, g.acked
	// ICMP errors that quote the sender's packets to the receiver.
	var icmp []*model.ICMPEvent
	for i := range s.ICMP {
		e := &s.ICMP[i]
		if e.Copy || (e.What != "frag-needed" && e.What != "packet-too-big") {
			continue
		}
		if e.Quoted.Src.Addr() == g.sender && e.Quoted.Dst.Addr() == g.receiver {
			icmp = append(icmp, e)
		}
	}
	values := map[string]any{
		"sender":          g.sender.String(),
		"receiver":        g.receiver.String(),
		"connections":     conns,
		"retransmissions": retx,
		"segment_size":    size,
		"largest_acked":   acked,
		"icmp_seen":       len(icmp),
	}
	if g.node != "" {
		values["node"] = g.node
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "source", g.sender.String(), "destination", g.receiver.String()),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     values,
		Supports: []string{fmt.Sprintf("%s sent its %d-byte segment %d %s without an acknowledgment, while its "+
			"segments of up to %d bytes were acknowledged and the handshake passed", g.sender, size, retx,
			plural(retx, "time", "times"), acked)},
		Alternatives: []string{
			"ICMP fragmentation-needed (Packet Too Big) is dropped on the path by a firewall, so the sender never learns the path MTU",
			"an overlay (VXLAN, Geneve, WireGuard) makes the path MTU smaller than the interfaces' MTU, and the MSS is not clamped",
			"a link or middlebox drops large packets without answering",
		},
		Decide: fmt.Sprintf("# from %s: lower -s until it passes; the largest is the path MTU minus 28\nping -M do -s 1472 %s",
			g.sender, g.receiver),
	}
	if g.receiver.Is6() {
		f.Decide = fmt.Sprintf("# from %s: lower -s until it passes; the largest is the path MTU minus 48\nping -6 -M do -s 1452 %s",
			g.sender, g.receiver)
	}
	if len(icmp) > 0 {
		e := icmp[0]
		g.icmp = e
		ev = append(ev, analyzer.Evidence{Pos: e.Pos, Note: fmt.Sprintf("ICMP %s from %s for %s", e.What, e.From, e.Quoted.Dst)})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: ICMP %s from %s quoting the connection", e.Pos, e.What, e.From))
		f.Alternatives = append([]string{"path-MTU discovery is off on the sender (net.ipv4.ip_no_pmtu_disc = 1), or the ICMP " +
			"is dropped between the capture and the sender's stack"}, f.Alternatives...)
	} else if r := icmpDropRule(s, g.receiver.Is6()); r != nil {
		g.dropRule = r
		f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
		ev = append(ev, analyzer.Evidence{Pos: r.Pos, Note: "drops " + icmpWhat(g.receiver.Is6())})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s", r.Pos, strings.TrimSpace(r.Raw)))
		f.Contradicts = append(f.Contradicts, "the bundle does not say which host of the path the rule is on")
		f.Alternatives = nil
		f.Decide = ""
		values["icmp_drop_rule"] = r.Pos.String()
	} else {
		f.Contradicts = append(f.Contradicts, "no ICMP fragmentation-needed or Packet Too Big quotes the connection in the "+
			"capture; one that reached the sender would show there if the capture was taken on it")
	}
	mtuLinkEvidence(s, g, size, &f, &ev)
	f.Evidence = dedupEvidence(ev)
	return f
}

// mtuWords words the finding of g, as judgeMTU judged it.
func mtuWords(g *mtuGroup) (title, summary, cause, fix string) {
	n, retx, size, acked := len(g.attempts), g.retx, g.size, g.acked
	title = fmt.Sprintf("%d-byte segments from %s to %s are dropped while smaller ones pass (%d %s)", size, g.sender,
		g.receiver, n, plural(n, "connection", "connections"))
	summary = fmt.Sprintf("%d %s between %s and %s completed the handshake and had segments of up to %d bytes "+
		"acknowledged, but %s's %d-byte segments were retransmitted %d %s and never acknowledged: the path "+
		"drops packets of that size. The application sees the transfer hang after its first bytes.", n,
		plural(n, "connection", "connections"), g.sender, g.receiver, acked, g.sender, size, retx, plural(retx, "time", "times"))
	switch e, r := g.icmp, g.dropRule; {
	case e != nil:
		cause = fmt.Sprintf("A link on the path is smaller than %s's segments, and the ICMP %s that %s sent was seen "+
			"here but did not make the sender send smaller: it is dropped between the capture and the sender's stack, "+
			"or path-MTU discovery is off on the sender (net.ipv4.ip_no_pmtu_disc).", g.sender, e.What, e.From)
	case r != nil:
		cause = fmt.Sprintf("A link on the path carries smaller packets than %s sends, and the firewall rule at %s drops "+
			"the %s that would tell it so: %s never learns the path MTU and sends its large segments again and again.",
			g.sender, r.Pos, icmpWhat(g.receiver.Is6()), g.sender)
	default:
		cause = fmt.Sprintf("A link on the path carries smaller packets than %s sends, and no ICMP fragmentation-needed "+
			"(Packet Too Big) reached the capture to make it send smaller: a firewall on the path drops it, or the "+
			"link drops large packets without one.", g.sender)
	}
	fix = fmt.Sprintf("Find the largest packet the path from %s to %s carries (`ping -M do -s SIZE %s`); lower the "+
		"sender's MTU to it (the CNI's MTU: the node's minus the overlay's overhead), clamp the MSS on the routers "+
		"(`iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu`), and let ICMP "+
		"fragmentation-needed / Packet Too Big through every firewall on the path.", g.sender, g.receiver, g.receiver)
	return title, summary, cause, fix
}

// icmpWhat names the ICMP error that carries a path's MTU.
func icmpWhat(v6 bool) string {
	if v6 {
		return "ICMPv6 Packet Too Big"
	}
	return "ICMP fragmentation-needed"
}

// icmpDropRule returns a rule of the bundle's rulesets of the family that
// drops or rejects the ICMP error carrying the path MTU: by its type
// (fragmentation-needed, 3/4, packet-too-big, 2), or all ICMP.
func icmpDropRule(s *model.Snapshot, v6 bool) *model.Rule {
	protos := []string{"icmp", "1"}
	types := []string{"fragmentation-needed", "3/4"}
	if v6 {
		protos = []string{"ipv6-icmp", "icmpv6", "58"}
		types = []string{"packet-too-big", "--icmpv6-type 2 "}
	}
	for _, rs := range s.Netfilter {
		if (rs.Family == "ipv6") != v6 && rs.Family != "inet" {
			continue
		}
		for _, t := range rs.Tables {
			for _, c := range t.Chains {
				for _, r := range c.Rules {
					if (r.Target != "DROP" && r.Target != "REJECT") || r.NotProto || !slices.Contains(protos, strings.ToLower(r.Proto)) {
						continue
					}
					typed := strings.Contains(r.Raw, "icmp-type") || strings.Contains(r.Raw, "icmpv6-type")
					if !typed {
						return r // all ICMP
					}
					for _, ty := range types {
						if strings.Contains(r.Raw+" ", ty) {
							return r
						}
					}
				}
			}
		}
	}
	return nil
}

// linkLimit is the largest packet a link of the bundle carries, and why.
type linkLimit struct {
	link  model.Link
	limit int
	why   string
}

// smallestLink returns the link of the bundle that carries the smallest
// packets: an overlay's own MTU, the MTU of the other links of its node
// minus the overlay's overhead, or any other link's MTU. Loopback and links
// without an MTU shown are left out; ok is false when no MTU is shown.
func smallestLink(s *model.Snapshot) (linkLimit, int, bool) {
	var best linkLimit
	n, seen := 0, false
	consider := func(c linkLimit) {
		if !seen || c.limit < best.limit {
			best, seen = c, true
		}
	}
	links := s.LinksOf("")
	for _, l := range links {
		if l.MTU == 0 || l.Dev == "lo" {
			continue
		}
		n++
		desc := l.Dev
		if l.Kind != "" {
			desc += " (" + l.Kind + ")"
		}
		consider(linkLimit{link: l, limit: l.MTU, why: fmt.Sprintf("%s%s has MTU %d", nodePrefix(l.Node), desc, l.MTU)})
		oh := model.Overhead(l.Kind)
		if oh == 0 {
			continue
		}
		// The overlay's packets leave through the node's other links: the
		// smallest of them, less the overhead, bounds what it carries.
		for _, u := range links {
			if u.Node != l.Node || u.MTU == 0 || u.Dev == "lo" || model.Overhead(u.Kind) != 0 || u.MTU-oh >= l.MTU {
				continue
			}
			consider(linkLimit{link: l, limit: u.MTU - oh, why: fmt.Sprintf("%s%s carries packets of up to %d bytes: "+
				"%s's MTU %d less the %d bytes of %s", nodePrefix(l.Node), desc, u.MTU-oh, u.Dev, u.MTU, oh, l.Kind)})
		}
	}
	return best, n, seen
}

// nodePrefix names a node before a device: "node1: ".
func nodePrefix(node string) string {
	if node == "" {
		return ""
	}
	return node + ": "
}

// mtuLinkEvidence weighs the links' MTUs the bundle lists against the
// packets the group's large segments make: the segment plus the IP and TCP
// headers without options (40 bytes over IPv4, 60 over IPv6).
func mtuLinkEvidence(s *model.Snapshot, g *mtuGroup, size int, f *analyzer.Finding, ev *[]analyzer.Evidence) {
	pkt := size + 40
	if g.receiver.Is6() {
		pkt = size + 60
	}
	if !s.Has(model.KindLinks) && len(s.Links) == 0 { // ip addr's link lines give links too
		f.Contradicts = append(f.Contradicts, "the bundle lists no link MTUs (ip -d link): a link or overlay too small for "+
			"the segments would show there")
		return
	}
	best, n, ok := smallestLink(s)
	if !ok {
		f.Contradicts = append(f.Contradicts, "the bundle's link listings show no MTU")
		return
	}
	f.Facts["smallest_link_mtu"] = best.limit
	// The MSS the handshake agreed on (the smaller of the two options):
	// what the sender was allowed to send.
	mss, hdr := 0, pkt-size
	for _, a := range g.attempts {
		m := int(min(a.MSS, a.ServerMSS))
		if a.MSS == 0 || a.ServerMSS == 0 {
			m = int(max(a.MSS, a.ServerMSS))
		}
		mss = max(mss, m)
	}
	if mss > 0 && mss+hdr > best.limit && len(g.attempts[0].SYN) > 0 {
		a := g.attempts[0]
		f.Facts["mss"] = mss
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the handshake announced MSS %d, packets of up to %d bytes, more than "+
			"the %d the smallest link carries", a.SegPos(a.SYN[0]), mss, mss+hdr, best.limit))
	}
	if best.limit < pkt {
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s, less than the %d-byte packets the %d-byte segments make",
			best.link.Pos, best.why, pkt, size))
		*ev = append(*ev, analyzer.Evidence{Pos: best.link.Pos, Note: best.why})
		return
	}
	f.Contradicts = append(f.Contradicts, fmt.Sprintf("the %d %s the bundle lists all carry the %d-byte packets the "+
		"%d-byte segments make (the smallest: %s, at %s): the small link is on a host the bundle does not list",
		n, plural(n, "link MTU", "link MTUs"), pkt, size, best.why, best.link.Pos))
}
