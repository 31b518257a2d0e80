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
	"github.com/netmortem/netmortem/model"
)

// RPFilterDrop finds SYNs a node's strict reverse-path filter drops: they
// arrive on one interface from a client the node routes out by another.
var RPFilterDrop = &analyzer.Rule{
	Name:     "rp-filter-drop",
	Severity: analyzer.Error,
	NeedsAny: []model.Kind{model.KindCapture, model.KindLogs},
	Uses:     []model.Kind{model.KindRoutes, model.KindSysctl, model.KindAddrs, model.KindCounters},
	Requires: []analyzer.FactKey{facts.FailedAttempts},
	Proof: "the capture's unanswered SYNs arrive at an address of interface A (ip addr, or the src of A's " +
		"connected route), the routing table (ip route) sends the client's address out by another interface, and " +
		"sysctl shows the reverse-path filter strict on A: the larger of net.ipv4.conf.all.rp_filter and " +
		"net.ipv4.conf.A.rp_filter is 1; the kernel's count of the packets the filter dropped (nstat " +
		"TcpExtIPReversePathFilter) above 0 supports it, and 0 weighs against it",
	Unproven: "without the two rp_filter values, or with only one of them at 1, the rule reports the asymmetric " +
		"route and the unanswered SYNs as a warning, with the filter as the first cause it cannot rule out, and " +
		"`sysctl -a 2>/dev/null | grep '^net\\.'` (net.ipv4.conf.all.rp_filter and net.ipv4.conf.A.rp_filter) as the command that decides; with " +
		"TcpExtIPReversePathFilter above 0 in nstat output and no rp_filter value the filter is likely, with it at 0 " +
		"the cause stays unknown and the filter comes last among the alternatives; a loose (2) " +
		"or disabled (0) filter rules the cause out and the rule says nothing. Felix's refusal of a loose filter " +
		"is proven by its log line and net.ipv4.conf.all.rp_filter = 2 in sysctl output; from the log alone it is " +
		"likely, and that sysctl decides. The kernel's \"martian source\" line (log_martians) of a source it " +
		"would otherwise accept is a drop by the filter: proven with both rp_filter values of its device at " +
		"most 1 and one of them 1, likely without them, silent when they show the filter loose or off. When the " +
		"link-layer header the kernel logs next ends in 08 06, the frame was an ARP request: the rule reports " +
		"it at info, since no IP packet was dropped (likely noise when ip addr shows the device a bridge's port, " +
		"unknown otherwise, with ip addr to decide)",
	SubjectKeys: []string{"node", "address", "interface", "component", "setting"},
	Run:         runRPFilterDrop,
	Explains:    []*analyzer.Rule{NATReplyUntranslated},
	Symptoms:    []analyzer.SymptomRef{ProbesTimeOut.At(60), ServiceUnreachable.At(110), ConnectionsTimeOut.At(40)},
	Decide:      "# on the server's node\nsysctl -a 2>/dev/null | grep rp_filter; nstat -az TcpExtIPReversePathFilter",
	Doc: `strict rp_filter drops the SYNs of an asymmetric path

With net.ipv4 rp_filter strict (1), the kernel accepts a packet on an
interface only when its route back to the packet's source leaves by that
same interface. On nodes with several interfaces (a second NIC for storage
or a provider network, a VPN, Calico or Cilium routing Pod traffic by its
own devices) a client's SYN can arrive on one interface while the route to
the client leaves by another: the kernel drops the SYN before TCP sees it,
silently (nstat counts it as TcpExtIPReversePathFilter), and the client
retransmits until it times out. The value that applies is the larger of
net.ipv4.conf.all.rp_filter and the interface's own: all=1 makes every
interface strict that is not set to 2 (loose), whatever its own value says.

Evidence: the capture's unanswered SYNs and the node's address they went
to; the interface holding that address (ip addr, or the src of a connected
route); the route the node would use back to the client (ip route: the
longest prefix, all nexthops of a multipath route); the rp_filter values
(sysctl output of net.ipv4.conf.all.rp_filter and the interface's); the
kernel's count of the packets the filter dropped (nstat -az
TcpExtIPReversePathFilter), which supports the cause when above 0 and
weighs against it at 0.

Severity: error when both rp_filter values are shown and the larger is 1
(proven by the capture, the routes and the sysctls); warning when one of
them is missing (the cause is then likely or unknown, and the finding says
which sysctl decides). Without the sysctls, TcpExtIPReversePathFilter
above 0 makes the filter likely; at 0 the cause stays unknown, and a strict
filter that counted nothing is likely, not proven. A loose (2) or disabled
(0) filter rules the cause out: the rule is then silent, and syn-unanswered
reports the symptom.

Calico's Felix (calico-node) checks the other way: with
net.ipv4.conf.all.rp_filter = 2 (loose, the default of Ubuntu 20.04 and
others) it logs "Kernel's RPF check is set to 'loose'" and exits, so
calico-node restarts and the node's Pods get no network. The rule reports
that line, with the sysctl when the bundle has it.

The kernel's "martian source" lines (net.ipv4.conf.*.log_martians=1) are
the filter's own word that it refused a packet. The "ll header" line the
kernel logs after each tells what the frame was: one whose EtherType is
08 06 is an ARP request, which the kernel checks the same way and leaves
unanswered on that device; no IP packet is dropped, and on a bridge's port
(Azure CNI's bridge mode makes eth0 a port of azure0) the bridge answers
instead. Those lines are reported at info, never as a cause. A line
whose header shows another EtherType (an 802.1Q tag kept in it, 81 00) is
not claimed: what the frame carried is not shown.

Fix: make the path symmetric (a route, or a policy-routing rule by source,
that sends replies back by the interface the traffic came in on), or set
rp_filter to 2 (loose) on that interface and on all (sysctl -w
net.ipv4.conf.all.rp_filter=2 net.ipv4.conf.IFACE.rp_filter=2, and in
/etc/sysctl.d so it survives a reboot). Calico's Felix refuses loose RPF on
all unless IgnoreLooseRPF is set: set it per interface there. For Felix,
set net.ipv4.conf.all.rp_filter to 1 (or 0), or IgnoreLooseRPF=true in its
FelixConfiguration when loose filtering is wanted.`,
}

// rpfValue is one rp_filter sysctl as the bundle shows it.
type rpfValue struct {
	name  string
	value int
	known bool
	pos   model.Pos
}

func (v rpfValue) String() string { return fmt.Sprintf("%s = %d", v.name, v.value) }

func runRPFilterDrop(p *analyzer.Pass) error {
	s := p.Snap
	felixLooseRPF(p)
	martianRPF(p)
	if len(s.Routes) == 0 {
		return nil
	}
	for _, g := range facts.FailedAttempts.Of(p).Of(model.OutcomeUnanswered) {
		// One SYN may just be cut off by the end of the capture; rp_filter
		// is IPv4's (IPv6 has netfilter's rpfilter match instead).
		if (g.N == 1 && g.Retx == 0) || !g.Server.Addr().Is4() {
			continue
		}
		in, inPos, ok := localIface(s, g.Node, g.Server.Addr())
		if !ok {
			continue
		}
		// The clients whose route back leaves by another interface.
		var clients []string
		var back *model.Route
		var outDevs []string
		for _, c := range g.Clients {
			ca, err := netip.ParseAddr(c)
			if err != nil {
				continue
			}
			r, devs := routeTo(s, g.Node, ca)
			if r == nil || len(devs) == 0 || slices.Contains(devs, in) {
				continue
			}
			clients = append(clients, c)
			if back == nil {
				back, outDevs = r, devs
			}
		}
		if len(clients) == 0 {
			continue
		}
		all := rpfSysctl(s, g.Node, "all")
		dev := rpfSysctl(s, g.Node, in)
		if (all.known && all.value >= 2) || (dev.known && dev.value >= 2) ||
			(all.known && dev.known && max(all.value, dev.value) == 0) {
			continue // loose or off: the filter lets these SYNs in
		}
		var ctr *model.Counter
		if c, ok := s.Counter(g.Node, rpfCounterName); ok {
			ctr = &c
		}
		d := &rpfDrop{g: g, in: in, inPos: inPos, back: back, out: strings.Join(outDevs, ", "), clients: clients,
			all: all, dev: dev, ctr: ctr}
		f := judgeRPF(d)
		f.Title, f.Summary, f.Cause, f.Fix = rpfWords(d)
		p.Report(f)
	}
	return nil
}

// rpfCounterName is the kernel counter of the packets the reverse-path
// filter dropped, as nstat names it.
const rpfCounterName = "TcpExtIPReversePathFilter"

// rpfDrop is one server endpoint whose SYNs arrive on interface in while
// the route back to the clients leaves by out, and its judgement
// (judgeRPF): what the bundle shows of the reverse-path filter there.
// rpfWords words it.
type rpfDrop struct {
	g        *facts.FailGroup
	in       string
	inPos    model.Pos // where in is shown to hold the server's address
	back     *model.Route
	out      string // the interfaces the route back leaves by
	clients  []string
	all, dev rpfValue
	ctr      *model.Counter // the node's rpfCounterName, nil when not shown

	shown            []string // the rp_filter values shown
	dropped, counted bool     // the counter shows drops; it shows none
	shows            rpfShows
	missing          string // the rp_filter value not shown, when one is
}

// rpfShows is how much the bundle shows of the filter on the interface.
type rpfShows int

const (
	rpfNothing         rpfShows = iota // no value and no drop: the cause is not established
	rpfStrict                          // both values, the larger 1: strict
	rpfStrictUncounted                 // strict, but the counter says it dropped nothing
	rpfOneValue                        // one value, 1: strict unless the other is 2
	rpfDropped                         // no value, but the filter has dropped packets
)

// judgeRPF judges d. It fills in d and returns the finding without its
// words.
func judgeRPF(d *rpfDrop) analyzer.Finding {
	g, in, out, back, ctr := d.g, d.in, d.out, d.back, d.ctr
	f := analyzer.Finding{
		Subject:  subject("node", g.Node, "address", g.Server.String(), "interface", in),
		Severity: analyzer.Warning,
		Facts: map[string]any{
			"server": g.Server.String(), "attempts": g.N, "syn_retransmissions": g.Retx,
			"clients": listSome(d.clients, false), "in_interface": in, "route_out": out, "route": back.Raw,
		},
	}
	if g.Node != "" {
		f.Facts["node"] = g.Node
	}
	for i, a := range g.Attempts {
		if i == maxGroupEvidence {
			break
		}
		f.Evidence = append(f.Evidence, failedSegEvidence(a, true)...)
	}
	f.Evidence = append(f.Evidence,
		analyzer.Evidence{Pos: back.Pos, Note: fmt.Sprintf("route back to %s leaves by %s", d.clients[0], out)},
		analyzer.Evidence{Pos: d.inPos, Note: fmt.Sprintf("%s is on %s", g.Server.Addr(), in)})
	f.Supports = []string{
		fmt.Sprintf("the capture shows %d connection %s to %s with %d SYN %s and no SYN/ACK, RST or ICMP error",
			g.N, plural(g.N, "attempt", "attempts"), g.Server, g.Retx, plural(g.Retx, "retransmission", "retransmissions")),
		fmt.Sprintf("%s is an address of %s (%s), so the SYNs arrive there", g.Server.Addr(), in, d.inPos),
		fmt.Sprintf("%s: the route back to %s is %q, out by %s", back.Pos, d.clients[0], back.Raw, out),
	}
	for _, v := range []rpfValue{d.all, d.dev} {
		if v.known {
			f.Facts[v.name] = v.value
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: v.pos, Note: v.String()})
			f.Supports = append(f.Supports, fmt.Sprintf("%s: %s", v.pos, v))
			d.shown = append(d.shown, v.String())
		}
	}
	f.Evidence = dedupEvidence(f.Evidence)
	f.Contradicts = []string{
		fmt.Sprintf("a SYN/ACK from %s leaving by %s, in a capture of that interface: the filter then let the SYNs in "+
			"and the replies are lost on the way back", g.Server, out),
	}
	d.dropped, d.counted = ctr != nil && ctr.Value > 0, ctr != nil && ctr.Value == 0
	if ctr != nil {
		f.Facts[rpfCounterName] = ctr.Value
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: ctr.Pos, Note: fmt.Sprintf("%s %d", rpfCounterName, ctr.Value)})
	}
	switch {
	case d.dropped:
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s is %d: the node's reverse-path filter has dropped packets",
			ctr.Pos, rpfCounterName, ctr.Value))
		f.Contradicts = append(f.Contradicts, "nstat -az "+rpfCounterName+" not growing while the SYNs arrive")
	case d.counted:
		f.Contradicts = append([]string{fmt.Sprintf("%s: %s is 0: the node's reverse-path filter has dropped nothing",
			ctr.Pos, rpfCounterName)}, f.Contradicts...)
	default:
		f.Contradicts = append(f.Contradicts, "nstat -az "+rpfCounterName+" not growing while the SYNs arrive")
	}
	bothOff := "net.ipv4.conf.all.rp_filter and net.ipv4.conf." + in + ".rp_filter both 0, " +
		"or either 2 (loose): the filter then lets the SYNs in"
	f.Certainty, f.Alternatives = analyzer.Likely, rpfAlternatives(in, out)
	f.Decide = collected("sysctl-net", fmt.Sprintf("net.ipv4.conf.all.rp_filter and net.ipv4.conf.%s.rp_filter", in))
	switch all, dev := d.all, d.dev; {
	case all.known && dev.known && d.counted:
		d.shows = rpfStrictUncounted
		f.Decide = collected("nstat", rpfCounterName+" on the node, while the SYNs arrive")
	case all.known && dev.known: // the larger is 1: strict
		d.shows = rpfStrict
		f.Severity, f.Certainty, f.Alternatives, f.Decide = analyzer.Error, analyzer.Proven, nil, ""
	case (all.known || dev.known) && !d.counted:
		d.shows, d.missing = rpfOneValue, dev.name
		if !all.known {
			d.missing = all.name
		}
		f.Contradicts = append(f.Contradicts, d.missing+" = 2 (loose)")
	case d.dropped:
		d.shows = rpfDropped
		f.Contradicts = append(f.Contradicts, bothOff)
	default:
		d.shows = rpfNothing
		f.Certainty = analyzer.Unknown
		f.Contradicts = append(f.Contradicts, bothOff)
		if d.counted {
			// The counter weighs against the filter: it comes last.
			f.Alternatives = append(f.Alternatives[1:], f.Alternatives[0])
		}
	}
	return f
}

// rpfWords words the finding of d, as judgeRPF judged it.
func rpfWords(d *rpfDrop) (title, summary, cause, fix string) {
	g, in, out, ctr := d.g, d.in, d.out, d.ctr
	subject := g.Server.String()
	if g.Node != "" {
		subject += " on " + g.Node
	}
	clients := listSome(d.clients, false)
	filter := fmt.Sprintf("The reverse-path filter on %s drops them", in)
	likely := fmt.Sprintf("rp_filter likely drops the SYNs to %s: they arrive on %s, the route back to %s leaves by %s",
		subject, in, clients, out)
	switch d.shows {
	case rpfStrictUncounted:
		title = fmt.Sprintf("strict rp_filter on %s likely drops the SYNs to %s, though %s is 0",
			in, subject, rpfCounterName)
		cause = fmt.Sprintf("%s, most likely: rp_filter is strict there (the larger of %s and %s is 1), and the "+
			"route back to the clients leaves by %s; but %s is 0 (%s), no packet dropped by the filter, so the "+
			"counter was read elsewhere or before the SYNs arrived.", filter, d.all, d.dev, out, rpfCounterName, ctr.Pos)
	case rpfStrict:
		title = fmt.Sprintf("strict rp_filter on %s drops the SYNs to %s: the route back to %s leaves by %s",
			in, subject, clients, out)
		cause = fmt.Sprintf("%s: rp_filter is strict there (the larger of %s and %s is 1), and the route back to "+
			"the clients leaves by %s, so the kernel takes the SYNs for spoofed and drops them before TCP sees them.",
			filter, d.all, d.dev, out)
	case rpfOneValue:
		title = likely
		cause = fmt.Sprintf("%s, most likely: %s makes it strict unless %s is 2 (loose), which the bundle does not "+
			"show; the route back to the clients leaves by %s.", filter, strings.Join(d.shown, ", "), d.missing, out)
	case rpfDropped:
		title = likely
		cause = fmt.Sprintf("%s, most likely: the node's filter has dropped packets (%s: %s %d), and the route back "+
			"to the clients leaves by %s; the bundle does not show the rp_filter values of %s.", filter,
			ctr.Pos, rpfCounterName, ctr.Value, out, in)
	default:
		title = fmt.Sprintf("SYNs to %s get no answer; they arrive on %s and the route back to %s leaves by %s",
			subject, in, clients, out)
		cause = fmt.Sprintf("Not established: the SYNs are lost at the node or their replies on the way back; the "+
			"path is asymmetric, and the bundle does not show the rp_filter values of %s that would tell whether "+
			"the node drops them for it.", in)
		if d.counted {
			values := "does not show the rp_filter values of " + in
			if len(d.shown) > 0 { // one value, 1: strict unless the other is 2
				values = "shows only " + strings.Join(d.shown, ", ")
			}
			cause = fmt.Sprintf("Not established: the SYNs are lost at the node or their replies on the way back; the "+
				"path is asymmetric, but %s is 0 (%s), so the node's reverse-path filter has dropped nothing, and the "+
				"bundle %s.", rpfCounterName, ctr.Pos, values)
		}
	}
	summary = fmt.Sprintf("%d connection %s from %s to %s got no reply (%d SYN %s). %s holds %s, so the SYNs "+
		"arrive there, but the node's route back to the %s leaves by %s (%s).",
		g.N, plural(g.N, "attempt", "attempts"), clients, g.Server, g.Retx,
		plural(g.Retx, "retransmission", "retransmissions"), in, g.Server.Addr(),
		plural(len(d.clients), "client", "clients"), out, d.back.Raw)
	if len(d.shown) > 0 {
		summary += " The bundle shows " + strings.Join(d.shown, " and ") + "."
	}
	fix = fmt.Sprintf("Make the path symmetric (route the clients' addresses back by %s, or add a policy-routing "+
		"rule for traffic that arrives there), or make the filter loose where asymmetry is expected: "+
		"`sysctl -w net.ipv4.conf.all.rp_filter=2 net.ipv4.conf.%s.rp_filter=2`, persisted in /etc/sysctl.d.", in, in)
	return title, summary, cause, fix
}

// rpfAlternatives are the causes of unanswered SYNs on an asymmetric path
// that the filter's values would not rule out.
func rpfAlternatives(in, out string) []string {
	return []string{
		"a strict reverse-path filter on " + in + " (rp_filter 1)",
		"the SYN/ACKs leave by " + out + " and are lost on the way back (the capture may not show that interface)",
		"a firewall rule on the node that drops the SYNs (iptables-save, nft list ruleset)",
	}
}

// rpfSysctl returns net.ipv4.conf.<iface>.rp_filter of node.
func rpfSysctl(s *model.Snapshot, node, iface string) rpfValue {
	name := "net.ipv4.conf." + iface + ".rp_filter"
	v := rpfValue{name: name}
	sc, ok := s.Sysctl(node, name)
	if !ok {
		return v
	}
	n, err := strconv.Atoi(strings.TrimSpace(sc.Value))
	if err != nil || n < 0 {
		return v
	}
	v.value, v.known, v.pos = n, true, sc.Pos
	return v
}

// localIface returns the interface of node that holds addr: from ip addr,
// else from the src of a connected or local route.
func localIface(s *model.Snapshot, node string, addr netip.Addr) (string, model.Pos, bool) {
	for _, a := range s.Addrs {
		if a.Node == node && a.Prefix.Addr() == addr && a.Dev != "" {
			return a.Dev, a.Pos, true
		}
	}
	for _, r := range s.Routes {
		if r.Node != node || r.Dev == "" {
			continue
		}
		if (r.Type == "local" && r.Dst.Addr() == addr && r.Dst.IsSingleIP()) ||
			(r.Src == addr && r.Scope == "link" && r.Dst.Contains(addr)) {
			return r.Dev, r.Pos, true
		}
	}
	return "", model.Pos{}, false
}

// routeTo returns the unicast route of node's main table that sends to dst
// (the longest prefix, then the lowest metric) and the interfaces it leaves
// by: its device, or those of its nexthops, or the device of the connected
// route to its gateway.
func routeTo(s *model.Snapshot, node string, dst netip.Addr) (*model.Route, []string) {
	best := bestRoute(s, node, dst)
	if best == nil {
		return nil, nil
	}
	var devs []string
	add := func(dev string, via netip.Addr) {
		if dev == "" && via.IsValid() {
			if r := bestRoute(s, node, via); r != nil && !r.Via.IsValid() {
				dev = r.Dev
			}
		}
		if dev != "" && !slices.Contains(devs, dev) {
			devs = append(devs, dev)
		}
	}
	if len(best.Nexthops) > 0 {
		for _, nh := range best.Nexthops {
			add(nh.Dev, nh.Via)
		}
	} else {
		add(best.Dev, best.Via)
	}
	return best, devs
}

// bestRoute returns the unicast route of node's main table to dst: the
// longest prefix, then the lowest metric.
func bestRoute(s *model.Snapshot, node string, dst netip.Addr) *model.Route {
	var best *model.Route
	for i := range s.Routes {
		r := &s.Routes[i]
		if r.Node != node || (r.Type != "" && r.Type != "unicast") || (r.Table != "" && r.Table != "main") {
			continue
		}
		if !r.Dst.IsValid() || r.Dst.Addr().Is4() != dst.Is4() || !r.Dst.Contains(dst) {
			continue
		}
		if best == nil || r.Dst.Bits() > best.Dst.Bits() || (r.Dst.Bits() == best.Dst.Bits() && r.Metric < best.Metric) {
			best = r
		}
	}
	return best
}

// felixLooseRPF reports Felix's refusal of a loose reverse-path filter, per
// node.
func felixLooseRPF(p *analyzer.Pass) {
	s := p.Snap
	byNode := map[string][]*model.LogEvent{}
	var nodes []string
	for i := range s.Logs {
		le := &s.Logs[i]
		if !strings.Contains(le.Message, "RPF check is set to 'loose'") {
			continue
		}
		if byNode[le.Node] == nil {
			nodes = append(nodes, le.Node)
		}
		byNode[le.Node] = append(byNode[le.Node], le)
	}
	for _, node := range nodes {
		les := byNode[node]
		first := les[0]
		f := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely,
			Subject: subject("node", node, "component", "felix", "setting", "net.ipv4.conf.all.rp_filter"),
			Facts:   map[string]any{"felix_messages": len(les)}}
		if node != "" {
			f.Facts["node"] = node
		}
		for i, le := range les {
			if i == maxGroupEvidence {
				break
			}
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: le.Pos, Note: "Felix: Kernel's RPF check is set to 'loose'"})
		}
		level := first.Level
		f.Supports = []string{fmt.Sprintf("%s: Felix logs %s \"Kernel's RPF check is set to 'loose'\"", first.Pos,
			cmp.Or(level, "a line"))}
		all := rpfSysctl(s, node, "all")
		f.Title = "Felix refuses the loose rp_filter and exits"
		if node != "" {
			f.Title = fmt.Sprintf("Felix refuses the loose rp_filter on %s and exits", node)
		}
		f.Summary = fmt.Sprintf("Calico's Felix logged %d %s that the kernel's reverse-path filter is loose "+
			"(net.ipv4.conf.all.rp_filter = 2), which lets Pods spoof their addresses; it refuses to run, so "+
			"calico-node restarts and the node's Pods lose their network.", len(les), plural(len(les), "time", "times"))
		f.Cause = "net.ipv4.conf.all.rp_filter is 2 (loose) on the node, as Ubuntu 20.04 and other distributions set it " +
			"by default, and Felix requires 0 or 1."
		switch {
		case all.known && all.value == 2:
			f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
			f.Facts[all.name] = all.value
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: all.pos, Note: all.String()})
			f.Supports = append(f.Supports, fmt.Sprintf("%s: %s", all.pos, all))
			f.Contradicts = []string{"IgnoreLooseRPF=true in the FelixConfiguration (Felix then accepts the loose filter)"}
		case all.known:
			f.Certainty = analyzer.Unknown
			f.Facts[all.name] = all.value
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: all.pos, Note: all.String()})
			f.Cause = fmt.Sprintf("Not established now: Felix found the filter loose, but the bundle shows %s; the value "+
				"was changed after Felix's line, or the sysctl output is from another node or time.", all)
			f.Contradicts = []string{fmt.Sprintf("%s: %s, not 2", all.pos, all)}
			f.Alternatives = []string{"the value was fixed after Felix exited", "the sysctl output comes from another node"}
			f.Decide = collected("sysctl-net", "net.ipv4.conf.all.rp_filter")
		default:
			f.Cause = "Most likely " + f.Cause[:1] + f.Cause[1:] + " The bundle has no sysctl output that shows the value."
			f.Contradicts = []string{"net.ipv4.conf.all.rp_filter 0 or 1 in the node's current sysctl output"}
			f.Alternatives = []string{"a loose rp_filter on the node (what Felix says)",
				"a value fixed since the line was logged"}
			f.Decide = collected("sysctl-net", "net.ipv4.conf.all.rp_filter")
		}
		f.Evidence = dedupEvidence(f.Evidence)
		f.Fix = "Set net.ipv4.conf.all.rp_filter to 1 (sysctl -w, and in /etc/sysctl.d so it survives a reboot), or set " +
			"IgnoreLooseRPF: true in the FelixConfiguration if loose filtering is wanted; then restart calico-node."
		p.Report(f)
	}
}
