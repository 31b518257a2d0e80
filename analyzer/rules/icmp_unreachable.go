package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// ICMPUnreachable reports ICMP errors and redirects, tied to the attempts
// they answer and to what their destination is in the cluster.
var ICMPUnreachable = &analyzer.Rule{
	Name:        "icmp-unreachable",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindCapture, model.KindClient},
	Uses:        []model.Kind{model.KindKube},
	Requires:    []analyzer.FactKey{facts.AddrRoles, facts.Attempts, facts.AppErrors},
	SubjectKeys: []string{"node", "from", "icmp", "address"},
	Run:         runICMPUnreachable,
	Symptoms:    []analyzer.SymptomRef{ProbesTimeOut.At(40), LoadBalancer502.At(120), DNSTimeouts.At(50)},
	Decide:      "# on the sender of the errors\ntcpdump -ni any 'icmp or icmp6'\nip route get DESTINATION",
	Plot: analyzer.Plot{
		Parts: []analyzer.PlotPart{analyzer.PlotICMP, analyzer.PlotAttempts, analyzer.PlotCitedLogs},
		ICMP:  analyzer.ICMPSenderKind,
		// The attempts the errors answer: to the destination they quote.
		Servers: []analyzer.Selector{analyzer.InSubject("address")},
	},
	Proof: "the ICMP errors in the capture, joined with what the destination is (a Service address or ready " +
		"endpoint: Services, Endpoints) or with the neighbor tables that resolve it to the sender's own MAC",
	Unproven: "the ICMP errors from the capture alone, or a client's \"No route to host\", with the sender's possible " +
		"reasons and the command that decides",
	Doc: `traffic answered with ICMP unreachable or a redirect

In a capture, a host or router answers packets with ICMP destination
unreachable (host, port, network, administratively prohibited, fragmentation
needed) or tells the sender to use another next hop (redirect). Each error
quotes the packet it answers; netmortem matches it to the connection attempt
with that 4-tuple.

What it usually means in a cluster: "port unreachable" from a node for a
Service address is kube-proxy rejecting traffic to a Service without
endpoints; "host unreachable" from a node for a VIP means that node holds the
route or the ARP entry for the VIP but cannot reach its owner (a VIP claimed by
two load-balancer controllers, a stale ARP entry); "admin prohibited" is a
firewall REJECT; "fragmentation needed" is an MTU problem on an overlay;
a redirect for a VIP means the sender's next hop for it is another host on the
same link; "network unreachable" is a missing route, not an ARP problem. An
error that quotes no packet (too short, or an ICMPv6 redirect without its
Redirected Header option, which names its destination in its body) is
counted for the host it is sent to, and, with no destination to ask a route
for, the command that decides is a capture on that host. Time-exceeded
errors are grouped per destination host, whatever router sends them: a
traceroute is one finding naming the routers in hop order.

Without a capture of the destination, a client transcript saying "No route
to host" (EHOSTUNREACH: an ICMP host unreachable or prohibited came back, or
the neighbour resolution for the address failed) is reported as a warning of
unknown cause: a host firewall's REJECT (firewalld's default
icmp-host-prohibited) gives the same words as an address nobody owns; a
capture of ICMP on the client's node decides.

Evidence: the ICMP frames, the matched attempts' SYN frames, or the client
transcripts' lines; the Kubernetes objects that say what the destination is.

An ICMP fragmentation-needed (ICMPv6 Packet Too Big) on a connection that
then carries acknowledged data is path-MTU discovery working: info (see
mtu-blackhole for the path that drops it). One sent by the connection's own
client, whose SYN advertised a larger MSS than the error's MTU carries
(MSS 1460, "need to frag (mtu 1440)"), names an MTU of 1500 behind that
client in a network of 1440 (docker-in-docker's containers in a Pod, a
nested bridge) as likely.

Severity: error when the destination is a Service address or a ready endpoint;
warning otherwise.

Fix: depends on the type; the finding names it (endpoints of the Service,
the owner of the VIP, the firewall rule, the MTU).`,
}

// icmpGroup gathers the ICMP errors of one sender, kind and destination.
type icmpGroup struct {
	from, what, dst string
	// addr is the destination as the Subject names it: dst without
	// the port when that is a client's ephemeral port.
	addr   string
	events []*model.ICMPEvent
	// routers are the senders of time-exceeded errors, grouped per
	// destination host whatever router sends them and whatever the port: a
	// traceroute is one finding, not one per hop and probe.
	routers []string

	// The judgement (judgeICMP), which icmpWords words.
	senders, attempts []string       // who got the errors; the connection attempts they answer
	destIs            string         // what the destination is in the cluster, "" when nothing
	macOwner          string         // the destination resolves to the MAC of the error's sender: its owner
	appErrors         int            // the failures applications log reaching the destination
	pmtud             *model.Attempt // a connection that goes on after the error: path-MTU discovery
	mssOver           *model.Attempt // the sender's own attempt advertising an MSS above the MTU (mssAboveMTU)
	mssMTU            int            // that MTU
}

// count returns how many errors the group stands for, those a capture
// read in summary mode counted without keeping them included.
func (g *icmpGroup) count() int {
	n := 0
	for _, e := range g.events {
		n += 1 + e.Repeats
	}
	return n
}

func runICMPUnreachable(p *analyzer.Pass) error {
	s := p.Snap
	var groups []*icmpGroup
	byKey := map[string]*icmpGroup{}
	for i := range s.ICMP {
		ev := &s.ICMP[i]
		if ev.Copy || !ev.From.IsValid() { // the same error seen on another interface; a line cut before its sender
			continue
		}
		dst, addr := icmpDestination(ev)
		if ephemeralSide(ev.Quoted) {
			addr = ev.Quoted.Dst.Addr().String()
		}
		from := ev.From.String()
		if ev.What == "ttl-exceeded" {
			from = ""
		}
		key := ev.Node + "|" + from + "|" + ev.What + "|" + addr
		g := byKey[key]
		if g == nil {
			g = &icmpGroup{from: from, what: ev.What, dst: dst, addr: addr}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.events = append(g.events, ev)
		if ev.What == "ttl-exceeded" && !slices.Contains(g.routers, ev.From.String()) {
			g.routers = append(g.routers, ev.From.String())
		}
	}
	for _, g := range groups {
		f := judgeICMP(p, g)
		f.Title, f.Summary, f.Cause, f.Fix = icmpWords(g)
		p.Report(f)
	}
	reportNoRoute(p)
	return nil
}

// reportNoRoute reports the destinations client transcripts could not
// reach with "No route to host", when no ICMP error in a capture is about
// them: the client's kernel got an ICMP host unreachable or prohibited, or
// could not resolve the next hop; who sent what stays unknown.
func reportNoRoute(p *analyzer.Pass) {
	s, roles := p.Snap, facts.AddrRoles.Of(p)
	quoted := map[netip.Addr]bool{}
	for i := range s.ICMP {
		quoted[s.ICMP[i].Quoted.Dst.Addr()] = true
	}
	type key struct {
		node string
		dst  netip.AddrPort
	}
	var order []key
	byKey := map[key][]*model.ClientResult{}
	for i := range s.Client {
		r := &s.Client[i]
		dst := netip.AddrPortFrom(r.Addr.Addr().Unmap(), r.Addr.Port())
		if r.Outcome != model.ClientNoRoute || !dst.Addr().IsValid() || quoted[dst.Addr()] {
			continue
		}
		k := key{r.Node, dst}
		if byKey[k] == nil {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	for _, k := range order {
		rs := byKey[k]
		dst, host := k.dst.String(), k.dst.Addr().String()
		if k.dst.Port() == 0 {
			dst = host
		}
		var ev []analyzer.Evidence
		for i, r := range rs {
			if i < maxGroupEvidence {
				ev = append(ev, analyzer.Evidence{Pos: r.Pos, Note: r.Message})
			}
		}
		what := ""
		values := map[string]any{"destination": dst, "count": len(rs), "source": "client transcript"}
		if roles := roles.Of(k.dst.Addr(), k.dst.Port()); len(roles) > 0 {
			values["destination_is"] = roles.Words()
			what = fmt.Sprintf(" (%s)", roles.Words())
			ev = append(ev, roles.Evidence()...)
		}
		if k.node != "" {
			values["node"] = k.node
		}
		f := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Unknown, Facts: values, Evidence: ev,
			Subject: subject("node", k.node, "icmp", "no-route", "address", dst)}
		f.Title = fmt.Sprintf("%s is unreachable: a client transcript says %q", dst, rs[0].Message)
		f.Summary = fmt.Sprintf("%d %s to %s%s failed with EHOSTUNREACH (\"No route to host\", in musl's words \"Host is unreachable\"): an ICMP host "+
			"unreachable or prohibited came back, or the neighbour resolution for the address failed. No capture "+
			"shows who answered.", len(rs), plural(len(rs), "attempt", "attempts"), dst, what)
		f.Cause = fmt.Sprintf("A host on the path refuses or cannot deliver traffic to %s: a firewall's REJECT "+
			"(firewalld rejects with icmp-host-prohibited, which clients report as \"No route to host\"), an "+
			"address nobody owns on its link, or a route that leads nowhere.", dst)
		f.Fix = fmt.Sprintf("Capture ICMP on the client's node while it retries (`tcpdump -ni any icmp`) to see "+
			"which host answers and with which code; check the REJECT rules of the nodes on the path "+
			"(`iptables-save | grep -i reject`, firewalld) and who owns %s (`ip neigh`, `ip route get %s`).", host, host)
		f.Supports = []string{fmt.Sprintf("%s: %s", ev[0].Pos, ev[0].Note)}
		f.Contradicts = []string{"a client transcript tells how the attempt ended, not who answered: only a capture " +
			"shows the ICMP error, its sender and its code"}
		f.Alternatives = []string{"a firewall REJECT with icmp-host-prohibited or admin-prohibited (firewalld's default)",
			"the address has no live owner on its link (a failed ARP)", "a route on the way leads nowhere"}
		f.Decide = "# on the client's node while it retries: which host sends the ICMP error, and its code\n" +
			"tcpdump -ni any icmp"
		p.Report(f)
	}
}

// judgeICMP judges g: the errors and the attempts they answer, what the
// destination is, whether the neighbor tables resolve it to the sender's
// own MAC, what applications log, and whether path-MTU discovery worked.
// It fills in g and returns the finding without its words.
func judgeICMP(p *analyzer.Pass, g *icmpGroup) analyzer.Finding {
	s, attemptIdx := p.Snap, facts.Attempts.Of(p)
	first := g.events[0]
	rs := facts.AddrRoles.Of(p).Of(first.Quoted.Dst.Addr(), first.Quoted.Dst.Port())
	sev := captureSeverity(rs)
	var ev []analyzer.Evidence
	g.senders = []string{}
	cited := map[string]bool{}
	for i, e := range g.events {
		if s := icmpSender(e).String(); !slices.Contains(g.senders, s) {
			g.senders = append(g.senders, s)
		}
		if g.routers != nil {
			// One message per router, in hop order.
			if cited[e.From.String()] || len(cited) >= 2*maxGroupEvidence {
				continue
			}
			cited[e.From.String()] = true
		} else if i >= maxGroupEvidence {
			continue
		}
		edst, _ := icmpDestination(e)
		note := fmt.Sprintf("ICMP %s from %s for %s", e.What, e.From, edst)
		if e.What == "redirect" {
			note = fmt.Sprintf("ICMP redirect from %s: reach %s via %s", e.From, edst, e.Gateway)
		}
		ev = append(ev, analyzer.Evidence{Pos: e.Pos, Note: note})
		if a := attemptIdx.At(e.Pos.File, e.AttemptFrame); a != nil && e.AttemptFrame != 0 {
			if t := fmt.Sprintf("%s -> %s", a.Client, a.Server); !slices.Contains(g.attempts, t) {
				g.attempts = append(g.attempts, t)
			}
			if len(a.SYN) > 0 {
				ev = append(ev, analyzer.Evidence{Pos: a.SegPos(a.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s answered by the ICMP error", a.Client, a.Server)})
			}
		}
	}
	ev = append(ev, rs.Evidence()...)
	values := map[string]any{
		"icmp":        g.what,
		"from":        g.from,
		"destination": g.dst,
		"count":       g.count(),
		"senders":     g.senders,
	}
	if len(g.attempts) > 0 {
		values["attempts"] = g.attempts
	}
	if len(rs) > 0 {
		g.destIs = rs.Words()
		values["destination_is"] = g.destIs
	}
	if first.What == "redirect" {
		values["gateway"] = first.Gateway.String()
	}
	// Neighbor tables: does the destination resolve to the MAC of the
	// very host that calls it unreachable?
	if owner, nev := sameMACOwner(s, first.Quoted.Dst.Addr(), first.From); owner != "" {
		g.macOwner = owner
		values["destination_mac"] = owner
		ev = append(ev, nev...)
		if first.What == "host-unreachable" || first.What == "net-unreachable" {
			sev = analyzer.Error
		}
	}
	if first.Node != "" {
		values["node"] = first.Node
	}
	f := analyzer.Finding{Severity: sev, Facts: values, Evidence: ev,
		Subject: subject("node", first.Node, "from", g.from, "icmp", g.what, "address", g.addr)}
	if g.routers != nil {
		values["from"] = g.routers
		icmpCertainty(&f, g.what, g.from, g.dst, ev)
		return f
	}
	// Applications that saw the error: "No route to host" (EHOSTUNREACH)
	// or "Connection refused" for the same address in their logs.
	if n, lev := facts.AppErrors.Of(p).For(first.Quoted.Dst.Addr(), g.what); n > 0 {
		g.appErrors = n
		f.Evidence = append(f.Evidence, lev...)
		f.Facts["app_errors"] = n
	}
	icmpCertainty(&f, g.what, g.from, g.dst, ev)
	if a, ok := pmtudWorked(s, g.events); ok {
		// Path-MTU discovery at work: normal, at most info.
		g.pmtud = a
		f.Severity, f.Certainty = analyzer.Info, analyzer.Likely
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the connection %s -> %s carries data that is acknowledged after the error",
			a.Pos, a.Client, a.Server))
		f.Contradicts, f.Alternatives, f.Decide = nil, nil, ""
	} else if last := g.events[len(g.events)-1]; isTooBig(first.What) && facts.NotYetDue(s, last.Pos.File, last.Time) {
		// Whether the sender then sent smaller segments that were
		// acknowledged is after the end of a cut capture: not shown.
		f.Severity = analyzer.Info
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s was cut less than %s after %s: whether path-MTU discovery "+
			"then worked is not shown", last.Pos.File, facts.ReplyDue, last.Pos))
	}
	if g.pmtud == nil {
		if a, mtu := mssAboveMTU(s, g.events); a != nil {
			judgeMSSAboveMTU(&f, g, a, mtu)
		}
	}
	return f
}

func isTooBig(what string) bool { return what == "frag-needed" || what == "packet-too-big" }

// icmpWords words the finding of g, as judgeICMP judged it.
func icmpWords(g *icmpGroup) (title, summary, cause, fix string) {
	first, n := g.events[0], g.count()
	what := ""
	if g.destIs != "" {
		what = fmt.Sprintf(" (%s)", g.destIs)
	}
	if g.routers != nil {
		title = fmt.Sprintf("traffic to %s runs out of TTL at %d %s: %s", g.dst, len(g.routers),
			plural(len(g.routers), "router", "routers"), listSome(g.routers, false))
		summary = fmt.Sprintf("%d ICMP time-exceeded %s from %d %s on the way to %s%s, sent to %s: the packets' "+
			"TTL ran out in transit. TTLs that grow hop by hop, as traceroute sends them, get an answer from each "+
			"router in turn; one router answering packets sent with a normal TTL is a routing loop.", n,
			plural(n, "message", "messages"), len(g.routers), plural(len(g.routers), "router", "routers"), g.dst, what,
			strings.Join(g.senders, ", "))
		cause, fix = icmpCauseFix(g.what, g.from, g.dst, "")
		return title, summary, cause, fix
	}
	if g.what == "redirect" {
		title = fmt.Sprintf("%s redirects traffic for %s to %s", g.from, g.dst, first.Gateway)
	} else {
		title = fmt.Sprintf("%s answers traffic to %s with ICMP %s", g.from, g.dst, g.what)
	}
	summary = fmt.Sprintf("%d ICMP %s %s from %s for %s%s, sent to %s.", n, g.what, plural(n, "message", "messages"),
		g.from, g.dst, what, strings.Join(g.senders, ", "))
	if len(g.attempts) > 0 {
		summary += fmt.Sprintf(" They answer the connection %s %s.", plural(len(g.attempts), "attempt", "attempts"), strings.Join(g.attempts, ", "))
	}
	if g.macOwner != "" {
		summary += fmt.Sprintf(" The neighbor table resolves %s to %s, the MAC of %s itself: that host answers ARP "+
			"for the address but does not deliver to it, so the address is announced by a host (or a load-balancer "+
			"controller) that does not serve it.", first.Quoted.Dst.Addr(), g.macOwner, first.From)
	}
	if g.appErrors > 0 {
		summary += fmt.Sprintf(" Applications log %d %s reaching %s.", g.appErrors, plural(g.appErrors, "failure", "failures"),
			first.Quoted.Dst.Addr())
	}
	if g.mssOver != nil {
		return mssAboveMTUWords(g)
	}
	cause, fix = icmpCauseFix(g.what, g.from, g.dst, first.Gateway.String())
	if a := g.pmtud; a != nil {
		title = fmt.Sprintf("%s tells %s to send smaller packets (ICMP %s), and the connection goes on", g.from,
			first.Quoted.Src.Addr(), g.what)
		summary += fmt.Sprintf(" The connection %s -> %s then carries data that is acknowledged: path-MTU "+
			"discovery working.", a.Client, a.Server)
		cause = "A link on the path has a smaller MTU than the sender's; the sender learnt it from the ICMP error " +
			"and sends smaller packets. Normal behaviour; an overlay without room for its encapsulation costs a round trip per new path."
		fix = "Nothing is broken. To save the round trip, set the pod MTU (the CNI's) to the path's."
	}
	return title, summary, cause, fix
}

// pmtudWorked returns the connection an ICMP fragmentation-needed or
// Packet Too Big of events quotes when the sender's data on it was then
// acknowledged with no large segment retransmitted in vain: path-MTU
// discovery working (see mtu-blackhole for the opposite).
func pmtudWorked(s *model.Snapshot, events []*model.ICMPEvent) (*model.Attempt, bool) {
	for _, e := range events {
		if e.What != "frag-needed" && e.What != "packet-too-big" {
			return nil, false
		}
	}
	for _, e := range events {
		q := e.Quoted
		// tcpdump's text without -v quotes no ports: the hosts match.
		hosts := q.Src.Port() == 0 && q.Dst.Port() == 0
		for i := range s.Attempts {
			a := &s.Attempts[i]
			var d *model.DataSizes
			switch {
			case a.Client == q.Src && a.Server == q.Dst,
				hosts && a.Client.Addr() == q.Src.Addr() && a.Server.Addr() == q.Dst.Addr():
				d = a.ClientData
			case a.Server == q.Src && a.Client == q.Dst,
				hosts && a.Server.Addr() == q.Src.Addr() && a.Client.Addr() == q.Dst.Addr():
				d = a.ServerData
			default:
				continue
			}
			if d != nil && d.MaxAcked > 0 && d.LargeRetx == 0 {
				return a, true
			}
		}
	}
	return nil, false
}

// sameMACOwner reports the MAC that the neighbor tables give for dst when
// it is also the MAC of from: the host sending the ICMP error owns the
// destination's ARP entry.
func sameMACOwner(s *model.Snapshot, dst, from netip.Addr) (string, []analyzer.Evidence) {
	// Within one neighbor table snapshot (one file).
	for i := range s.Neighbors {
		d := &s.Neighbors[i]
		if d.IP != dst || d.MAC == "" {
			continue
		}
		for j := range s.Neighbors {
			f := &s.Neighbors[j]
			if f.IP == from && f.Pos.File == d.Pos.File && strings.EqualFold(f.MAC, d.MAC) {
				return d.MAC, []analyzer.Evidence{
					{Pos: d.Pos, Note: fmt.Sprintf("%s is at %s", dst, d.MAC)},
					{Pos: f.Pos, Note: fmt.Sprintf("%s is at %s", from, f.MAC)},
				}
			}
		}
	}
	return "", nil
}

// icmpCertainty fills how firmly the finding's cause is shown: the ICMP
// error itself says what the sender did; an error joined with what the
// destination is (a Service, a ready endpoint) or with the neighbor tables
// is proven, the capture alone leaves the sender's reason among the
// alternatives.
func icmpCertainty(f *analyzer.Finding, what, from, dst string, ev []analyzer.Evidence) {
	f.Certainty = analyzer.Unknown
	if f.Severity == analyzer.Error {
		f.Certainty = analyzer.Proven
	}
	if len(ev) > 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s", ev[0].Pos, ev[0].Note))
	}
	if f.Facts["destination_is"] != nil {
		f.Supports = append(f.Supports, fmt.Sprintf("the destination is %s", f.Facts["destination_is"]))
	}
	if f.Facts["destination_mac"] != nil {
		f.Supports = append(f.Supports, fmt.Sprintf("the neighbor table resolves the destination to %s, the MAC of %s", f.Facts["destination_mac"], from))
	}
	host := stripPort(dst)
	switch what {
	case "port-unreachable":
		f.Alternatives = []string{"nothing listens on the port (UDP)", "a REJECT rule matches (kube-proxy's for a Service without endpoints)"}
		f.Decide = collected("iptables-save", fmt.Sprintf("on %s: the REJECT rules", from))
	case "net-unreachable":
		f.Alternatives = []string{"no route on the sender for the destination's network", "a route that leads to a network no longer there (a node's pod CIDR gone)"}
		f.Decide = fmt.Sprintf("# on %s\nip route get %s", from, host)
	case "host-unreachable":
		f.Alternatives = []string{"the address has no live owner on its link", "two hosts claim the address (a VIP announced twice, a stale ARP entry)",
			"a route on the sender leads nowhere"}
		f.Decide = fmt.Sprintf("# on %s\nip route get %s", from, host)
	case "admin-prohibited":
		f.Alternatives = []string{"a REJECT rule with icmp-admin-prohibited", "a NetworkPolicy that rejects"}
		f.Decide = collected("iptables-save", fmt.Sprintf("on %s: the rules that reject with icmp-admin-prohibited", from))
	case "frag-needed", "packet-too-big":
		f.Alternatives = []string{"a link on the path has a smaller MTU than the sender's (an overlay's encapsulation)",
			"path-MTU discovery at work: the sender lowers its packet size and goes on"}
		f.Decide = collected("ip-link", fmt.Sprintf("the MTUs of the interfaces on the path to %s", host))
	case "redirect":
		f.Alternatives = []string{"the sender routes the address through a host that does not own it", "a VIP announced by the wrong host"}
		f.Decide = fmt.Sprintf("# on the senders\nip route get %s", host)
	case "ttl-exceeded":
		f.Alternatives = []string{"a routing loop between the routers that answer", "a traceroute (TTLs growing hop by hop)"}
		f.Decide = fmt.Sprintf("# on each router on the path\nip route get %s", host)
	default:
		f.Alternatives = []string{"a route or firewall rule on the sender"}
		f.Decide = fmt.Sprintf("# on %s\nip route get %s", from, host)
	}
	if dst == unquoted {
		// Nothing to ask a route for: what was sent must be seen first.
		f.Decide = fmt.Sprintf("# on the senders: which packets the messages answer\ntcpdump -ni any host %s", stripPort(from))
	}
	if f.Certainty != analyzer.Proven {
		f.Contradicts = append(f.Contradicts, icmpReasonUnshown)
	}
}

// icmpReasonUnshown contradicts a finding of a capture's ICMP errors
// whose sender's reason nothing else shows.
const icmpReasonUnshown = "the capture alone does not say what the destination is, nor why the sender refuses it"

func icmpCauseFix(what, from, dst, gw string) (cause, fix string) {
	switch what {
	case "port-unreachable":
		return fmt.Sprintf("%s rejects packets to %s: nothing listens there (UDP), or a REJECT rule matches; kube-proxy "+
				"rejects traffic to a Service that has no endpoints this way.", from, dst),
			"If the destination is a Service, check it has ready endpoints (`kubectl get endpoints`); otherwise check " +
				"what listens on the port and the node's REJECT rules (`iptables-save | grep REJECT`)."
	case "net-unreachable":
		if dst == unquoted {
			return fmt.Sprintf("%s has no route for the packets it answers; the messages quote none of them, so "+
					"where they were going is not known.", from),
				fmt.Sprintf("Capture on the senders to see which packets draw the errors, then check the routes on %s "+
					"for their destination (`ip route get`).", from)
		}
		return fmt.Sprintf("%s has no route to the network of %s: the packets end there.", from, dst),
			fmt.Sprintf("Check the routes on %s and on the senders (`ip route get %s`); in a cluster, that every "+
				"node's pod CIDR is routed.", from, stripPort(dst))
	case "host-unreachable":
		return fmt.Sprintf("%s routes or answers ARP for %s but cannot deliver to it: the address has no live owner on "+
				"its link, or two hosts claim it (a VIP announced by two load-balancer controllers, a stale ARP entry).", from, dst),
			fmt.Sprintf("Find which host owns %s (`ip addr`, `ip neigh` on the nodes, ARP in a capture) and keep one "+
				"controller announcing it; check routes on %s (`ip route get %s`).", stripPort(dst), from, stripPort(dst))
	case "admin-prohibited":
		return fmt.Sprintf("A firewall on %s rejects traffic to %s (REJECT with icmp-admin-prohibited, or a NetworkPolicy).", from, dst),
			fmt.Sprintf("List the REJECT rules on %s (`iptables-save | grep -i prohibited`) and the NetworkPolicies "+
				"that select the destination.", from)
	case "frag-needed":
		return fmt.Sprintf("Packets to %s are larger than a link's MTU on the path and have DF set; with an overlay "+
				"(VXLAN, IP-in-IP, WireGuard) the pod MTU must leave room for the encapsulation.", dst),
			"Lower the CNI's MTU (or the pod interface MTU) below the underlay MTU minus the encapsulation " +
				"overhead (50 bytes for VXLAN), and make sure ICMP frag-needed is not filtered."
	case "redirect":
		return fmt.Sprintf("%s forwards traffic for %s and tells the sender that %s, on the same link, is a better next "+
				"hop: the sender routes the address through a host that does not own it.", from, dst, gw),
			fmt.Sprintf("Check which host should own %s and the senders' routes for it; if the address is a VIP, check "+
				"that exactly one controller announces it.", stripPort(dst))
	case "ttl-exceeded":
		return fmt.Sprintf("Packets to %s loop or travel too many hops.", dst),
			"Look for a routing loop between the hosts on the path (`ip route get` on each)."
	}
	return fmt.Sprintf("%s cannot deliver packets to %s (%s).", from, dst, what),
		"Check the routes and firewall rules of the host that sends the ICMP error."
}

func stripPort(s string) string {
	if i := strings.LastIndexByte(s, ':'); i > 0 && !strings.HasSuffix(s, "]") && strings.Count(s, ":") == 1 {
		return s[:i]
	}
	return s
}

// icmpSender is the host that sent the packet an ICMP error answers: the
// source of the packet it quotes, or, when it quotes none, the host the
// error is sent to.
func icmpSender(ev *model.ICMPEvent) netip.Addr {
	if a := ev.Quoted.Src.Addr(); a.IsValid() {
		return a
	}
	return ev.To
}

// unquoted stands for the destination of an ICMP error that quotes no
// packet header, or too little of one to name it.
const unquoted = "an address the message does not quote"

// icmpDestination returns the destination of the packet an ICMP error
// quotes, IP:port (IP alone for a time-exceeded error), twice.
func icmpDestination(ev *model.ICMPEvent) (string, string) {
	dst := ev.Quoted.Dst.Addr().String()
	if !ev.Quoted.Dst.Addr().IsValid() {
		dst = unquoted
	} else if ev.Quoted.Dst.Port() != 0 && ev.What != "ttl-exceeded" {
		dst = ev.Quoted.Dst.String()
	}
	return dst, dst
}

// ephemeralSide reports whether the destination of a quoted packet is the
// client end of its connection (a server's reply to a client's ephemeral
// port): its port is then one of many connections', and the errors about
// it are grouped, and named, by the client's address alone.
func ephemeralSide(t model.Tuple) bool {
	sp, dp := t.Src.Port(), t.Dst.Port()
	return sp != 0 && dp >= 1024 && sp < dp
}
