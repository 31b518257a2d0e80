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
	Name:     "synack-reset",
	Severity: analyzer.Error,
	Needs:    []model.Kind{model.KindCapture},
	Uses:     []model.Kind{model.KindIPVS, model.KindKube, model.KindSysctl, model.KindComponents},
	Requires: []analyzer.FactKey{facts.NodePortRange, facts.PortOwners, facts.LocalPorts},
	Run:      runSynAckReset,
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

Severity: error when the source port is shown to be owned by IPVS or a
NodePort; warning from the capture alone (the cause can also be a firewall or
a conntrack problem on the client).

Fix: reserve the NodePort range (net.ipv4.ip_local_reserved_ports) or move
ip_local_port_range out of it.`,
}

func runSynAckReset(p *analyzer.Pass) error {
	s := p.Snap
	type group struct {
		node     string
		client   netip.Addr
		attempts []*model.Attempt
	}
	var groups []*group
	byKey := map[string]*group{}
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.Outcome != model.OutcomeSynAckClientRST {
			continue
		}
		key := a.Node + "|" + a.Client.Addr().String()
		g := byKey[key]
		if g == nil {
			g = &group{node: a.Node, client: a.Client.Addr()}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.attempts = append(g.attempts, a)
	}
	for _, g := range groups {
		p.Report(synAckResetFinding(p, g.node, g.client, g.attempts))
	}
	return nil
}

// maxAttemptEvidence bounds how many attempts a finding cites frame by frame.
const maxAttemptEvidence = 10

func synAckResetFinding(p *analyzer.Pass, node string, client netip.Addr, attempts []*model.Attempt) analyzer.Finding {
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
	sources := []model.Kind{model.KindCapture}
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
					sources = append(sources, o.Source())
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
	sev := analyzer.Warning
	inEph := 0
	for _, port := range ports {
		if haveLPR && eph.Contains(port) {
			inEph++
		}
	}
	if haveLPR {
		values["ip_local_port_range"] = eph.String()
		sources = append(sources, model.KindSysctl)
	}
	if len(ownedPorts) > 0 {
		sev = analyzer.Error
		values["owned_ports"] = ownedPorts
		values["owners"] = owned
		if len(services) > 0 {
			values["nodeport_services"] = services
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
		}
		fix = reserveFix(np.Range, local.Reserved.Value)
	} else {
		title = fmt.Sprintf("%s resets the server's SYN/ACK (%d %s)", client, len(attempts), plural(len(attempts), "attempt", "attempts"))
		cause = "Something on the client's host rejects the SYN/ACK. With Kubernetes this is most often a source port " +
			"that is also a NodePort owned by IPVS; it can also be a firewall rule, a conntrack entry in the wrong state, " +
			"or a socket closed before the reply arrived."
		if s.Has(model.KindIPVS) || s.Has(model.KindKube) {
			cause += " The bundle's IPVS table and Services do not list the client's source ports, so that cause is not shown here."
		} else {
			cause += " Add the node's `ipvsadm -Ln` output and the Services (kubectl get svc -A -o json) to check for a NodePort collision."
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
	return analyzer.Finding{
		Severity: sev,
		Title:    title,
		Summary:  summary,
		Cause:    cause,
		Fix:      fix,
		Facts:    values,
		Sources:  sources,
		Evidence: dedupEvidence(ev),
	}
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
