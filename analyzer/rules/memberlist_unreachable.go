package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// MemberlistUnreachable finds gossip members (MetalLB's speakers, Loki's
// and Mimir's rings, Consul) that cannot reach a peer on the memberlist
// port.
var MemberlistUnreachable = &analyzer.Rule{
	Name:        "memberlist-unreachable",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	SubjectKeys: []string{"component", "peer", "port"},
	Run:         runMemberlistUnreachable,
	Symptoms:    []analyzer.SymptomRef{LoadBalancer502.At(75), LoadBalancerPending.At(60)},
	Proof: "the member's own line (\"memberlist: Failed to join 192.168.100.61: dial tcp 192.168.100.61:7946: " +
		"i/o timeout\"): its TCP connection to the peer's memberlist port got no answer; likely a firewall, " +
		"security group or policy dropping the port between the nodes",
	Unproven: "a connection refused, or one dial alone, leaves the peer member down or listening elsewhere open; " +
		"nc -vz and nc -vzu to the peer's port from the member's node decide",
	Doc: `a gossip member cannot reach its peers' memberlist port

HashiCorp's memberlist keeps a cluster's members in touch over TCP and
UDP on one port, 7946 by default: MetalLB's speakers elect through it
which node answers for each Layer 2 address, and Loki, Mimir, Cortex and
Consul build their rings on it. A member that cannot reach its peers logs
"memberlist: Failed to join 192.168.100.61: dial tcp
192.168.100.61:7946: i/o timeout" (MetalLB adds "partial join",
"joined":0). Its peers never hear of it: MetalLB's speakers each take
themselves for the only one and answer ARP for the same address from
several nodes, or from none, and a ring's members write to and read from
a part of the ring.

The commonest cause is a firewall (firewalld, ufw, a cloud security
group, a Calico host endpoint policy) that lets the node's other ports
through but not 7946, TCP and UDP: the dial then times out, or, with a
firewall that rejects, ends in "no route to host". A refused connection
means the peer's address answers but nothing listens on the port there:
the peer's member is down or restarting, or listens on another address
(MetalLB's METALLB_ML_BIND_ADDR) or port.

Evidence: the member's log lines, per peer and port; the error says which
of the above it is.

Severity: a warning. A join that times out, or finds no route to host,
is likely a firewall dropping or rejecting the port (or an advertised
address this member cannot reach); a refusal leaves open which of the
peer's failures it is, and so does a push/pull sync with a member already
known ("Push/Pull with NODE failed"), which a member gone explains as
well.

Fix: open the memberlist port, TCP and UDP, between every node the
members run on (firewall-cmd --add-port=7946/tcp --add-port=7946/udp
--permanent; the security group's rules; a Calico GlobalNetworkPolicy),
or, for a refusal, find why the peer's member does not listen.`,
}

// memberlistJoinRe is memberlist's failure to reach a peer, as it logs it
// and as the callers quote it in their errors ("Failed to join
// 192.168.100.61: dial tcp 192.168.100.61:7946: i/o timeout"; newer
// releases join by address and port).
var memberlistJoinRe = lazyre.New(`(?:Failed to join (?:\S+?)|Push/Pull with (?:\S+?) failed): dial tcp (\S+):(\d+): (?:getsockopt: |connect: )?(i/o timeout|connection refused|no route to host|connection timed out|network is unreachable)`)

// memberlistPeer is one member failing to reach one peer's port.
type memberlistPeer struct {
	comp, node, peer, port string
	errs                   []string // the errors, in the order first seen
	joins                  bool     // a join failed, not only a sync with a member already known
	lineRun
}

func runMemberlistUnreachable(p *analyzer.Pass) error {
	var peers []*memberlistPeer
	byKey := map[string]*memberlistPeer{}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		if !strings.Contains(le.Message, "Failed to join") && !strings.Contains(le.Message, "partial join") &&
			!strings.Contains(le.Message, "memberlist") && !strings.Contains(le.Message, "Push/Pull") {
			continue
		}
		m := memberlistJoinRe.FindStringSubmatch(logText(le))
		if m == nil {
			continue
		}
		comp := logComponent(le, "a memberlist member")
		k := le.Node + "\x00" + comp + "\x00" + m[1] + "\x00" + m[2]
		g := byKey[k]
		if g == nil {
			g = &memberlistPeer{comp: comp, node: le.Node, peer: m[1], port: m[2]}
			byKey[k] = g
			peers = append(peers, g)
		}
		g.joins = g.joins || strings.Contains(m[0], "Failed to join")
		if !slices.Contains(g.errs, m[3]) {
			g.errs = append(g.errs, m[3])
		}
		g.add(le)
	}
	for _, g := range peers {
		p.Report(memberlistFinding(g))
	}
	return nil
}

// memberlistFinding judges one member's failure to reach one peer by the
// errors its dials ended in, and words it.
func memberlistFinding(g *memberlistPeer) analyzer.Finding {
	addr := g.peer + ":" + g.port
	if strings.Contains(g.peer, ":") {
		addr = "[" + g.peer + "]:" + g.port
	}
	errs := strings.Join(g.errs, ", ")
	decide := fmt.Sprintf("# from the member's node: TCP and UDP to the peer's port\nnc -vz -w2 %s %s; nc -vzu -w2 %s %s",
		g.peer, g.port, g.peer, g.port)
	f := analyzer.Finding{
		Subject:  subject("component", g.comp, "peer", g.peer, "port", g.port),
		Severity: analyzer.Warning,
		Supports: []string{fmt.Sprintf("%s: memberlist failed to join %s: %s", g.first.Pos, addr, g.errs[0])},
		Decide:   decide,
		Facts:    map[string]any{"peer": g.peer, "port": g.port, "errors": g.errs, "lines": g.count, "component": g.comp},
		Evidence: g.evidence(fmt.Sprintf("cannot join %s: %s", addr, g.errs[0]), "the last such line"),
	}
	// A sync with a member already known that times out is as likely a
	// member gone as a port blocked: the firewall is named only where
	// joining failed.
	blocked := g.joins && !slices.Contains(g.errs, "connection refused") && !slices.Contains(g.errs, "network is unreachable")
	who := g.comp + onNode(g.node)
	if blocked {
		f.Certainty = analyzer.Likely
		f.Title = fmt.Sprintf("%s cannot reach its peer's memberlist port %s (%s): likely a firewall", g.comp, addr, errs)
		f.Summary = fmt.Sprintf("%s dials its peer at %s and gets no answer (%s), %s: the gossip between the "+
			"members does not get through, so they do not see each other (MetalLB's speakers each answer for "+
			"the addresses alone; a ring's members miss each other's part).", who, addr, errs, times(g.count))
		f.Cause = fmt.Sprintf("A firewall, security group or network policy between the nodes drops (or rejects) "+
			"port %s, which memberlist needs open over TCP and UDP.", g.port)
		f.Alternatives = []string{"the peer's node is down or unreachable on every port",
			"the address the peer advertises is not reachable from this member (a private address across sites or " +
				"clouds, the wrong interface's address)",
			"the peer's address is stale (a node gone or renumbered)"}
		f.Fix = fmt.Sprintf("Open port %s, TCP and UDP, between the nodes the members run on (firewall-cmd "+
			"--add-port=%s/tcp --add-port=%s/udp --permanent; the security group's rules; a GlobalNetworkPolicy).",
			g.port, g.port, g.port)
		return f
	}
	f.Certainty = analyzer.Unknown
	f.Title = fmt.Sprintf("%s cannot join its peer at %s (%s)", g.comp, addr, errs)
	if !g.joins {
		f.Title = fmt.Sprintf("%s cannot sync with its peer at %s (%s)", g.comp, addr, errs)
		f.Summary = fmt.Sprintf("%s fails to exchange state (push/pull) with a member it knew, at %s (%s), %s.", who,
			addr, errs, times(g.count))
		f.Alternatives = []string{"the peer's member went down or restarted (memberlist marks it failed after)",
			"a firewall drops the port between the nodes", "the peer's node is down or unreachable"}
		f.Fix = "Find whether the peer's member still runs; if it does, open its port between the nodes."
		return f
	}
	f.Summary = fmt.Sprintf("%s dials its peer at %s and is refused or has no route (%s), %s: the members do not "+
		"see each other. A refusal means the address answers but nothing listens on port %s there.", who, addr,
		errs, times(g.count), g.port)
	f.Alternatives = []string{"the peer's member is down or restarting",
		"the peer's member listens on another address or port (MetalLB's METALLB_ML_BIND_ADDR, the chart's memberlist port)",
		"a firewall that rejects with a TCP reset"}
	f.Fix = "Find why the peer's member does not take the connection: its state, and the address and port it listens on."
	return f
}
