package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// CalicoBGPDown finds Calico nodes whose BGP sessions to their peers are
// not established.
var CalicoBGPDown = &analyzer.Rule{
	Name:        "calico-bgp-down",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindRoutes, model.KindLogs, model.KindKube},
	SubjectKeys: []string{"node", "peer"},
	Run:         runCalicoBGPDown,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(272), ConnectionsTimeOut.At(150)},
	Proof: "`calicoctl node status` of the node: each peer's state and BIRD's word on why the session is down " +
		"(\"Active Socket: Connection refused\", \"Connect Socket: Connection timed out\", \"Connection reset by " +
		"peer\"), which names what stops it as a likely cause; or BIRD's \"Unexpected connect from unknown address\"",
	Unproven: "from calico-node's readiness failure alone (\"BGP not established with 10.0.0.2\"), why: a port " +
		"blocked, a peer not running, an address autodetected on the wrong interface; `calicoctl node status` " +
		"on the node and `nc -zv PEER 179` decide",
	Doc: `the BGP sessions of Calico's nodes are not established

In Calico's BGP mode each node's BIRD keeps a TCP session (port 179) with
every other node (the node-to-node mesh) or with route reflectors and
routers, and learns from it the routes to the other nodes' Pod blocks.
A session that is not established leaves those routes out: Pods on the
two nodes cannot reach each other, Services with a backend across the
pair time out, and calico-node stays not ready ("calico/node is not
ready: BIRD is not ready: BGP not established with 10.0.0.2").

` + "`calicoctl node status`" + ` tells why, per peer: "Connect Socket: Connection
timed out" or "No route to host" (TCP 179 does not get through: a
firewall or a cloud security group, or an address the node cannot
route to), "Active Socket: Connection refused" (nothing listens on 179
at the peer: its calico-node is not running, or the address is not the
peer's), "Connection reset by peer" (the peer refuses the session: it
does not know this node at the address the connection comes from,
which is what IP autodetection on the wrong interface does, or their
AS numbers differ). BIRD logs "Unexpected connect from unknown
address" for a connection from an address it has no peer for.

Evidence: calicoctl node status tables, calico-node's readiness failure
(its Unhealthy event, or the line in its or the kubelet's log), and
BIRD's lines in calico-node's log.

Severity: a warning; of likely cause when calicoctl's info or BIRD's
line names what stops the session, of unknown cause from the readiness
failure alone.

Fix: open TCP 179 between the nodes (and IP-in-IP, protocol 4, or
VXLAN's UDP 4789 if used); start calico-node where it is not running;
set IP_AUTODETECTION_METHOD (interface=eth1, can-reach=ADDRESS, or
kubernetes-internal-ip) when nodes advertise the wrong address.`,
}

var (
	// bgpNotEstablishedRe is calico-node's readiness failure, with the
	// peers it names.
	bgpNotEstablishedRe = lazyre.New(`BGP not established with ([0-9a-fA-F.:]+(?:\s*,\s*[0-9a-fA-F.:]+)*)`)
	// birdUnknownRe is BIRD's word on a connection from an address it has
	// no peer for.
	birdUnknownRe = lazyre.New(`Unexpected connect from unknown address ([0-9a-fA-F.:]+)`)
)

// bgpDownNode is what the bundle says of one node's sessions.
type bgpDownNode struct {
	node    string
	down    []model.BGPPeer // from calicoctl: the sessions not established
	up      int             // ... and those established
	ready   []string        // the peers the readiness failure names
	readyAt model.Pos
	readyN  int
	unknown []string // BIRD's unexpected connects, by address
	unkAt   model.Pos
	holder  *model.Socket // a listener on TCP 179 of the node not BIRD's
}

func runCalicoBGPDown(p *analyzer.Pass) error {
	var nodes []*bgpDownNode
	byNode := map[string]*bgpDownNode{}
	get := func(n string) *bgpDownNode {
		g := byNode[n]
		if g == nil {
			g = &bgpDownNode{node: n}
			byNode[n] = g
			nodes = append(nodes, g)
		}
		return g
	}
	for _, peer := range p.Snap.BGPPeers {
		g := get(peer.Node)
		if peer.Established() {
			g.up++
			continue
		}
		g.down = append(g.down, peer)
	}
	noteReady := func(node, text string, pos model.Pos, n int) {
		m := bgpNotEstablishedRe.FindStringSubmatch(text)
		if m == nil {
			return
		}
		g := get(node)
		if g.readyN == 0 {
			g.readyAt = pos
		}
		g.readyN += max(n, 1)
		for _, a := range strings.Split(m[1], ",") {
			if a = strings.TrimSpace(a); a != "" && !slices.Contains(g.ready, a) {
				g.ready = append(g.ready, a)
			}
		}
	}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		noteReady(le.Node, le.Message, le.Pos, 1)
		if m := birdUnknownRe.FindStringSubmatch(le.Message); m != nil {
			g := get(le.Node)
			if len(g.unknown) == 0 {
				g.unkAt = le.Pos
			}
			if !slices.Contains(g.unknown, m[1]) {
				g.unknown = append(g.unknown, m[1])
			}
		}
	}
	for i := range p.Snap.Kube.Events {
		e := &p.Snap.Kube.Events[i]
		noteReady(e.Source.Node, e.Message, e.Source.Pos, int(e.Count))
	}
	for _, g := range nodes {
		if len(g.down) == 0 && len(g.ready) == 0 && len(g.unknown) == 0 {
			continue // every session up
		}
		g.holder = bgpPortHolder(p.Snap, g.node)
		p.Report(bgpDownFinding(g))
	}
	return nil
}

// bgpDownFinding judges one node's sessions.
func bgpDownFinding(g *bgpDownNode) analyzer.Finding {
	on, node := onNode(g.node), nodeName(g.node)
	var peers []string
	for _, d := range g.down {
		peers = append(peers, d.Peer.String())
	}
	for _, a := range g.ready {
		if !slices.Contains(peers, a) {
			peers = append(peers, a)
		}
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "peer", firstOr(peers, firstOr(g.unknown, ""))),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Unknown,
		Facts:     map[string]any{"peers_down": peers, "peers_up": g.up},
		Decide: fmt.Sprintf("# on %s: each peer's state and why, then whether TCP 179 gets through\n"+
			"calicoctl node status\nnc -zv -w 3 %s 179", node, firstOr(peers, "PEER")),
	}
	if len(peers) > 0 {
		f.Title = fmt.Sprintf("Calico BGP%s is not established with %s", on, listSome(peers, false))
		f.Summary = fmt.Sprintf("Calico's BIRD%s has no established BGP session with %s: the routes to those nodes' "+
			"Pod blocks are missing, so Pods across the pair cannot reach each other.", on, listSome(peers, false))
	}
	if g.readyN > 0 {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.readyAt, Note: "calico-node not ready: BGP not established"})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: BGP not established with %s", g.readyAt, strings.Join(g.ready, ",")))
	}
	if len(g.down) > 0 {
		d := g.down[0]
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: d.Pos, Note: fmt.Sprintf("%s %s: %s", d.Peer, d.State, d.Info)})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: peer %s (%s) %s since %s: %s", d.Pos, d.Peer, d.Type, d.State,
			d.Since, d.Info))
	}
	if len(g.unknown) > 0 {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.unkAt, Note: "BIRD: unexpected connect from " + g.unknown[0]})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: BIRD: Unexpected connect from unknown address %s", g.unkAt,
			strings.Join(g.unknown, ", ")))
		if len(peers) == 0 {
			f.Title = fmt.Sprintf("Calico BGP%s: a connection from %s, an address of no peer", on, listSome(g.unknown, false))
			f.Summary = fmt.Sprintf("Calico's BIRD%s was asked for a BGP session from %s, which it has no peer at: "+
				"the node there advertises another address than the one its connection comes from.", on,
				listSome(g.unknown, false))
		}
	}
	bgpDownCause(&f, g)
	if f.Certainty == analyzer.Unknown {
		f.Summary += " Why is not shown: a blocked TCP 179, a peer whose calico-node is not running, or an address " +
			"autodetected on the wrong interface."
	}
	return f
}

// bgpPortHolder returns a socket of node listening on TCP 179 whose
// process is not BIRD, or nil.
func bgpPortHolder(s *model.Snapshot, node string) *model.Socket {
	for i := range s.Sockets {
		so := &s.Sockets[i]
		if so.Node != node || so.State != "LISTEN" || so.Local.Port() != 179 || !strings.HasPrefix(so.Proto, "tcp") {
			continue
		}
		if so.Process != "" && !strings.HasPrefix(so.Process, "bird") {
			return so
		}
	}
	return nil
}

// bgpDownCause names the cause BIRD's word gives, if any: calicoctl's
// info of the first peer down, or BIRD's unexpected connects.
func bgpDownCause(f *analyzer.Finding, g *bgpDownNode) {
	autodetect := "a node advertises another address than the one its connections come from: Calico's IP " +
		"autodetection took another interface (IP_AUTODETECTION_METHOD)"
	info := ""
	if len(g.down) > 0 {
		info = strings.ToLower(g.down[0].Info)
	}
	switch {
	case strings.Contains(info, "no listening socket"):
		f.Certainty = analyzer.Likely
		f.Cause = "BIRD cannot listen on TCP 179 on the node: another process holds the port (another BGP daemon, " +
			"as FRR's bgpd or MetalLB in FRR mode)."
		f.Alternatives = []string{"BIRD could not bind its listening address for another reason (calico-node's log " +
			"says why)"}
		f.Fix = "Stop the other BGP daemon on the node, or move one of them to another port (Calico's " +
			"BGPConfiguration listenPort)."
		f.Decide = "# on " + nodeName(g.node) + ": what listens on TCP 179\nss -ltnp 'sport = :179'"
		if g.holder != nil {
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.holder.Pos, Note: g.holder.Process + " listens on 179"})
			f.Supports = append(f.Supports, fmt.Sprintf("%s: %s listens on %s", g.holder.Pos, g.holder.Process, g.holder.Local))
			f.Alternatives = nil
		}
	case strings.Contains(info, "timed out") || strings.Contains(info, "no route to host"):
		f.Certainty = analyzer.Likely
		f.Cause = "TCP 179 from the node to the peer does not get through: a firewall or a cloud security group " +
			"drops it, or the peer's address is not routable from the node."
		f.Alternatives = []string{autodetect}
		f.Fix = "Allow TCP 179 between the nodes (and IP-in-IP, protocol 4, or UDP 4789 for VXLAN) in the " +
			"nodes' firewalls and security groups."
	case strings.Contains(info, "refused"):
		f.Certainty = analyzer.Likely
		f.Cause = "Nothing listens on TCP 179 at the peer: its calico-node (BIRD) is not running or not ready."
		f.Alternatives = []string{"the peer's address is not the address of a node running Calico (an address " +
			"autodetected on another interface)", "a firewall at the peer rejects TCP 179"}
		f.Fix = "Get calico-node running on the peer (kubectl -n kube-system get pods -l k8s-app=calico-node -o wide)."
	case strings.Contains(info, "reset by peer"):
		f.Certainty = analyzer.Likely
		f.Cause = "The peer refuses the session: it has no peer at the address this node's connection comes from, " +
			"because " + autodetect + "."
		f.Alternatives = []string{"the two ends' AS numbers or BGP passwords differ"}
		f.Fix = "Set IP_AUTODETECTION_METHOD on calico-node (interface=eth1, can-reach=ANOTHER_NODE, or " +
			"kubernetes-internal-ip) so that every node advertises the address it connects from."
	case len(g.unknown) > 0:
		f.Certainty = analyzer.Likely
		f.Cause = "BIRD got a connection from " + g.unknown[0] + ", an address it has no peer at: " + autodetect + "."
		f.Alternatives = []string{"a host that is not a node of the cluster connects to TCP 179"}
		f.Fix = "Set IP_AUTODETECTION_METHOD on calico-node so that every node advertises the address it connects from."
		if len(g.down) == 0 && len(g.ready) == 0 {
			f.Decide = fmt.Sprintf("# which node connects from %s, beside the address each node advertises\n"+
				"calicoctl get nodes -o wide; kubectl get nodes -o wide", g.unknown[0])
		}
	}
}
