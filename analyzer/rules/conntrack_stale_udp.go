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

// ConntrackStaleUDP finds UDP conntrack entries that still send a
// Service's traffic to a backend none of its endpoints has any more.
var ConntrackStaleUDP = &analyzer.Rule{
	Name:        "conntrack-stale-udp",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindConntrack, model.KindKube},
	Uses:        []model.Kind{model.KindNetfilter, model.KindIPVS},
	Requires:    []analyzer.FactKey{facts.ServiceEndpoints, facts.Dataplanes},
	SubjectKeys: []string{"node", "object", "service_port", "backend", "proto"},
	ObjectKinds: []string{"Service"},
	Run:         runConntrackStaleUDP,
	Explains:    []*analyzer.Rule{IPTablesBackendSplit},
	Symptoms:    []analyzer.SymptomRef{DNSTimeouts.At(10)},
	Plot: analyzer.Plot{
		Parts:               []analyzer.PlotPart{analyzer.PlotLogErrors, analyzer.PlotStaleMark},
		NodeKubeProxyErrors: true,
	},
	Proof: "UDP conntrack entries (conntrack -L) of a Service's ClusterIP whose reply comes from an address that the " +
		"Service's Endpoints or EndpointSlices no longer list",
	Unproven: "entries of a Service whose endpoints the bundle does not give are not judged; when the node's rules " +
		"still send new flows to that address, the rules are stale (stale-dnat), not only the entries",
	Doc: `udp conntrack entries still go to a gone endpoint

kube-proxy DNATs a UDP flow to a Service (DNS to kube-dns above all) once,
when its first datagram passes; the conntrack entry then carries every later
datagram of that flow (the same addresses and ports) to the same endpoint,
for as long as datagrams keep coming (30 s after the last one, 120 s once
both sides have talked). When the endpoint goes (a CoreDNS Pod deleted or
rescheduled), kube-proxy rewrites its rules and deletes the UDP entries of
the old endpoint (conntrack -D); when that deletion does not happen (the
conntrack tool missing, an old kube-proxy, a restart at the wrong moment,
another NAT that is not kube-proxy's), resolvers that keep their socket
keep sending to the address of the deleted Pod, and their lookups time out
while the Service, its endpoints and the rules look right.

Evidence: conntrack -L on the node (the UDP entries whose original
destination is a Service's ClusterIP and whose reply comes from another
address, the backend), the Service and its Endpoints or EndpointSlices, and
the node's NAT rules when present (they no longer send new flows to that
address).

Severity: error (the entries and the endpoints disagree).

Fix: delete the entries: conntrack -D -p udp --orig-dst CLUSTERIP
--reply-src OLD-POD-IP on the node; then find why kube-proxy did not (its
log: "Failed to delete stale service connections", the conntrack binary in
its image or on the node).`,
}

// staleUDP gathers the stale entries of one Service port and backend on
// one node.
type staleUDP struct {
	node, service string
	front         netip.AddrPort
	backend       netip.Addr
	entries       []*model.ConntrackEntry
	clients       []string
	svcPos, epPos model.Pos
	eps           facts.EndpointSet
}

func runConntrackStaleUDP(p *analyzer.Pass) error {
	s := p.Snap
	type svcPort struct {
		ns, name, port string
		pos            model.Pos
	}
	fronts := map[netip.AddrPort]svcPort{}
	for _, svc := range s.Kube.Services {
		ips := append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs...)
		for _, sp := range svc.Spec.Ports {
			if !strings.EqualFold(string(sp.Protocol), "UDP") {
				continue
			}
			for _, ip := range ips {
				if a, err := netip.ParseAddr(ip); err == nil {
					fronts[netip.AddrPortFrom(a, uint16(sp.Port))] = svcPort{svc.Namespace, svc.Name, sp.Name,
						objectPosOf(svc.Source.Pos, "Service", svc.Namespace, svc.Name)}
				}
			}
		}
	}
	endpoints := facts.ServiceEndpoints.Of(p)
	groups := map[string]*staleUDP{}
	var order []string
	for i := range s.Conntrack {
		e := &s.Conntrack[i]
		if e.Proto != "udp" || !e.DNAT() {
			continue
		}
		sp, ok := fronts[e.Orig.Dst]
		if !ok {
			continue
		}
		eps, epPos, found := endpoints.Of(sp.ns, sp.name, sp.port)
		if !found || (len(eps.IPs) == 0 && eps.Count > 0) {
			continue // the endpoints' addresses are not in the bundle
		}
		backend := e.Reply.Src.Addr()
		if eps.IPs[backend.String()] {
			continue
		}
		name := objectName(sp.ns, sp.name)
		if sp.port != "" {
			name += ":" + sp.port
		}
		k := e.Node + "|" + name + "|" + backend.String()
		g := groups[k]
		if g == nil {
			g = &staleUDP{node: e.Node, service: name, front: e.Orig.Dst, backend: backend, svcPos: sp.pos, epPos: epPos, eps: eps}
			groups[k] = g
			order = append(order, k)
		}
		g.entries = append(g.entries, e)
		if c := e.Orig.Src.Addr().String(); !slices.Contains(g.clients, c) {
			g.clients = append(g.clients, c)
		}
	}
	for _, k := range order {
		if f, ok := staleUDPFinding(p, groups[k]); ok {
			p.Report(f)
		}
	}
	return nil
}

// objectPosOf names the object in pos when the reader did not.
func objectPosOf(pos model.Pos, kind, ns, name string) model.Pos {
	if pos.Object == "" {
		pos.Object = model.ObjectName(kind, ns, name)
	}
	return pos
}

func staleUDPFinding(p *analyzer.Pass, g *staleUDP) (analyzer.Finding, bool) {
	var supports, contradicts []string
	ev := []analyzer.Evidence{}
	for i, e := range g.entries {
		if i == maxGroupEvidence {
			break
		}
		ev = append(ev, analyzer.Evidence{Pos: e.Pos, Note: fmt.Sprintf("udp %s -> %s, reply from %s", e.Orig.Src, e.Orig.Dst, e.Reply.Src)})
	}
	addrs := slices.Clone(g.eps.Addrs)
	slices.Sort(addrs)
	ev = append(ev, analyzer.Evidence{Pos: g.epPos, Note: "endpoints: " + orNone(addrs)})
	supports = append(supports, fmt.Sprintf("%s: %d UDP %s of %s (%s) reply from %s", g.entries[0].Pos.File, len(g.entries),
		plural(len(g.entries), "entry", "entries"), g.service, g.front, g.backend),
		fmt.Sprintf("%s: the endpoints are %s, not %s", g.epPos, orNone(addrs), g.backend))
	// What the node's rules do with new flows now.
	stillInRules := false
	for _, sp := range facts.Dataplanes.Of(p).OnNode(g.node) {
		if !slices.Contains(sp.Frontends, g.front.String()) {
			continue
		}
		var targets []string
		for _, b := range sp.Backends {
			targets = append(targets, b.Address)
			if facts.BackendIP(b) == g.backend.String() {
				stillInRules = true
			}
		}
		if stillInRules {
			break
		}
		ev = append(ev, analyzer.Evidence{Pos: sp.Pos, Note: fmt.Sprintf("new flows to %s go to %s", g.front, strings.Join(targets, ", "))})
		supports = append(supports, fmt.Sprintf("%s: the node's rules send new flows to %s: only the entries keep %s",
			sp.Pos, strings.Join(targets, ", "), g.backend))
	}
	if stillInRules {
		return analyzer.Finding{}, false // the rules are stale: stale-dnat's finding
	}
	if !p.Snap.Has(model.KindNetfilter) && !p.Snap.Has(model.KindIPVS) {
		contradicts = append(contradicts, "the node's NAT rules are not in the bundle: that new flows go to the current "+
			"endpoints is not shown")
	}
	longest := 0
	for _, e := range g.entries {
		longest = max(longest, e.Timeout)
	}
	values := map[string]any{
		"service":       g.service,
		"cluster_ip":    g.front.String(),
		"stale_backend": g.backend.String(),
		"entries":       len(g.entries),
		"clients":       g.clients,
		"endpoints":     addrs,
	}
	if longest > 0 {
		values["longest_timeout_s"] = longest
	}
	if g.node != "" {
		values["node"] = g.node
	}
	where := "the node"
	if g.node != "" {
		where = g.node
	}
	svc, port, _ := strings.Cut(g.service, ":")
	return analyzer.Finding{
		Subject: subject("node", g.node, "object", "Service "+svc, "service_port", port,
			"backend", g.backend.String(), "proto", "udp"),
		Severity:    analyzer.Error,
		Certainty:   analyzer.Proven,
		Supports:    supports,
		Contradicts: contradicts,
		Title: fmt.Sprintf("%s: %d UDP conntrack %s still go to %s, no endpoint any more", g.service, len(g.entries),
			plural(len(g.entries), "entry", "entries"), g.backend),
		Summary: fmt.Sprintf("On %s, %d UDP conntrack %s of %s (%s) from %s reply from %s, which the Service's endpoints "+
			"(%s) no longer list. Every datagram of those flows goes on to that address until the %s expire (each "+
			"datagram renews them; the longest has %d s left): the clients' lookups time out while the Service and its "+
			"rules are right.", where, len(g.entries), plural(len(g.entries), "entry", "entries"), g.service, g.front,
			listSome(g.clients, false), g.backend, orNone(addrs), plural(len(g.entries), "entry", "entries"), longest),
		Cause: "The endpoint changed and the UDP conntrack entries DNATed to the old one were not deleted (kube-proxy " +
			"deletes them with conntrack -D when an endpoint goes): they keep the flows on the gone address.",
		Fix: fmt.Sprintf("On the node: `conntrack -D -p udp --orig-dst %s --reply-src %s`. Then find why kube-proxy did "+
			"not delete them: its log (\"Failed to delete stale service connections\"), and the conntrack binary it "+
			"needs.", g.front.Addr(), g.backend),
		Facts:    values,
		Evidence: ev,
	}, true
}
