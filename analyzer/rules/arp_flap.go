package rules

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// ARPFlap finds IP addresses whose owner (MAC address) changes.
var ARPFlap = &analyzer.Rule{
	Name:     "arp-flap",
	Severity: analyzer.Error,
	// A capture, neighbor table snapshots or an arping transcript, any
	// will do; MetalLB speakers' logs name who answers.
	NeedsAny:    []model.Kind{model.KindCapture, model.KindNeighbors, model.KindClient},
	Uses:        []model.Kind{model.KindKube, model.KindLinks, model.KindAddrs, model.KindLogs},
	Requires:    []analyzer.FactKey{facts.AddrRoles},
	SubjectKeys: []string{"node", "address"},
	Run:         runARPFlap,
	Explains:    []*analyzer.Rule{ARPUnanswered},
	Symptoms:    []analyzer.SymptomRef{LoadBalancer502.At(30), ControlPlaneUnhealthy.At(50)},
	Plot: analyzer.Plot{
		Parts:    []analyzer.PlotPart{analyzer.PlotARP, analyzer.PlotCitedLogs},
		ARPAddrs: []analyzer.Selector{analyzer.InSubject("address")},
	},
	Proof: "two MACs claiming the address (ARP frames, neighbor tables or arping's replies), and the Services saying it is a " +
		"LoadBalancer or external IP that one announcer should hold",
	Unproven: "the owner changes from the capture, the neighbor tables or an arping run answered from two MACs, with the causes not ruled out (two " +
		"announcers, a failover, a duplicate address) and `ip -d link` on the nodes to find the two hosts",
	Doc: `an IP address is claimed by more than one MAC address

In a capture, ARP replies, gratuitous ARP announcements and the sender
fields of ARP requests (or IPv6 neighbor advertisements) say which MAC owns
an IP; so do neighbor tables (ip neigh, arp -an) taken at different times,
and an arping transcript, whose replies each name the MAC that answered
(the ticket's usual evidence: one arping run answered from two MACs).
When one IP is claimed by two or more MACs, traffic for it goes to
whichever claimed last in each neighbour's cache: connections break or land on
the wrong node. In a cluster this is a VIP announced by two load-balancer
controllers (MetalLB and kube-vip), a failover that is not finished, or an
address configured twice.

Evidence: the ARP frames where the owner changes, the neighbor entries or
arping's replies; the Kubernetes objects that say what the IP is (a
LoadBalancer IP, a node address).

Claims by two NICs of one host are not two hosts: when the host's links
(ip link, ip -j link, ip addr) list every claiming MAC, on one node (or
in one file), and its addresses (when shown) include the IP, the host
answers ARP for its own address on each NIC that hears the request
(arp_ignore=0, two NICs on one segment: "ARP flux"). That is reported
at info, with the sysctls that stop it, and not as a flap. Without the
host's links, claims by MACs the manufacturer burned in (universally
administered) and numbered one after the other (00:23:8b:bd:87:eb and
:ec) are taken for two ports of one card, so ARP flux too: at info, as
likely, with ip link on the host to decide.

Severity: error when the IP is a Service's LoadBalancer IP or external IP
(the Services join the capture); warning from the capture, the neighbor
tables or arping alone, where a single change can also be a finished
failover and two NICs of one host look the same (cause unknown, with ip
link on the nodes to decide). The finding counts the changes:
an owner going back and forth is two announcers, not a failover.

Fix: find the two hosts by their MACs (ip link on the nodes) and make exactly
one of them announce the address: one load-balancer controller per Service
(loadBalancerClass), or remove the duplicate address.`,
}

// arpClaim is one claim of an address: the MAC and what shows it.
type arpClaim struct {
	mac string
	ev  *model.ARPEvent
}

// claimSource is what shows an address's claims: a capture's ARP frames,
// neighbor table snapshots or an arping transcript's replies.
type claimSource int

const (
	fromCapture claimSource = iota
	fromNeigh
	fromArping
	fromSpeaker
)

// arpOwners are the claims of one address on one node, and their judgement
// (judgeARPOwners): the changes of owner, what the address is.
// arpOwnersWords words it.
type arpOwners struct {
	node    string
	ip      netip.Addr
	claims  []arpClaim // each change of owner, the first claim included
	macs    []string
	changes int
	from    claimSource // what shows the claims
	// speakers are MetalLB speakers' lines answering with the MACs, when
	// two speakers answer with two of them; atOnce says their answers
	// overlap in time.
	speakers []*model.LogEvent
	atOnce   bool

	timeline []string // the first claim and each change of owner
	is       string   // what the address is in the cluster, "" when nothing
}

// claim adds a claim of o's address by mac, shown by ev, unless it repeats
// the last one.
func (o *arpOwners) claim(mac string, ev *model.ARPEvent) {
	if k := len(o.claims); k > 0 && o.claims[k-1].mac == mac {
		return
	} else if k > 0 {
		o.changes++
	}
	o.claims = append(o.claims, arpClaim{mac: mac, ev: ev})
	if !slices.Contains(o.macs, mac) {
		o.macs = append(o.macs, mac)
	}
}

func runARPFlap(p *analyzer.Pass) error {
	s := p.Snap
	var owners []*arpOwners
	byIP := map[string]*arpOwners{}
	group := func(key, node string, ip netip.Addr, from claimSource) *arpOwners {
		if byIP[key] == nil {
			byIP[key] = &arpOwners{node: node, ip: ip, from: from}
			owners = append(owners, byIP[key])
		}
		return byIP[key]
	}
	for i := range s.ARP {
		ev := &s.ARP[i]
		if ev.MAC != "" && ev.IP.IsValid() && !ev.IP.IsUnspecified() && ev.Op != "ns" && !ev.Copy {
			group(ev.Node+"|"+ev.IP.String(), ev.Node, ev.IP, fromCapture).claim(ev.MAC, ev)
		}
	}
	// Neighbor table snapshots (ip neigh before and after): the MAC an IP
	// resolves to, file by file, as another sequence of claims; arping's
	// replies, in the order printed, as a third. A capture of the node
	// speaks for the IPs it shows.
	neigh := slices.Clone(s.Neighbors)
	slices.SortStableFunc(neigh, func(a, b model.Neighbor) int {
		return strings.Compare(snapshotKey(a.Pos.File), snapshotKey(b.Pos.File))
	})
	for i := range neigh {
		if n := &neigh[i]; n.MAC != "" && n.IP.IsValid() && byIP[n.Node+"|"+n.IP.String()] == nil {
			group("neigh|"+n.Node+"|"+n.IP.String(), n.Node, n.IP, fromNeigh).claim(n.MAC, &model.ARPEvent{Node: n.Node,
				Pos: n.Pos, Op: "neighbor entry (" + strings.ToLower(n.State) + ")", IP: n.IP, MAC: n.MAC})
		}
	}
	for i := range s.Client {
		if r, ip := &s.Client[i], s.Client[i].Addr.Addr(); r.Tool == "arping" && r.MAC != "" && ip.IsValid() &&
			byIP[r.Node+"|"+ip.String()] == nil {
			group("arping|"+r.Node+"|"+ip.String(), r.Node, ip, fromArping).claim(r.MAC,
				&model.ARPEvent{Node: r.Node, Pos: r.Pos, Op: "arping reply", IP: ip, MAC: r.MAC})
		}
	}
	answers := speakerAnswers(s)
	owners = append(owners, speakerClaims(answers, owners)...)
	roles := facts.AddrRoles.Of(p)
	for _, o := range owners {
		if len(o.macs) < 2 {
			continue
		}
		o.joinSpeakers(answers[o.ip])
		linksShown := hostLinksShown(s, o.node)
		if nics := oneHostsNICs(s, o); nics != nil && o.speakers == nil {
			p.Report(arpFluxFinding(o, nics))
			continue
		}
		if !linksShown && adjacentBurnedInMACs(o.macs) && o.speakers == nil {
			p.Report(arpCardFinding(o))
			continue
		}
		f := judgeARPOwners(o, roles.Of(o.ip, 0))
		if !linksShown && f.Certainty != analyzer.Proven && o.speakers == nil {
			f.Alternatives = append(f.Alternatives, "two NICs of one host on the segment both answer (ARP flux)")
		}
		f.Title, f.Summary, f.Cause, f.Fix = arpOwnersWords(o)
		p.Report(f)
	}
	return nil
}

// judgeARPOwners judges o, whose address is rs. It fills in o and returns
// the finding without its words.
func judgeARPOwners(o *arpOwners, rs facts.Roles) analyzer.Finding {
	sev := analyzer.Warning
	if rs.VIP() {
		sev = analyzer.Error
	}
	var ev []analyzer.Evidence
	owner := ""
	for i, c := range o.claims {
		kind := c.ev.Op
		if c.ev.Gratuitous {
			kind = "gratuitous " + kind
		}
		if i < 10 {
			ev = append(ev, analyzer.Evidence{Pos: c.ev.Pos, Note: fmt.Sprintf("%s: %s is at %s", kind, o.ip, c.mac)})
		}
		if c.mac == owner {
			continue
		}
		owner = c.mac
		if o.from == fromNeigh || o.from == fromArping {
			o.timeline = append(o.timeline, fmt.Sprintf("%s %s", c.ev.Pos, c.mac))
		} else {
			o.timeline = append(o.timeline, fmt.Sprintf("%s %s", c.ev.Time.Format("15:04:05.000000"), c.mac))
		}
	}
	timeline := slices.Clone(o.timeline)
	if len(timeline) > maxTimelineFact {
		timeline = append(timeline[:maxTimelineFact], fmt.Sprintf("... %d more", len(timeline)-maxTimelineFact))
	}
	ev = append(ev, rs.Evidence()...)
	values := map[string]any{
		"ip":       o.ip.String(),
		"macs":     o.macs,
		"changes":  o.changes,
		"timeline": timeline,
	}
	if o.node != "" {
		values["node"] = o.node
	}
	if len(rs) > 0 {
		o.is = rs.Words()
		values["ip_is"] = o.is
	}
	f := analyzer.Finding{Subject: subject("node", o.node, "address", o.ip.String()), Severity: sev,
		Certainty: analyzer.Unknown, Facts: values, Evidence: ev,
		Alternatives: []string{"two load-balancer controllers (MetalLB and kube-vip) both announce the address",
			"a failover moved the address between nodes", "the address is configured on two hosts"},
		Decide: collected("ip-link", "on the nodes: which hosts have the MACs "+listSome(o.macs, false)),
	}
	if len(ev) > 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("%d claims of %s by %s, the owner changing %d %s (first: %s)",
			len(o.claims), o.ip, listSome(o.macs, false), o.changes, plural(o.changes, "time", "times"), ev[0]))
	}
	if o.changes == 1 {
		f.Contradicts = append(f.Contradicts, "a single change of owner is also what a finished failover looks like")
	}
	if rs.VIP() {
		f.Certainty = analyzer.Proven
		f.Supports = append(f.Supports, fmt.Sprintf("the address is %s, which one announcer should hold", rs.Words()))
	}
	if o.speakers != nil {
		judgeSpeakers(o, &f)
	}
	return f
}

// judgeSpeakers judges the claims of o that MetalLB's speakers' own lines
// back: two speakers answer for the address (a LoadBalancer IP, the only
// kind they answer for), at once when their answers interleave or the
// claims go back and forth; otherwise a finished failover between them is
// not ruled out.
func judgeSpeakers(o *arpOwners, f *analyzer.Finding) {
	seen := map[string]bool{}
	var macs []string
	for _, le := range o.speakers {
		if mac := strings.ToLower(le.Fields["responseMAC"]); !seen[mac] {
			seen[mac] = true
			macs = append(macs, mac)
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: le.Pos,
				Note: fmt.Sprintf("a MetalLB speaker answers ARP for %s with %s", o.ip, mac)})
		}
	}
	f.Severity, f.Contradicts = analyzer.Error, nil
	f.Supports = append(f.Supports, fmt.Sprintf("MetalLB's speakers log that they answered ARP for %s with %s, "+
		"two speakers with two MACs", o.ip, listSome(macs, false)))
	f.Decide = "# with kubectl: the speakers that answer for the address, and why both hold it\n" +
		"kubectl -n metallb-system logs -l component=speaker --prefix | grep -e 'sending response' -e memberlist"
	if o.changes >= 2 || o.atOnce {
		f.Certainty, f.Alternatives = analyzer.Proven, nil
		return
	}
	f.Certainty = analyzer.Likely
	f.Alternatives = []string{"a failover between the speakers that finished: their answers do not overlap in time"}
}

// arpOwnersWords words the finding of o, as judgeARPOwners judged it.
func arpOwnersWords(o *arpOwners) (title, summary, cause, fix string) {
	shown := o.timeline
	if len(shown) > maxTimeline {
		shown = append(slices.Clip(shown[:maxTimeline]), fmt.Sprintf("... %d more", len(o.timeline)-maxTimeline))
	}
	what := ""
	if o.is != "" {
		what = fmt.Sprintf(" (%s)", o.is)
	}
	title = fmt.Sprintf("%s is claimed by %d MAC addresses: %s", o.ip, len(o.macs), listSome(o.macs, false))
	summary = fmt.Sprintf("The owner of %s%s changes %d %s %s: %s. Neighbours send traffic for it to "+
		"whichever host claimed it last.", o.ip, what, o.changes, plural(o.changes, "time", "times"),
		[...]string{fromCapture: "in the capture", fromNeigh: "between the neighbor table snapshots",
			fromArping: "among arping's replies", fromSpeaker: "along MetalLB's speakers' log lines"}[o.from],
		strings.Join(shown, " -> "))
	cause = "Two hosts announce the same address: two load-balancer controllers (MetalLB and kube-vip) both " +
		"announcing a Service's VIP, a failover between nodes, or an address configured on two hosts."
	if o.speakers != nil {
		cause = "Two MetalLB speakers announce the address (layer 2 mode), each answering ARP with its own " +
			"node's MAC, as their logs show: their leader election disagrees, as when the nodes cannot reach each " +
			"other (memberlist, port 7946) or one cannot reach the API server."
		fix = fmt.Sprintf("Find why the speakers disagree over %s: their logs (memberlist, node events), TCP and UDP "+
			"7946 between the nodes, each node's access to the API server; deleting the speaker Pods makes them "+
			"elect one announcer again.", o.ip)
		return title, summary, cause, fix
	}
	fix = fmt.Sprintf("Find the hosts with MACs %s (`ip -br link` on the nodes) and keep one announcer for %s: "+
		"give each LoadBalancer Service one controller (spec.loadBalancerClass), or remove the duplicate address.",
		listSome(o.macs, false), o.ip)
	return title, summary, cause, fix
}

// speakerAnswers returns, per address, the lines in which MetalLB's
// speakers say they answered ARP or NDP for it ("got ARP request for
// service IP, sending response", with ip and responseMAC), in time order.
func speakerAnswers(s *model.Snapshot) map[netip.Addr][]*model.LogEvent {
	out := map[netip.Addr][]*model.LogEvent{}
	for i := range s.Logs {
		le := &s.Logs[i]
		ip, err := netip.ParseAddr(le.Fields["ip"])
		if err == nil && le.Fields["responseMAC"] != "" && strings.Contains(le.Message, "sending response") {
			out[ip] = append(out[ip], le)
		}
	}
	for _, l := range out {
		slices.SortStableFunc(l, func(a, b *model.LogEvent) int { return a.Time.Compare(b.Time) })
	}
	return out
}

// speakerClaims returns the claims the speakers' lines show of the
// addresses nothing else shows claimed, one sequence per address in time
// order.
func speakerClaims(answers map[netip.Addr][]*model.LogEvent, owners []*arpOwners) []*arpOwners {
	var out []*arpOwners
	for ip, lines := range answers {
		if slices.ContainsFunc(owners, func(o *arpOwners) bool { return o.ip == ip }) {
			continue
		}
		o := &arpOwners{ip: ip, from: fromSpeaker}
		for _, le := range lines {
			mac := strings.ToLower(le.Fields["responseMAC"])
			o.claim(mac, &model.ARPEvent{Node: le.Node, Pos: le.Pos, Time: le.Time, Op: "speaker reply", IP: ip, MAC: mac})
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b *arpOwners) int { return a.ip.Compare(b.ip) })
	return out
}

// joinSpeakers keeps the speakers' lines (in time order) that answer with
// o's MACs when two or more speakers (told apart by node, Pod and file)
// answered with two or more of them, each with its own: one speaker
// answering with two MACs is one host's two NICs. atOnce is set when the
// MAC changes twice or more along the lines.
func (o *arpOwners) joinSpeakers(lines []*model.LogEvent) {
	macOf := map[string]string{}
	var kept []*model.LogEvent
	changes, last := 0, ""
	for _, le := range lines {
		mac, who := strings.ToLower(le.Fields["responseMAC"]), le.Node+"|"+le.Pod+"|"+le.Pos.File
		if !slices.Contains(o.macs, mac) {
			continue
		}
		if m, ok := macOf[who]; ok && m != mac {
			return
		}
		macOf[who] = mac
		kept = append(kept, le)
		if last != "" && mac != last {
			changes++
		}
		last = mac
	}
	distinct := map[string]bool{}
	for _, m := range macOf {
		distinct[m] = true
	}
	if len(macOf) >= 2 && len(distinct) >= 2 {
		o.speakers, o.atOnce = kept, changes >= 2
	}
}

// maxTimeline and maxTimelineFact bound the owner changes a finding's
// summary and its timeline fact list.
const (
	maxTimeline     = 12
	maxTimelineFact = 100
)

// snapshotKey orders snapshot files by name, with "before" ahead of
// "after" (and "old" ahead of "new") whatever the alphabet says.
var snapshotOrder = strings.NewReplacer("before", "\x00", "after", "\x01", "old", "\x00", "new", "\x01")

func snapshotKey(file string) string { return snapshotOrder.Replace(file) }

// hostNIC is a link of a host that claims an address.
type hostNIC struct {
	dev, mac string
	pos      model.Pos
}

// oneHostsNICs returns the links of one host that hold every MAC claiming
// o's address, when its links (of one node, or of one file when the
// bundle names no node) list them all on two or more devices and its
// addresses, when shown, include the address: ARP flux, not two hosts.
// nil otherwise.
func oneHostsNICs(s *model.Snapshot, o *arpOwners) []hostNIC {
	type host struct{ node, file string }
	byHost := map[host][]hostNIC{}
	var hosts []host
	add := func(node, dev, mac string, pos model.Pos) {
		if mac == "" || !slices.Contains(o.macs, mac) {
			return
		}
		h := host{node: node}
		if node == "" {
			h.file = pos.File
		}
		if byHost[h] == nil {
			hosts = append(hosts, h)
		}
		if !slices.ContainsFunc(byHost[h], func(n hostNIC) bool { return n.dev == dev }) {
			byHost[h] = append(byHost[h], hostNIC{dev: dev, mac: mac, pos: pos})
		}
	}
	for _, l := range s.Links {
		add(l.Node, l.Dev, l.MAC, l.Pos)
	}
	for _, a := range s.Addrs {
		add(a.Node, a.Dev, a.MAC, a.Pos)
	}
	for _, h := range hosts {
		nics := byHost[h]
		if len(nics) < 2 || slices.ContainsFunc(o.macs, func(m string) bool {
			return !slices.ContainsFunc(nics, func(n hostNIC) bool { return n.mac == m })
		}) {
			continue
		}
		shown, has := false, false
		for _, a := range s.Addrs {
			if a.Node == h.node && (h.file == "" || a.Pos.File == h.file) {
				shown, has = true, has || a.Prefix.Addr() == o.ip
			}
		}
		if !shown || has {
			return nics
		}
	}
	return nil
}

// arpFluxFinding reports an address claimed by two or more NICs of one
// host: the host answers ARP for it on each.
func arpFluxFinding(o *arpOwners, nics []hostNIC) analyzer.Finding {
	node := o.node
	if nics[0].pos.File != "" && node == "" {
		node = "the host of " + nics[0].pos.File
	}
	var devs []string
	ev := o.claimEvidence()
	for _, n := range nics {
		devs = append(devs, n.dev+" "+n.mac)
		ev = append(ev, analyzer.Evidence{Pos: n.pos, Note: fmt.Sprintf("%s has MAC %s", n.dev, n.mac)})
	}
	f := analyzer.Finding{Subject: subject("node", o.node, "address", o.ip.String()), Severity: analyzer.Info,
		Certainty: analyzer.Proven, Evidence: ev,
		Title: fmt.Sprintf("%s is answered by %d NICs of one host (ARP flux): %s", o.ip, len(nics), strings.Join(devs, ", ")),
		Facts: map[string]any{"ip": o.ip.String(), "macs": o.macs, "devices": devs, "changes": o.changes, "arp_flux": true},
		Supports: []string{fmt.Sprintf("%d claims of %s by %s", len(o.claims), o.ip, listSome(o.macs, false)),
			fmt.Sprintf("the links of %s list every one of those MACs: %s", cmpOr(o.node, node), strings.Join(devs, ", "))},
		Contradicts: []string{"a second host with a copy of one of these MACs (a cloned VM, a MAC set by hand)"},
	}
	if o.node != "" {
		f.Facts["node"] = o.node
	}
	f.Summary = fmt.Sprintf("%s is claimed by %s, and all of them are NICs of %s (%s): the host answers ARP for "+
		"its address on each NIC that hears the request. Neighbours keep whichever reply came last, so traffic "+
		"for %s may enter by either NIC; no other host claims it.", o.ip, listSome(o.macs, false), node,
		strings.Join(devs, ", "), o.ip)
	f.Cause = "Linux answers ARP for any of its addresses on any interface by default (arp_ignore=0), so two " +
		"NICs of one host on one segment both answer (\"ARP flux\")."
	f.Fix = "If the traffic must enter by the NIC that holds the address, set net.ipv4.conf.all.arp_ignore=1 and " +
		"net.ipv4.conf.all.arp_announce=2 on the host, or put the NICs on different segments (or bond them)."
	return f
}

// hostLinksShown says the bundle holds links or addresses of node ("" for a
// bundle that names none): oneHostsNICs has judged the MACs against them.
func hostLinksShown(s *model.Snapshot, node string) bool {
	return slices.ContainsFunc(s.Links, func(l model.Link) bool { return l.Node == node && l.MAC != "" }) ||
		slices.ContainsFunc(s.Addrs, func(a model.IfAddr) bool { return a.Node == node && a.MAC != "" })
}

// adjacentBurnedInMACs says macs, two or more, are universally
// administered (set by the manufacturer, not by software: Docker's,
// VMs' and keepalived's are locally administered) unicast addresses that
// differ only in their last octet, by one from each to the next: the
// ports of one network card, which manufacturers number in sequence.
func adjacentBurnedInMACs(macs []string) bool {
	if len(macs) < 2 {
		return false
	}
	var last []int
	prefix := ""
	for _, m := range macs {
		hw, err := net.ParseMAC(m)
		if err != nil || len(hw) != 6 || hw[0]&0x03 != 0 {
			return false
		}
		if p := string(hw[:5]); prefix == "" {
			prefix = p
		} else if p != prefix {
			return false
		}
		last = append(last, int(hw[5]))
	}
	slices.Sort(last)
	for i := 1; i < len(last); i++ {
		if last[i]-last[i-1] != 1 {
			return false
		}
	}
	return true
}

// arpCardFinding reports an address claimed by adjacent burned-in MACs,
// with no links of the host to check them against: likely two ports of
// one card, the host answering ARP on each.
func arpCardFinding(o *arpOwners) analyzer.Finding {
	ev := o.claimEvidence()
	macs := listSome(o.macs, false)
	f := analyzer.Finding{Subject: subject("node", o.node, "address", o.ip.String()), Severity: analyzer.Info,
		Certainty: analyzer.Likely, Evidence: ev,
		Title: fmt.Sprintf("%s is answered by %s, likely two ports of one card (ARP flux)", o.ip, macs),
		Facts: map[string]any{"ip": o.ip.String(), "macs": o.macs, "changes": o.changes, "arp_flux": true},
		Supports: []string{fmt.Sprintf("%d claims of %s by %s", len(o.claims), o.ip, macs),
			fmt.Sprintf("%s are set by the manufacturer and numbered in sequence, as the ports of one card are", macs)},
		Contradicts: []string{"two machines of one batch can have MACs in sequence too"},
		Alternatives: []string{"two hosts whose cards were numbered in sequence",
			"two load-balancer controllers, or two nodes, announce the address"},
		Decide: collected("ip-link", "on the host that should hold "+o.ip.String()+": whether it has both MACs "+macs),
	}
	if o.node != "" {
		f.Facts["node"] = o.node
	}
	f.Summary = fmt.Sprintf("%s is claimed by %s, MACs of one manufacturer numbered one after the other: most "+
		"likely two NICs of one host on the same segment, each answering ARP for the address. Neighbours keep "+
		"whichever reply came last, so traffic for %s may enter by the NIC that does not serve it.", o.ip, macs, o.ip)
	f.Cause = "Linux answers ARP for any of its addresses on any interface by default (arp_ignore=0), and a " +
		"load-balancer announcer (MetalLB's speaker) answers on every interface: two NICs of one host on one " +
		"segment both answer (\"ARP flux\")."
	f.Fix = "Check with `ip -br link` on the host that it has both MACs; then leave one NIC on the segment (or " +
		"bond them), or set net.ipv4.conf.all.arp_ignore=1 and net.ipv4.conf.all.arp_announce=2, and restrict " +
		"the announcer to the NIC that serves the address."
	return f
}

// claimEvidence cites o's first claims.
func (o *arpOwners) claimEvidence() []analyzer.Evidence {
	var ev []analyzer.Evidence
	for _, c := range o.claims[:min(len(o.claims), maxGroupEvidence)] {
		ev = append(ev, analyzer.Evidence{Pos: c.ev.Pos, Note: fmt.Sprintf("%s: %s is at %s", c.ev.Op, o.ip, c.mac)})
	}
	return ev
}

// cmpOr returns a, or b when a is empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
