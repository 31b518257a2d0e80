package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// ARPUnanswered finds addresses that hosts ask for on the link and nobody
// claims.
var ARPUnanswered = &analyzer.Rule{
	Name:     "arp-unanswered",
	Severity: analyzer.Error,
	// A capture, a neighbor table or an arping transcript, any will do.
	NeedsAny: []model.Kind{model.KindCapture, model.KindNeighbors, model.KindClient},
	Uses:     []model.Kind{model.KindKube, model.KindLogs},
	Requires: []analyzer.FactKey{facts.AddrRoles, facts.AppErrors},
	Params: []analyzer.Param{{Name: "min_requests", Type: analyzer.Integer, Default: 2, Range: analyzer.AtLeast(1),
		Doc: "the fewest unanswered ARP requests for one IP that make a finding"}},
	SubjectKeys: []string{"node", "address"},
	Run:         runARPUnanswered,
	Explains:    []*analyzer.Rule{ICMPUnreachable},
	Symptoms:    []analyzer.SymptomRef{LoadBalancer502.At(40)},
	Plot: analyzer.Plot{
		Parts:    []analyzer.PlotPart{analyzer.PlotARP, analyzer.PlotCitedLogs},
		ARPAddrs: []analyzer.Selector{analyzer.InSubject("address")},
	},
	Proof: "ARP requests (or neighbor solicitations) nobody answered, an arping run with no reply, or a FAILED neighbor entry, for an address the " +
		"Services or Nodes say some host should hold (a LoadBalancer IP, a node address)",
	Unproven: "the unanswered requests or arping's silence alone, with the causes not ruled out (the host down or gone, the address moved, " +
		"a host that does not answer) and `ip addr` on the nodes to decide",
	Doc: `nobody answers ARP (or neighbor discovery) for an address

In a capture, hosts ask who has an address (ARP requests, IPv6 neighbor
solicitations) and nothing claims it within three seconds, the time Linux
takes before it gives up on a neighbor; or a neighbor table (ip neigh) shows
the address FAILED or INCOMPLETE (judged when the Kubernetes objects say the
address should answer, or when the table was taken for that address
alone, ip neigh show ADDR: a full table's FAILED entries are mostly hosts
long gone); or an arping run asked for it and
received no response (iputils arping's "Received 0 response(s)").
Nothing can reach the address: the kernel
sends no SYN at all, and applications fail with "No route to host"
(EHOSTUNREACH). In a cluster this is a LoadBalancer IP that no node announces
(the MetalLB speaker or kube-vip is not running, has no L2 advertisement for
the address, or the node that held it is gone), a node that is down, or a Pod
IP routed to a bridge where the Pod is gone.

A capture taken on another host than the one asking may not see the replies,
which are sent to the asker alone; so requests are judged only when the
capture shows other traffic to the asker (a reply to one of its other
requests, a connection), or when the Kubernetes objects say the address
should answer. Requests within three seconds of the capture's end are not
judged. At least two unanswered requests are needed (min_requests); an
arping run, made on the host that asks and so seeing any answer, counts
on its own, unless another run got an answer from the address or it
asked for no answer (duplicate address detection, -D, or announcements,
-U and -A).

Evidence: the request frames; the neighbor table entries; arping's
"Received 0 response(s)" line; the Kubernetes
objects that say what the address is; application log lines with "no route
to host" to it.

Severity: error when the address is a Service's LoadBalancer or external IP,
a ready endpoint or a Node's address; warning otherwise.

Fix: for a LoadBalancer IP, check the announcing controller (kubectl -n
metallb-system get pods, the L2Advertisement and IPAddressPool that cover the
address; kube-vip's pods and leader lease); for a node, whether it is up; for
a Pod IP, whether the Pod still exists.`,
}

// arpSilence is an address nobody answers ARP (or neighbor discovery)
// for, on one node, and its judgement (judgeARPSilence): the requests a
// capture shows unanswered, the neighbor table's failed entries, what the
// address is. arpSilenceWords words it.
type arpSilence struct {
	node     string
	ip       netip.Addr
	requests []*model.ARPEvent
	askers   []string
	neigh    []*model.Neighbor
	arping   []*model.ClientResult // arping runs that received no response
	asked    bool                  // a neighbor table of this address alone shows it failed

	nreq        int       // the requests, those a capture read in summary mode counted included
	fromCapture bool      // enough requests went unanswered
	first, last time.Time // of the requests
	states      []string  // the neighbor table's states for the address
	is          []string  // what the address is in the cluster
	vip         bool      // it is a LoadBalancer address
	appErrors   int       // the failures to reach it applications log
}

func runARPUnanswered(p *analyzer.Pass) error {
	s := p.Snap
	var groups []*arpSilence
	byKey := map[string]*arpSilence{}
	groupOf := func(node string, ip netip.Addr) *arpSilence {
		k := node + "|" + ip.String()
		g := byKey[k]
		if g == nil {
			g = &arpSilence{node: node, ip: ip}
			byKey[k] = g
			groups = append(groups, g)
		}
		return g
	}
	roles := facts.AddrRoles.Of(p)
	visible := visibleHosts(s)
	// focus is, for each neighbor table, the one address all its entries
	// are of ("-" for a table of several): `ip neigh show ADDR`, or a grep
	// for it, asked about that address alone.
	focus := map[string]string{}
	for i := range s.ARP {
		ev := &s.ARP[i]
		// A request counts when the capture would show its answer: the
		// asker is seen receiving other traffic, or the Kubernetes
		// objects say the address must answer. A copy of a request seen
		// on another interface (tcpdump -i any on a bridge) is not one.
		if !ev.Unanswered || ev.Copy || !visible[ev.IP.String()] && !roles.Of(ev.Target, 0).OnLink() {
			continue
		}
		if facts.NotYetDue(s, ev.Pos.File, ev.Time) {
			continue // a cut capture ends before its answer was due
		}
		g := groupOf(ev.Node, ev.Target)
		g.requests = append(g.requests, ev)
		if a := ev.IP.String(); !slices.Contains(g.askers, a) {
			g.askers = append(g.askers, a)
		}
	}
	for i := range s.Neighbors {
		n := &s.Neighbors[i]
		if k := n.Pos.File + "|" + n.Node; focus[k] == "" || focus[k] == n.IP.String() {
			focus[k] = n.IP.String()
		} else {
			focus[k] = "-"
		}
	}
	for i := range s.Neighbors {
		n := &s.Neighbors[i]
		if n.State == "FAILED" || n.State == "INCOMPLETE" {
			g := groupOf(n.Node, n.IP)
			g.neigh = append(g.neigh, n)
			g.asked = g.asked || focus[n.Pos.File+"|"+n.Node] == n.IP.String()
		}
	}
	for _, r := range unansweredArping(s) {
		g := groupOf(r.Node, r.Addr.Addr())
		g.arping = append(g.arping, r)
	}
	minRequests := int(p.Param("min_requests", 2))
	for _, g := range groups {
		if f, ok := judgeARPSilence(p, g, roles.Of(g.ip, 0), minRequests); ok {
			f.Title, f.Summary, f.Cause, f.Fix = arpSilenceWords(g)
			p.Report(f)
		}
	}
	return nil
}

// judgeARPSilence judges g, whose address is rs; ok is false when neither
// minRequests unanswered requests nor the neighbor table of an address that
// must answer show it. It fills in g and returns the finding without its
// words.
func judgeARPSilence(p *analyzer.Pass, g *arpSilence, rs facts.Roles, minRequests int) (analyzer.Finding, bool) {
	should := rs.OnLink()
	for _, r := range g.requests {
		g.nreq += 1 + r.Repeats // repeats a capture read in summary mode counted
	}
	g.fromCapture = g.nreq >= minRequests
	fromNeigh := len(g.neigh) > 0 && (should || g.asked)
	if !g.fromCapture && !fromNeigh && len(g.arping) == 0 {
		return analyzer.Finding{}, false
	}
	sev := analyzer.Warning
	values := map[string]any{"ip": g.ip.String()}
	var ev []analyzer.Evidence
	if g.fromCapture {
		for i, r := range g.requests {
			if i == maxGroupEvidence {
				break
			}
			ev = append(ev, analyzer.Evidence{Pos: r.Pos, Note: fmt.Sprintf("%s asks who has %s: no answer", r.IP, g.ip)})
		}
		g.first, g.last = g.requests[0].Time, g.requests[len(g.requests)-1].Time
		for _, r := range g.requests { // repeats a capture read in summary mode counted
			if r.Repeats > 0 && r.LastRepeat.After(g.last) {
				g.last = r.LastRepeat
			}
		}
		values["requests"] = g.nreq
		values["askers"] = g.askers
		values["first"] = g.first.Format(time.RFC3339Nano)
		values["last"] = g.last.Format(time.RFC3339Nano)
	}
	if len(g.neigh) > 0 {
		for _, n := range g.neigh {
			ev = append(ev, analyzer.Evidence{Pos: n.Pos, Note: fmt.Sprintf("%s %s", g.ip, n.State)})
			if !slices.Contains(g.states, n.State) {
				g.states = append(g.states, n.State)
			}
		}
		values["neighbor_state"] = strings.Join(g.states, ", ")
	}
	for _, r := range g.arping {
		ev = append(ev, analyzer.Evidence{Pos: r.Pos, Note: fmt.Sprintf("arping %s: %s", g.ip, r.Message)})
	}
	if len(g.arping) > 0 {
		values["arping_unanswered"] = len(g.arping)
	}
	g.is, g.vip = rs.AddrWords(g.ip), rs.VIP()
	if len(rs) > 0 {
		values["ip_is"] = strings.Join(g.is, "; ")
		ev = append(ev, rs.Evidence()...)
		if should {
			sev = analyzer.Error
		}
	}
	if n, lev := facts.AppErrors.Of(p).For(g.ip, "host-unreachable"); n > 0 {
		g.appErrors = n
		ev = append(ev, lev...)
		values["app_errors"] = n
	}
	if g.node != "" {
		values["node"] = g.node
	}
	f := analyzer.Finding{Subject: subject("node", g.node, "address", g.ip.String()), Severity: sev,
		Certainty: analyzer.Unknown, Facts: values, Evidence: ev,
		Alternatives: []string{"the host with the address is down or gone",
			"the address moved to another host or link without being announced",
			"a firewall or the host's arp_ignore setting keeps it from answering"},
		Decide: collected("ip-addr", fmt.Sprintf("on the nodes: which one holds %s", g.ip)),
	}
	if len(ev) > 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s", ev[0].Pos, ev[0].Note))
	}
	f.Contradicts = append(f.Contradicts, "a capture on another link than the address's would miss answers sent there")
	if g.vip {
		f.Alternatives = []string{"the load-balancer controller's L2 announcer (MetalLB speaker, kube-vip) is not running",
			"no advertisement (L2Advertisement, IPAddressPool) covers the address",
			"the node that held the address is gone"}
	}
	if sev == analyzer.Error {
		f.Certainty = analyzer.Proven
		f.Supports = append(f.Supports, fmt.Sprintf("the address is %s, which some host should answer for", strings.Join(g.is, "; ")))
	}
	return f, true
}

// arpSilenceWords words the finding of g, as judgeARPSilence judged it.
func arpSilenceWords(g *arpSilence) (title, summary, cause, fix string) {
	proto := "ARP"
	if g.ip.Is6() {
		proto = "neighbor discovery"
	}
	var says []string
	if g.fromCapture {
		says = append(says, fmt.Sprintf("%d %s from %s for %s got no answer within %s, between %s and %s.",
			g.nreq, plural(g.nreq, "request", "requests"), listSome(g.askers, false), g.ip,
			model.ARPAnswerWindow, g.first.Format("15:04:05.000"), g.last.Format("15:04:05.000")))
	}
	if len(g.arping) > 0 {
		says = append(says, fmt.Sprintf("arping asked for %s and received no response (%s).", g.ip, g.arping[0].Message))
	}
	if len(g.states) > 0 {
		says = append(says, fmt.Sprintf("The neighbor table shows %s %s.", g.ip, strings.Join(g.states, ", then ")))
	}
	if len(g.is) > 0 {
		says = append(says, fmt.Sprintf("The address is %s.", strings.Join(g.is, "; ")))
	}
	if g.appErrors > 0 {
		says = append(says, fmt.Sprintf("Applications log %d %s to reach it.", g.appErrors, plural(g.appErrors, "failure", "failures")))
	}
	summary = strings.Join(says, " ") + " Nothing can reach the address: the kernel sends nothing to it, and " +
		"applications fail with \"No route to host\"."
	title = fmt.Sprintf("nobody answers %s for %s", proto, g.ip)
	if len(g.is) > 0 {
		title += fmt.Sprintf(" (%s)", g.is[0])
	}
	if g.fromCapture {
		title += fmt.Sprintf(": %d %s from %s", g.nreq, plural(g.nreq, "request", "requests"), listSome(g.askers, false))
	}
	cause = "No host on the link has the address: it is down or gone, or its address moved without being announced."
	fix = fmt.Sprintf("Find the host that should have %s (`ip -br addr` on the nodes) and check that it is up and on this link.", g.ip)
	if g.vip {
		cause = "No node announces the LoadBalancer address: the load-balancer controller's L2 announcer (MetalLB " +
			"speaker, kube-vip) is not running, has no advertisement covering the address, or the node that held it " +
			"is gone."
		fix = fmt.Sprintf("Check the announcer: `kubectl -n metallb-system get pods -o wide` and the L2Advertisement / "+
			"IPAddressPool covering %s (MetalLB), or kube-vip's pods and its leader lease; `ip -br addr` on the nodes "+
			"shows which one holds the address.", g.ip)
	}
	return title, summary, cause, fix
}

// unansweredArping returns the arping runs that received no response,
// but for an address another run of the same node saw answer.
func unansweredArping(s *model.Snapshot) []*model.ClientResult {
	answered := map[string]bool{}
	for i := range s.Client {
		if r := &s.Client[i]; r.Tool == "arping" && r.MAC != "" {
			answered[r.Node+"|"+r.Addr.Addr().String()] = true
		}
	}
	var out []*model.ClientResult
	for i := range s.Client {
		r := &s.Client[i]
		if r.Tool == "arping" && r.Outcome == model.ClientTimeout && r.Addr.Addr().IsValid() &&
			!answered[r.Node+"|"+r.Addr.Addr().String()] && !arpingExpectsNoReply(r.Command) {
			out = append(out, r)
		}
	}
	return out
}

// arpingExpectsNoReply says an arping command line asks for no answer:
// duplicate address detection (-D), whose silence is the healthy outcome,
// or unsolicited announcements (-U, -A).
func arpingExpectsNoReply(command string) bool {
	for _, tok := range strings.Fields(command) {
		if strings.HasPrefix(tok, "-") && !strings.HasPrefix(tok, "--") && strings.ContainsAny(tok[1:], "DUA") {
			return true
		}
	}
	return false
}

// visibleHosts returns the addresses the captures show receiving
// traffic: the targets of ARP replies, and the clients and servers of
// connection attempts. A capture that shows them receiving would show the
// replies to their ARP requests.
func visibleHosts(s *model.Snapshot) map[string]bool {
	out := map[string]bool{}
	for _, e := range s.ARP {
		if (e.Op == "reply" || e.Op == "na") && e.Target.IsValid() && e.Target != e.IP {
			out[e.Target.String()] = true
		}
	}
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.Outcome == model.OutcomeEstablished || len(a.SYNACK) > 0 || len(a.ServerRST) > 0 {
			out[a.Client.Addr().String()] = true
		}
		out[a.Server.Addr().String()] = true
	}
	for _, st := range s.EndpointStats {
		out[st.Server.Addr().String()] = true
		if st.Outcome == model.OutcomeEstablished || st.Outcome == model.OutcomeRefused {
			for _, c := range st.ClientAddrs {
				out[c.String()] = true
			}
		}
	}
	return out
}
