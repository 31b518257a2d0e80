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

func runSynAckReset(p *analyzer.Pass) error {
	s := p.Snap
	type group struct {
		node     string
		client   netip.Addr
		server   netip.AddrPort
		attempts []*model.Attempt
	}
	var groups []*group
	byKey := map[string]*group{}
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
			g = &group{node: a.Node, client: a.Client.Addr(), server: a.Server}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.attempts = append(g.attempts, a)
	}
	for _, g := range groups {
		p.Report(synAckResetFinding(p, g.node, g.client, g.server, g.attempts))
	}
	return nil
}

// maxAttemptEvidence bounds how many attempts a finding cites frame by frame.
const maxAttemptEvidence = 10

func synAckResetFinding(p *analyzer.Pass, node string, client netip.Addr, server netip.AddrPort, attempts []*model.Attempt) analyzer.Finding {
	s := p.Snap
	np := facts.NodePortRange.Of(p)
	owners := facts.PortOwners.Of(p).On(node)
	local := facts.LocalPorts.Of(p).Of(node)
	lpr, haveLPR, eph := local.PortRange, local.HasRange, local.Range

	var tuples, owned, services []string
	var ports, ownedPorts []uint16
	servers := map[string]bool{}
	resets, synacks := 0, 0
	ev := []analyzer.Evidence{}
	var ownerEv []analyzer.Evidence
	for i, a := range attempts {
		port := a.Client.Port()
		tuples = append(tuples, fmt.Sprintf("%s -> %s", a.Client, a.Server))
		servers[a.Server.String()] = true
		resets += model.DistinctSegs(a.ClientRST) // copies seen on two interfaces count once
		synacks += model.DistinctSegs(a.SYNACK)
		if !slices.Contains(ports, port) {
			ports = append(ports, port)
			if os := owners[port]; len(os) > 0 {
				ownedPorts = append(ownedPorts, port)
				for _, o := range os {
					owned = append(owned, o.What)
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

	var srv []string
	for k := range servers {
		srv = append(srv, k)
	}
	slices.Sort(srv)

	values := map[string]any{
		"client":          client.String(),
		"servers":         srv,
		"attempts":        len(attempts),
		"synacks":         synacks,
		"client_resets":   resets,
		"tuples":          tuples,
		"client_ports":    ports,
		"nodeport_range":  np.Range.String(),
		"nodeport_source": np.Source(),
	}
	if node != "" {
		values["node"] = node
	}

	summary := fmt.Sprintf("%d connection %s from %s to %s got a SYN/ACK from the server and answered it with an RST "+
		"instead of completing the handshake (%d SYN/ACK%s, %d client RST%s, SYN retransmissions included). "+
		"The application sees a connect timeout.",
		len(attempts), plural(len(attempts), "attempt", "attempts"), client, strings.Join(srv, ", "),
		synacks, plural(synacks, "", "s"), resets, plural(resets, "", "s"))

	var title, cause, fix string
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
	natted := 0
	var natPair facts.NATPair
	for _, a := range attempts {
		if pr, ok := facts.NATPairs.Of(p).After(a); ok && pr.DNAT && pr.ReplyUntranslated() && len(pr.After.SYN) > 0 {
			if natted == 0 {
				natPair = pr
			}
			natted++
		}
	}
	var notOwned []uint16
	for _, port := range ports {
		if !slices.Contains(ownedPorts, port) {
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
	case len(ownedPorts) > 0:
		f.Certainty = analyzer.Proven
		f.Severity = analyzer.Error
		values["owned_ports"] = ownedPorts
		values["owners"] = owned
		if len(services) > 0 {
			values["nodeport_services"] = services
		}
		for i, o := range owned {
			f.Supports = append(f.Supports, fmt.Sprintf("%s lists %s, the client's source port", ownerEv[i].Pos, o))
		}
		title = fmt.Sprintf("%s resets SYN/ACKs: its source %s %s %s owned by IPVS/NodePorts",
			client, plural(len(ownedPorts), "port", "ports"), joinPorts(ownedPorts), plural(len(ownedPorts), "is", "are"))
		summary += fmt.Sprintf(" The client's source %s %s %s also owned on the node: %s.",
			plural(len(ownedPorts), "port", "ports"), joinPorts(ownedPorts), plural(len(ownedPorts), "is", "are"), strings.Join(owned, "; "))
		cause = "The client picked an ephemeral source port that is an allocated NodePort. The SYN/ACK coming back " +
			"to that port is matched against the node's NodePort (IPVS virtual service or kube-proxy rule) instead of " +
			"the client's socket, and the node answers it with an RST."
		if haveLPR {
			cause += fmt.Sprintf(" net.ipv4.ip_local_port_range is %s, which includes the NodePort range %s (%s).", eph, np.Range, np.Source())
			f.Supports = append(f.Supports, fmt.Sprintf("%s: net.ipv4.ip_local_port_range = %s, the ephemeral ports the client picks from",
				lpr.Pos, lpr.Value))
		}
		fix = reserveFix(np.Range, local.Reserved.Value)
	case natted > 0:
		values["untranslated"] = natted
		title = fmt.Sprintf("%s resets the server's SYN/ACK (%d %s): the reply came back untranslated",
			client, len(attempts), plural(len(attempts), "attempt", "attempts"))
		b := natPair.Before
		f.Supports = append(f.Supports, fmt.Sprintf("%s and %s: the same SYN (sequence number %d) to %s before DNAT and to %s after, "+
			"and no SYN/ACK from %s", b.SegPos(b.SYN[0]), natPair.After.SegPos(natPair.After.SYN[0]), b.ISN, b.Server,
			natPair.After.Server, b.Server))
		cause = fmt.Sprintf("The capture shows %d of these connections sent to %s and translated to %s; the SYN/ACK reached "+
			"the client with the endpoint's address, so the client has no connection for it and resets it "+
			"(see nat-reply-untranslated). Why the reply was not translated back is not shown by this rule.",
			natted, b.Server, natPair.After.Server)
		f.Alternatives = []string{natAlt, fwAlt, ctAlt}
		f.Decide = collected("sysctl-net", "net.bridge.bridge-nf-call-iptables")
		fix = "Make the replies of translated connections go back through the node's conntrack: " +
			"`sysctl -w net.bridge.bridge-nf-call-iptables=1` with br_netfilter loaded, hairpin mode on the bridge ports " +
			"for Pods reaching themselves, symmetric routes around the node that does the NAT."
	default:
		title = fmt.Sprintf("%s resets the server's SYN/ACK (%d %s)", client, len(attempts), plural(len(attempts), "attempt", "attempts"))
		cause = "The capture shows the client's host rejecting the SYN/ACK; the bundle does not show why."
		f.Alternatives = []string{fwAlt, ctAlt, natAlt}
		if len(outside) < len(notOwned) {
			// Some ports are in the NodePort range: a collision stays likely.
			f.Alternatives = []string{nodePortAlt, fwAlt, natAlt, ctAlt}
		}
		f.Decide = collected("iptables-save", "on the client's node: the rule that rejects")
		if len(outside) < len(notOwned) {
			f.Decide = collected("ipvsadm", "on the client's node: the virtual services of its ports")
		}
		fix = "Find what owns the client's source port on the client node (`ipvsadm -Ln | grep :PORT`, `ss -lntp sport = :PORT`, " +
			"`iptables-save | grep PORT`); if it is a NodePort, reserve the NodePort range with net.ipv4.ip_local_reserved_ports."
	}
	if haveLPR && inEph > 0 {
		ev = append(ev, analyzer.Evidence{Pos: lpr.Pos, Note: "net.ipv4.ip_local_port_range = " + lpr.Value})
	}
	ev = append(ev, ownerEv...)
	if len(ownedPorts) > 0 {
		ev = append(ev, np.Evidence()...)
	}
	f.Title, f.Summary, f.Cause, f.Fix = title, summary, cause, fix
	f.Facts, f.Evidence = values, dedupEvidence(ev)
	f.Subject = subject("node", node, "client", client.String(), "address", server.String())
	return f
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
