package rules

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// CiliumHealthUnreachable finds nodes Cilium's health checks cannot reach,
// and tells from which of their paths fail where the traffic stops.
var CiliumHealthUnreachable = &analyzer.Rule{
	Name:        "cilium-health-unreachable",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindPodChecks},
	SubjectKeys: []string{"node", "peer"},
	Run:         runCiliumHealthUnreachable,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(276), ConnectionsTimeOut.At(155)},
	Proof: "Cilium's health checks of the nodes (`cilium status`, `cilium-health status --probe`): which of a " +
		"node's two paths fail, its own address or its health endpoint in the Pod network, and, where the probes " +
		"are listed, which probe and how (\"HTTP to agent: ... i/o timeout\", \"connection refused\"), which names " +
		"where the traffic stops as a likely cause",
	Unproven: "which firewall or security group drops the probes, and for a node unreachable on both paths " +
		"whether it is down, cut off, or gone but still listed; `nc -zv NODE 4240`, `cilium node list` beside " +
		"`kubectl get nodes -o wide` decide",
	Doc: `nodes are unreachable to Cilium's health checks

Every node's Cilium agent probes every node of the cluster, itself
included, on two paths: the node's own address (the host path) and its
health endpoint, an address of the Pod network behind the node (the
endpoint path), each with an ICMP echo and an HTTP request to the
agent's port 4240. ` + "`cilium status`" + ` sums them up in its Cluster health table
("1/3 reachable", then each node failing and which path);
` + "`cilium-health status --probe`" + ` lists every probe and its error.

Which path fails says where the traffic stops. The host path failing
while the endpoint path works (the overlay carries Pod traffic between
the nodes) points at a firewall or cloud security group between the
nodes that lets the overlay through but not TCP 4240 or ICMP to the
nodes' own addresses. The endpoint path failing while the host path
works points at the Pod network between the nodes: the overlay's port
(VXLAN UDP 8472, Geneve UDP 6081) blocked, or the routes to the node's
Pods missing in native routing. Both failing leaves the node down, cut
off, or deleted but still in Cilium's node list. An HTTP probe refused
means nothing listens on 4240 there: that node's agent (or its health
endpoint) is not running. Only ICMP failing, HTTP answering, is reported
at info: the agent is reached, and Cilium's ICMP probe has misfired on
some versions. An endpoint that answers one probe and not the other is
reached through the Pod network, so the cause is left unknown (a stale
health IP, a policy denying reserved:health). A path whose primary
address answers and whose secondary one (the other address family's)
does not is partly reachable, and not judged. A node whose checks of
itself fail is reported without a cause: its own agent's health checking
is broken, and what it says of the others is not to be trusted. The
default table lists only the nodes failing: its sum ("4/6 reachable")
tells whether they are all the others.

Evidence: cilium status (cilium-dbg status) and cilium-health status
output.

Severity: a warning, of likely cause where the failing paths or the
probes' errors name where the traffic stops, of unknown cause otherwise;
info for ICMP probes alone.

Fix: allow TCP 4240 and ICMP echo between the nodes' addresses, and the
overlay's UDP port, in the nodes' firewalls and security groups (Cilium's
system requirements list them); start the agent where it is not running;
remove a node that is gone from Cilium's node list (kubectl delete
ciliumnode NAME).`,
}

// ciliumReport is one report of a node's agent: the nodes it checked.
type ciliumReport struct {
	node, file   string
	table        int
	reach, total int                     // the table's sum, 0 and 0 when not shown
	local        *model.CiliumNodeHealth // its checks of itself
	peers        []*model.CiliumNodeHealth
}

func runCiliumHealthUnreachable(p *analyzer.Pass) error {
	var reports []*ciliumReport
	type reportKey struct {
		node, file string
		table      int
	}
	byKey := map[reportKey]*ciliumReport{}
	for i := range p.Snap.CiliumHealth {
		h := &p.Snap.CiliumHealth[i]
		k := reportKey{h.Node, h.Pos.File, h.Table}
		r := byKey[k]
		if r == nil {
			r = &ciliumReport{node: h.Node, file: h.Pos.File, table: h.Table, reach: h.Reachable, total: h.Total}
			byKey[k] = r
			reports = append(reports, r)
		}
		if h.Local {
			r.local = h
			continue
		}
		r.peers = append(r.peers, h)
	}
	for _, r := range reports {
		if r.local != nil && (r.local.Host == model.HealthUnreachable || r.local.Endpoint == model.HealthUnreachable) {
			p.Report(ciliumSelfFinding(r))
			continue
		}
		var hostOnly, epOnly, both []*model.CiliumNodeHealth
		for _, h := range r.peers {
			hu, eu := h.Host == model.HealthUnreachable, h.Endpoint == model.HealthUnreachable
			switch {
			case hu && eu:
				both = append(both, h)
			case hu && h.Endpoint == model.HealthReachable:
				hostOnly = append(hostOnly, h)
			case eu && h.Host == model.HealthReachable:
				epOnly = append(epOnly, h)
			}
		}
		if len(hostOnly) > 0 {
			p.Report(ciliumHostFinding(r, hostOnly))
		}
		if len(epOnly) > 0 {
			p.Report(ciliumEndpointFinding(r, epOnly))
		}
		if len(both) > 0 {
			p.Report(ciliumBothFinding(r, both))
		}
	}
	return nil
}

// ciliumNames returns the names of nodes, and their addresses.
func ciliumNames(hs []*model.CiliumNodeHealth) (names, addrs []string) {
	for _, h := range hs {
		names = append(names, h.Peer)
		if h.IP.IsValid() {
			addrs = append(addrs, h.IP.String())
		}
	}
	return names, addrs
}

// ciliumBase is a finding on nodes of r's report, its evidence the rows
// or blocks of the nodes with how their paths fared, and the nodes' names.
func ciliumBase(r *ciliumReport, hs []*model.CiliumNodeHealth) (analyzer.Finding, []string) {
	names, addrs := ciliumNames(hs)
	f := analyzer.Finding{
		Subject:  subject("node", r.node, "peer", strings.Join(names, ", ")),
		Severity: analyzer.Warning,
		Facts:    map[string]any{"peers": names, "addresses": addrs, "checked": len(r.peers) + btoi(r.local != nil)},
	}
	for i, h := range hs {
		if i < 3 {
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: h.Pos, Note: h.Peer + ": " + ciliumPaths(h)})
		}
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s (%s): %s", h.Pos, h.Peer, ciliumAddrOf(h), ciliumPaths(h)))
	}
	return f, names
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ciliumAddrOf is a node's address, or says it is not known.
func ciliumAddrOf(h *model.CiliumNodeHealth) string {
	if h.IP.IsValid() {
		return h.IP.String()
	}
	return "address unavailable"
}

// ciliumPaths says how a node's paths fared, with the probes' errors
// where they are listed.
func ciliumPaths(h *model.CiliumNodeHealth) string {
	path := func(name, state, icmp, http string) string {
		var bad []string
		if icmp != "" && icmp != "OK" {
			bad = append(bad, "ICMP "+icmp)
		}
		if http != "" && http != "OK" {
			bad = append(bad, "HTTP "+http)
		}
		if len(bad) > 0 {
			return name + " " + strings.Join(bad, ", ")
		}
		return name + " " + state
	}
	return path("host", h.Host, h.HostICMP, h.HostHTTP) + "; " + path("endpoint", h.Endpoint, h.EndpointICMP, h.EndpointHTTP)
}

// ciliumProbeFails tells how the probes of one path of hs failed, where
// they are listed: whether an HTTP probe timed out (or found no route),
// was refused, and whether only ICMP probes failed.
func ciliumProbeFails(hs []*model.CiliumNodeHealth, host bool) (httpDrop, httpRefused, icmpOnly bool) {
	icmpOnly = true
	for _, h := range hs {
		icmp, http := h.EndpointICMP, h.EndpointHTTP
		if host {
			icmp, http = h.HostICMP, h.HostHTTP
		}
		switch l := strings.ToLower(http); {
		case http == "" || http == "OK":
			if icmp == "" || icmp == "OK" {
				icmpOnly = false // not listed, or failed in a way the table alone gives
			}
		case strings.Contains(l, "refused"):
			httpRefused, icmpOnly = true, false
		default:
			httpDrop, icmpOnly = true, false
		}
	}
	return httpDrop, httpRefused, icmpOnly
}

// ciliumDecide is the command that decides, run in the agent's Pod of
// r's node, then where (a comment) and what to run by hand (then, ADDR
// standing for the first node's address).
func ciliumDecide(r *ciliumReport, hs []*model.CiliumNodeHealth, where, then string) string {
	_, addrs := ciliumNames(hs)
	return fmt.Sprintf("# in the cilium agent's Pod on %s: every probe of every node and its error, now\n"+
		"cilium-health status --probe\n# then, %s\n%s", nodeName(r.node), where,
		strings.ReplaceAll(then, "ADDR", firstOr(addrs, "NODE_IP")))
}

// ciliumHostFinding judges nodes whose own address fails the checks while
// their health endpoint answers.
func ciliumHostFinding(r *ciliumReport, hs []*model.CiliumNodeHealth) analyzer.Finding {
	f, names := ciliumBase(r, hs)
	on := onNode(r.node)
	f.Title = fmt.Sprintf("Cilium%s cannot reach %s at its own address, its Pods it can", on, listSome(names, false))
	f.Summary = fmt.Sprintf("Cilium's health checks%s reach the health endpoint of %s through the Pod network but "+
		"not the node itself at its address.", on, listSome(names, false))
	from := "from the reporting node's host"
	if r.node != "" {
		from = "from " + r.node + "'s host"
	}
	f.Decide = ciliumDecide(r, hs, from, "nc -zv -w 3 ADDR 4240; ping -c 3 ADDR")
	httpDrop, httpRefused, icmpOnly := ciliumProbeFails(hs, true)
	switch {
	case httpRefused && !httpDrop:
		f.Certainty = analyzer.Likely
		f.Cause = "Nothing answers on TCP 4240 at the node's address: its Cilium agent is not running there, or " +
			"listens on another address than the one Cilium lists for the node."
		f.Alternatives = []string{"a host firewall on the node rejects TCP 4240"}
		f.Fix = "Get the node's Cilium agent running (kubectl -n kube-system get pods -l k8s-app=cilium -o wide)."
	case icmpOnly:
		f.Severity = analyzer.Info
		f.Certainty = analyzer.Unknown
		f.Title = fmt.Sprintf("Cilium's ICMP probes%s of %s get no answer; its HTTP probes do", on, listSome(names, false))
		f.Summary += " Only the ICMP echo fails: the node's agent answers on TCP 4240, so Pod traffic is not " +
			"shown to be affected."
		f.Alternatives = []string{"ICMP echo to the node's address is dropped by a firewall or a security group",
			"Cilium's ICMP probe misfires (sporadic ICMP timeouts reported on some versions)"}
		f.Decide = ciliumDecide(r, hs, from, "ping -c 3 ADDR")
	default:
		f.Certainty = analyzer.Likely
		f.Cause = "The health checks to the nodes' own addresses are dropped between the nodes while the overlay " +
			"gets through: a firewall or cloud security group allows the overlay's UDP port but not TCP 4240 " +
			"(or ICMP echo) between the nodes."
		if httpDrop {
			f.Cause = "TCP 4240 to the node's address is dropped between the nodes while the overlay gets through: " +
				"a firewall or cloud security group allows the overlay's UDP port but not Cilium's health port."
		}
		f.Alternatives = []string{"the node's address Cilium lists is not one the nodes can reach each other at " +
			"(a node address picked from another interface)"}
		if !httpDrop {
			f.Alternatives = append(f.Alternatives, "only ICMP echo is dropped, or Cilium's ICMP probe misfires: "+
				"`cilium-health status --probe` tells the HTTP probe from the ICMP one")
		}
		f.Fix = "Allow TCP 4240 and ICMP echo between the nodes' addresses in their firewalls and security groups."
	}
	return f
}

// ciliumEndpointFinding judges nodes whose health endpoint fails the
// checks while the node answers at its own address.
func ciliumEndpointFinding(r *ciliumReport, hs []*model.CiliumNodeHealth) analyzer.Finding {
	f, names := ciliumBase(r, hs)
	on := onNode(r.node)
	f.Title = fmt.Sprintf("Cilium%s reaches %s but not its Pods", on, listSome(names, false))
	f.Summary = fmt.Sprintf("Cilium's health checks%s reach %s at its own address but not its health endpoint in "+
		"the Pod network: Pods on the two nodes cannot reach each other.", on, listSome(names, false))
	f.Certainty = analyzer.Likely
	f.Decide = ciliumDecide(r, hs, "on both nodes while it probes: do the encapsulated packets leave and arrive?",
		"tcpdump -ni any 'host ADDR and (udp port 8472 or udp port 6081)'")
	_, refused, _ := ciliumProbeFails(hs, false)
	if crossed := ciliumEndpointAnswered(hs); crossed != "" {
		// A probe to the endpoint got through: the overlay carries it.
		f.Certainty = analyzer.Unknown
		f.Title = fmt.Sprintf("Cilium%s: the health endpoint of %s answers %s, not the other probe", on,
			listSome(names, false), crossed)
		f.Summary = fmt.Sprintf("Cilium's health checks%s reach %s at its own address, and its health endpoint "+
			"answers %s but not the other probe: the Pod network between the nodes carries packets, so why the "+
			"other probe fails is not shown.", on, listSome(names, false), crossed)
		f.Alternatives = ciliumEndpointAlternatives
		f.Decide = fmt.Sprintf("# in the cilium agent's Pod on %s: the probes now, then the health endpoint's "+
			"controller\ncilium-health status --probe; cilium status --verbose | grep -A2 cilium-health-ep", nodeName(r.node))
		if crossed == "HTTP" {
			f.Severity = analyzer.Info
			f.Title = fmt.Sprintf("Cilium's ICMP probes%s of %s's health endpoint get no answer; its HTTP probes do", on,
				listSome(names, false))
		}
		return f
	}
	if refused {
		f.Cause = "The node's health endpoint does not answer on TCP 4240: it is not running (Cilium's " +
			"cilium-health-ep controller recreates it, and says why it fails in cilium status)."
		f.Alternatives = []string{"the Pod network between the nodes rejects the traffic"}
		f.Fix = "Look at the cilium-health-ep controller in the node's cilium status --verbose, and restart its agent."
		return f
	}
	f.Cause = "The Pod network between the nodes is broken while the nodes reach each other: the overlay's " +
		"packets (VXLAN UDP 8472, Geneve UDP 6081) are dropped between the nodes, or, in native routing, the routes " +
		"to the node's Pod CIDR are missing."
	f.Alternatives = append([]string{"a firewall drops the Pod traffic the nodes forward"}, ciliumEndpointAlternatives...)
	f.Fix = "Allow the overlay's UDP port (8472 for VXLAN, 6081 for Geneve) between the nodes in their firewalls " +
		"and security groups; in native routing, route the Pod CIDRs between the nodes (auto-direct-node-routes)."
	return f
}

// ciliumEndpointAlternatives are the causes of an endpoint path failing
// besides the Pod network between the nodes.
var ciliumEndpointAlternatives = []string{
	"the node's health endpoint is not running, or Cilium probes an address it no longer has (a stale health IP " +
		"after the agent restarted; its cilium-health-ep controller says)",
	"a Cilium policy denies the health endpoint's traffic (a clusterwide default deny that does not allow " +
		"reserved:health)",
}

// ciliumEndpointAnswered returns which probe of the nodes' health
// endpoints got an answer, "ICMP" or "HTTP", where a probe is listed;
// "" when none did.
func ciliumEndpointAnswered(hs []*model.CiliumNodeHealth) string {
	for _, h := range hs {
		switch {
		case h.EndpointICMP == "OK":
			return "ICMP"
		case h.EndpointHTTP == "OK":
			return "HTTP"
		}
	}
	return ""
}

// ciliumBothFinding judges nodes unreachable on both paths.
func ciliumBothFinding(r *ciliumReport, hs []*model.CiliumNodeHealth) analyzer.Finding {
	f, names := ciliumBase(r, hs)
	on := onNode(r.node)
	f.Certainty = analyzer.Unknown
	f.Title = fmt.Sprintf("Cilium%s cannot reach %s at all", on, listSome(names, false))
	f.Summary = fmt.Sprintf("Cilium's health checks%s reach neither %s nor its Pods. Why is not shown: the node is "+
		"down or cut off, its agent is not running, or it is gone but still in Cilium's node list.", on,
		listSome(names, false))
	f.Alternatives = []string{"the node is gone (deleted or replaced) but still in Cilium's node list: a stale " +
		"CiliumNode or kvstore entry", "the node is down or cut off from the others", "its Cilium agent is not running"}
	if r.cutOff(len(hs)) {
		f.Summary = fmt.Sprintf("Cilium's health checks%s reach none of the other nodes, nor their Pods. Why is not "+
			"shown: this node is cut off from the others (its uplink, its firewall), or the others' agents are down.", on)
		f.Alternatives = []string{"this node is cut off from the others (its uplink, its own firewall)",
			"the other nodes' Cilium agents are not running"}
	}
	f.Decide = fmt.Sprintf("# the nodes Cilium lists beside the cluster's, then the first one by hand\n"+
		"kubectl get nodes -o wide; kubectl -n kube-system exec ds/cilium -- cilium node list\n"+
		"ping -c 3 %s; nc -zv -w 3 %[1]s 4240", firstOr(f.Facts["addresses"].([]string), "NODE_IP"))
	return f
}

// cutOff reports whether the n nodes unreachable on both paths are all the
// other nodes of r's report: by its sum where the table gives one (the
// default table lists only the nodes failing), else by its rows.
func (r *ciliumReport) cutOff(n int) bool {
	if r.total > 0 {
		return r.total > 2 && r.reach <= 1 && n == r.total-1
	}
	return n > 1 && n == len(r.peers)
}

// ciliumSelfFinding reports a node whose checks of itself fail.
func ciliumSelfFinding(r *ciliumReport) analyzer.Finding {
	h := r.local
	f, _ := ciliumBase(r, []*model.CiliumNodeHealth{h})
	node := r.node
	if node == "" {
		node = h.Peer
	}
	f.Subject = subject("node", node, "peer", h.Peer)
	f.Certainty = analyzer.Unknown
	f.Title = fmt.Sprintf("Cilium on %s fails its health checks of itself", h.Peer)
	f.Summary = fmt.Sprintf("Cilium's agent on %s cannot reach its own node or health endpoint: its health checking "+
		"is broken, or its state stale, and what it says of the other nodes is not to be trusted.", h.Peer)
	f.Alternatives = []string{"the agent's health endpoint is not running (its cilium-health-ep controller fails)",
		"a host firewall on the node drops TCP 4240", "the agent's view of the nodes is stale (restarting it refreshes it)"}
	f.Decide = fmt.Sprintf("# in the cilium agent's Pod on %s: a fresh probe, and the health endpoint's controller\n"+
		"cilium-health status --probe; cilium status --verbose | grep -A2 cilium-health-ep", h.Peer)
	return f
}
