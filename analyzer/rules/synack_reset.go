package rules

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// SynAckReset finds connection attempts whose SYN/ACK the client answered
// with an RST.
var SynAckReset = &analyzer.Rule{
	Name:        "synack-reset",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindCapture},
	Uses:        []model.Kind{model.KindIPVS, model.KindKube, model.KindSysctl, model.KindComponents},
	Requires:    []analyzer.FactKey{facts.NodePortRange, facts.PortOwners, facts.LocalPorts, facts.NATPairs},
	SubjectKeys: []string{"node", "client", "address"},
	Run:         runSynAckReset,
	Explains:    []*analyzer.Rule{TimeWaitChurn},
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(100), LoadBalancer502.At(50)},
	Proof: "the client's source port is an IPVS virtual service's port (ipvsadm -Ln) or a Service's NodePort " +
		"(kubectl get svc), beside the capture's SYN, SYN/ACK and RST",
	Unproven: "the resets, who sends them and on which connections, with the causes not ruled out, ranked (a NodePort " +
		"only when the source port is in the NodePort range; the reply of a translated connection coming back " +
		"untranslated when the capture shows the same SYN before and after DNAT) and the command that would decide",
	Doc: `client resets the server's SYN/ACK

In a capture, a client sends a SYN, the server answers with a SYN/ACK, and the
client's next packet is an RST instead of the ACK that completes the
handshake; retransmitted SYNs on the same 4-tuple meet the same fate. The
application sees a connect timeout (kubelet: "context deadline exceeded" probe
failures).

netmortem joins each reset attempt with the node's other evidence: when the
client's source port is a port the node owns for something else (an IPVS
virtual service, a Service NodePort), that is the cause. IPVS sees a SYN/ACK
arrive for its virtual service without having seen a SYN and resets it. The
client's port came from net.ipv4.ip_local_port_range, which overlaps the
NodePort range (see ephemeral-nodeport-overlap).

Evidence: the capture's SYN, SYN/ACK and RST frames; the IPVS table
(ipvsadm -Ln), Services with their NodePorts, sysctl output.

A NodePort is blamed only when the evidence shows it. Otherwise the finding
reports the resets with the causes not ruled out: when the capture shows the
same SYN before and after DNAT and the SYN/ACK coming back with the
endpoint's address, the reply was not translated back (see
nat-reply-untranslated; sysctl net.bridge.bridge-nf-call-iptables decides);
a source port outside the NodePort range rules a NodePort out.

Severity: error when the source port is shown to be owned by IPVS or a
NodePort; warning otherwise (the cause can also be an untranslated reply, a
firewall or a conntrack problem on the client).

Fix: reserve the NodePort range (net.ipv4.ip_local_reserved_ports) or move
ip_local_port_range out of it.`,
}

// synAckResets are one client's attempts to one server whose SYN/ACK it
// reset, and their judgement (judgeSynAckResets): which of the client's
// source ports a NodePort owns, whether the replies came back untranslated.
// synAckWords words it.
type synAckResets struct {
	node     string
	client   netip.Addr
	server   netip.AddrPort
	attempts []*model.Attempt

	servers         []string             // the servers, sorted
	synacks, resets int                  // the SYN/ACKs and client RSTs, each once
	ownedPorts      []uint16             // the client's source ports the node owns
	owned           []string             // what owns them
	np              facts.NodePorts      // the NodePort range
	local           facts.NodeLocalPorts // the node's ephemeral range
	natted          int                  // attempts whose reply came back untranslated
	natPair         facts.NATPair        // the first of them
}

func runSynAckReset(p *analyzer.Pass) error {
	s := p.Snap
	var groups []*synAckResets
	byKey := map[string]*synAckResets{}
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.Outcome != model.OutcomeSynAckClientRST {
			continue
		}
		// Per client and server: the resets of one client's connections
		// to two servers are two problems (a NodePort the client's port
		// hits, a reply that comes back untranslated from one of them).
		key := a.Node + "|" + a.Client.Addr().String() + "|" + a.Server.String()
		g := byKey[key]
		if g == nil {
			g = &synAckResets{node: a.Node, client: a.Client.Addr(), server: a.Server}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.attempts = append(g.attempts, a)
	}
	for _, g := range groups {
		f := judgeSynAckResets(p, g)
		f.Title, f.Summary, f.Cause, f.Fix = synAckWords(g)
		p.Report(f)
	}
	return nil
}

// maxAttemptEvidence bounds how many attempts a finding cites frame by frame.
const maxAttemptEvidence = 10

// judgeSynAckResets judges g: who owns the client's source ports (the IPVS
// table, the Services' NodePorts), whether a capture shows the replies
// translated back, how firmly that shows the cause. It fills in g and
// returns the finding without its words.
func judgeSynAckResets(p *analyzer.Pass, g *synAckResets) analyzer.Finding {
	s := p.Snap
	// The owners of the source ports, not the range, show the cause: only
	// the fix's ports rest on the range (see synAckWords).
	g.np, g.local = facts.NodePortRange.Partly(p), facts.LocalPorts.Of(p).Of(g.node)
	np, owners := g.np, facts.PortOwners.Of(p).On(g.node)
	lpr, haveLPR, eph := g.local.PortRange, g.local.HasRange, g.local.Range

	var tuples, services []string
	var ports []uint16
	servers := map[string]bool{}
	ev := []analyzer.Evidence{}
	var ownerEv []analyzer.Evidence
	for i, a := range g.attempts {
		port := a.Client.Port()
		tuples = append(tuples, fmt.Sprintf("%s -> %s", a.Client, a.Server))
		servers[a.Server.String()] = true
		g.resets += model.DistinctSegs(a.ClientRST) // copies seen on two interfaces count once
		g.synacks += model.DistinctSegs(a.SYNACK)
		if !slices.Contains(ports, port) {
			ports = append(ports, port)
			if os := owners[port]; len(os) > 0 {
				g.ownedPorts = append(g.ownedPorts, port)
				for _, o := range os {
					g.owned = append(g.owned, o.What)
					ownerEv = append(ownerEv, o.Evidence())
					if !o.IPVS {
						services = append(services, o.Namespace+"/"+o.Service)
					}
				}
			}
		}
		if i < maxAttemptEvidence {
			ev = append(ev, attemptEvidence(a)...)
		}
	}
	slices.Sort(services)
	services = slices.Compact(services)
	g.servers = slices.Sorted(maps.Keys(servers))

	values := map[string]any{
		"client":          g.client.String(),
		"servers":         g.servers,
		"attempts":        len(g.attempts),
		"synacks":         g.synacks,
		"client_resets":   g.resets,
		"tuples":          tuples,
		"client_ports":    ports,
		"nodeport_range":  np.Range.String(),
		"nodeport_source": np.Source(),
	}
	if g.node != "" {
		values["node"] = g.node
	}
	f := analyzer.Finding{Certainty: analyzer.Unknown, Severity: analyzer.Warning}
	inEph := 0
	for _, port := range ports {
		if haveLPR && eph.Contains(port) {
			inEph++
		}
	}
	if haveLPR {
		values["ip_local_port_range"] = eph.String()
	}
	// Attempts that are the translated copy of a connection whose reply
	// went back untranslated: the capture points at the NAT instead.
	for _, a := range g.attempts {
		if pr, ok := facts.NATPairs.Of(p).After(a); ok && pr.DNAT && pr.ReplyUntranslated() && len(pr.After.SYN) > 0 {
			if g.natted == 0 {
				g.natPair = pr
			}
			g.natted++
		}
	}
	var notOwned []uint16
	for _, port := range ports {
		if !slices.Contains(g.ownedPorts, port) {
			notOwned = append(notOwned, port)
		}
	}
	var outside []uint16
	for _, port := range notOwned {
		if !np.Range.Contains(port) {
			outside = append(outside, port)
		}
	}
	if len(outside) > 0 {
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("source %s %s %s outside the NodePort range %s (%s): no NodePort collision there",
			plural(len(outside), "port", "ports"), joinPorts(outside), plural(len(outside), "is", "are"), np.Range, np.Source()))
	}
	if len(notOwned) > 0 {
		switch {
		case s.Has(model.KindIPVS) && s.Has(model.KindKube):
			f.Contradicts = append(f.Contradicts, fmt.Sprintf("neither the IPVS table nor the Services list source %s %s: no NodePort owns them",
				plural(len(notOwned), "port", "ports"), joinPorts(notOwned)))
		case s.Has(model.KindIPVS):
			f.Contradicts = append(f.Contradicts, fmt.Sprintf("the IPVS table does not list source %s %s",
				plural(len(notOwned), "port", "ports"), joinPorts(notOwned)))
		case s.Has(model.KindKube):
			f.Contradicts = append(f.Contradicts, fmt.Sprintf("no Service has NodePort %s", joinPorts(notOwned)))
		default:
			f.Contradicts = append(f.Contradicts, "the bundle has no IPVS table (ipvsadm -Ln) and no Services: "+
				"a NodePort owning the source port is not shown")
		}
	}
	nodePortAlt := "the client's source port is a NodePort the node owns (IPVS virtual service or kube-proxy rule), so the " +
		"node answers the SYN/ACK itself"
	natAlt := "the SYN/ACK comes back untranslated from a Service's endpoint (bridge-nf-call-iptables = 0, hairpin mode off, " +
		"asymmetric routing), and the client has no connection to the endpoint's address"
	fwAlt := "a firewall rule on the client's host rejects the SYN/ACK"
	ctAlt := "a conntrack entry in the wrong state, or a socket closed before the reply arrived"
	switch {
	case len(g.ownedPorts) > 0:
		f.Certainty = analyzer.Proven
		f.Severity = analyzer.Error
		values["owned_ports"] = g.ownedPorts
		values["owners"] = g.owned
		if len(services) > 0 {
			values["nodeport_services"] = services
		}
		for i, o := range g.owned {
			f.Supports = append(f.Supports, fmt.Sprintf("%s lists %s, the client's source port", ownerEv[i].Pos, o))
		}
		if haveLPR {
			f.Supports = append(f.Supports, fmt.Sprintf("%s: net.ipv4.ip_local_port_range = %s, the ephemeral ports the client picks from",
				lpr.Pos, lpr.Value))
		}
	case g.natted > 0:
		values["untranslated"] = g.natted
		b := g.natPair.Before
		f.Supports = append(f.Supports, fmt.Sprintf("%s and %s: the same SYN (sequence number %d) to %s before DNAT and to %s after, "+
			"and no SYN/ACK from %s", b.SegPos(b.SYN[0]), g.natPair.After.SegPos(g.natPair.After.SYN[0]), b.ISN, b.Server,
			g.natPair.After.Server, b.Server))
		f.Alternatives = []string{natAlt, fwAlt, ctAlt}
		f.Decide = collected("sysctl-net", "net.bridge.bridge-nf-call-iptables")
	default:
		f.Alternatives = []string{fwAlt, ctAlt, natAlt}
		f.Decide = collected("iptables-save", "on the client's node: the rule that rejects")
		if len(outside) < len(notOwned) {
			// Some ports are in the NodePort range: a collision stays likely.
			f.Alternatives = []string{nodePortAlt, fwAlt, natAlt, ctAlt}
			f.Decide = collected("ipvsadm", "on the client's node: the virtual services of its ports")
		}
	}
	if haveLPR && inEph > 0 {
		ev = append(ev, analyzer.Evidence{Pos: lpr.Pos, Note: "net.ipv4.ip_local_port_range = " + lpr.Value})
	}
	ev = append(ev, ownerEv...)
	if len(g.ownedPorts) > 0 {
		ev = append(ev, np.Evidence()...)
	}
	f.Facts, f.Evidence = values, dedupEvidence(ev)
	f.Subject = subject("node", g.node, "client", g.client.String(), "address", g.server.String())
	return f
}

// synAckWords words the finding of g, as judgeSynAckResets judged it.
func synAckWords(g *synAckResets) (title, summary, cause, fix string) {
	n, client := len(g.attempts), g.client
	summary = fmt.Sprintf("%d connection %s from %s to %s got a SYN/ACK from the server and answered it with an RST "+
		"instead of completing the handshake (%d SYN/ACK%s, %d client RST%s, SYN retransmissions included). "+
		"The application sees a connect timeout.",
		n, plural(n, "attempt", "attempts"), client, strings.Join(g.servers, ", "),
		g.synacks, plural(g.synacks, "", "s"), g.resets, plural(g.resets, "", "s"))
	switch owned := g.ownedPorts; {
	case len(owned) > 0:
		title = fmt.Sprintf("%s resets SYN/ACKs: its source %s %s %s owned by IPVS/NodePorts",
			client, plural(len(owned), "port", "ports"), joinPorts(owned), plural(len(owned), "is", "are"))
		summary += fmt.Sprintf(" The client's source %s %s %s also owned on the node: %s.",
			plural(len(owned), "port", "ports"), joinPorts(owned), plural(len(owned), "is", "are"), strings.Join(g.owned, "; "))
		cause = "The client picked an ephemeral source port that is an allocated NodePort. The SYN/ACK coming back " +
			"to that port is matched against the node's NodePort (IPVS virtual service or kube-proxy rule) instead of " +
			"the client's socket, and the node answers it with an RST."
		if g.local.HasRange {
			cause += fmt.Sprintf(" net.ipv4.ip_local_port_range is %s, which includes the NodePort range %s (%s).",
				g.local.Range, g.np.Range, g.np.Source())
		}
		fix = reserveFix(g.np.Range, g.local.Reserved.Value)
		if g.np.Lost != "" {
			fix += fmt.Sprintf(" %s is kube-apiserver's default: the bundle's own --service-node-port-range may have been "+
				"in what a cut lost, so reserve the range the cluster uses.", g.np.Range)
		}
	case g.natted > 0:
		title = fmt.Sprintf("%s resets the server's SYN/ACK (%d %s): the reply came back untranslated",
			client, n, plural(n, "attempt", "attempts"))
		cause = fmt.Sprintf("The capture shows %d of these connections sent to %s and translated to %s; the SYN/ACK reached "+
			"the client with the endpoint's address, so the client has no connection for it and resets it "+
			"(see nat-reply-untranslated). Why the reply was not translated back is not shown by this rule.",
			g.natted, g.natPair.Before.Server, g.natPair.After.Server)
		fix = "Make the replies of translated connections go back through the node's conntrack: " +
			"`sysctl -w net.bridge.bridge-nf-call-iptables=1` with br_netfilter loaded, hairpin mode on the bridge ports " +
			"for Pods reaching themselves, symmetric routes around the node that does the NAT."
	default:
		title = fmt.Sprintf("%s resets the server's SYN/ACK (%d %s)", client, n, plural(n, "attempt", "attempts"))
		cause = "The capture shows the client's host rejecting the SYN/ACK; the bundle does not show why."
		fix = "Find what owns the client's source port on the client node (`ipvsadm -Ln | grep :PORT`, `ss -lntp sport = :PORT`, " +
			"`iptables-save | grep PORT`); if it is a NodePort, reserve the NodePort range with net.ipv4.ip_local_reserved_ports."
	}
	return title, summary, cause, fix
}

// attemptEvidence cites the SYN, SYN/ACK and client RST packets of an
// attempt, interleaved in capture order.
func attemptEvidence(a *model.Attempt) []analyzer.Evidence {
	type seg struct {
		s    model.Seg
		note string
	}
	var segs []seg
	for _, x := range a.SYN {
		segs = append(segs, seg{x, fmt.Sprintf("SYN %s -> %s", a.Client, a.Server)})
	}
	for _, x := range a.SYNACK {
		segs = append(segs, seg{x, fmt.Sprintf("SYN/ACK %s -> %s", a.Server, a.Client)})
	}
	for _, x := range a.ClientRST {
		segs = append(segs, seg{x, fmt.Sprintf("RST %s -> %s", a.Client, a.Server)})
	}
	slices.SortStableFunc(segs, func(x, y seg) int {
		if x.s.Frame != y.s.Frame {
			return x.s.Frame - y.s.Frame
		}
		return x.s.Line - y.s.Line
	})
	out := make([]analyzer.Evidence, len(segs))
	for i, x := range segs {
		out[i] = analyzer.Evidence{Pos: a.SegPos(x.s), Note: x.note}
	}
	return out
}
