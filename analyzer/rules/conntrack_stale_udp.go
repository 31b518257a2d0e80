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
	Needs:       []model.Kind{model.KindConntrack},
	Uses:        []model.Kind{model.KindKube, model.KindNetfilter, model.KindIPVS},
	Requires:    []analyzer.FactKey{facts.ServiceEndpoints, facts.Dataplanes},
	SubjectKeys: []string{"node", "object", "service_port", "backend", "proto"},
	ObjectKinds: []string{"Service"},
	Run:         runConntrackStaleUDP,
	Explains:    []*analyzer.Rule{IPTablesBackendSplit},
	Symptoms:    []analyzer.SymptomRef{DNSTimeouts.At(10)},
	Decide: "# on the client's node: entries to an address that is no longer a CoreDNS endpoint\n" +
		"conntrack -L -p udp --dport 53\nkubectl get endpointslices -n kube-system",
	Plot: analyzer.Plot{
		Parts:               []analyzer.PlotPart{analyzer.PlotLogErrors, analyzer.PlotStaleMark},
		NodeKubeProxyErrors: true,
	},
	Proof: "UDP conntrack entries (conntrack -L) of a Service's ClusterIP whose reply comes from an address that the " +
		"Service's Endpoints or EndpointSlices no longer list",
	Unproven: "entries of a Service whose endpoints the bundle does not give are not judged; when the node's rules " +
		"still send new flows to that address, the rules are stale (stale-dnat), not only the entries. Without any " +
		"Kubernetes object, an [UNREPLIED] DNS entry DNATed to a backend, or one left untranslated to an address " +
		"that another entry DNATs, is reported as a likely stale entry, with the endpoints' listing to decide",
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

Without the Kubernetes objects (a ticket's one conntrack -L), the entries
alone point at it: a DNS flow ([UNREPLIED], port 53) DNATed to a backend
that never answered it, or a DNS flow to an address that other entries
DNAT to a backend but this one does not (made while the Service had no
endpoints, and kept alive by the client's reused socket). That is a
warning of likely cause; the Service's endpoints decide it.

Severity: error (the entries and the endpoints disagree); warning from the
entries alone.

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
	if !s.Has(model.KindKube) {
		reportThinStaleUDP(p)
		return nil
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
		Title: fmt.Sprintf("%s: %d UDP conntrack %s still %s to %s, no endpoint any more", g.service, len(g.entries),
			plural(len(g.entries), "entry", "entries"), plural(len(g.entries), "goes", "go"), g.backend),
		Summary: fmt.Sprintf("On %s, %d UDP conntrack %s of %s (%s) from %s %s from %s, which the Service's endpoints "+
			"(%s) no longer list. Every datagram of those flows goes on to that address until the %s expire (each "+
			"datagram renews them; the longest has %d s left): the clients' lookups time out while the Service and its "+
			"rules are right.", where, len(g.entries), plural(len(g.entries), "entry", "entries"), g.service, g.front,
			listSome(g.clients, false), plural(len(g.entries), "replies", "reply"), g.backend, orNone(addrs), plural(len(g.entries), "entry", "entries"), longest),
		Cause: "The endpoint changed and the UDP conntrack entries DNATed to the old one were not deleted (kube-proxy " +
			"deletes them with conntrack -D when an endpoint goes): they keep the flows on the gone address.",
		Fix: fmt.Sprintf("On the node: `conntrack -D -p udp --orig-dst %s --reply-src %s`. Then find why kube-proxy did "+
			"not delete them: its log (\"Failed to delete stale service connections\"), and the conntrack binary it "+
			"needs.", g.front.Addr(), g.backend),
		Facts:    values,
		Evidence: ev,
	}, true
}

// thinStaleUDP gathers, on one node, the unanswered DNS entries of one
// destination and backend that the entries alone show as stale: DNATed to
// a backend that answered none of them (gone), or left untranslated to an
// address that other entries DNAT (made while there was no endpoint).
type thinStaleUDP struct {
	node         string
	front        netip.AddrPort
	frontName    string // front as printed: its placeholder when a paste hid the address
	backend      netip.Addr
	untranslated bool
	entries      []*model.ConntrackEntry
	clients      []string
	others       []*model.ConntrackEntry // entries DNATing front elsewhere
}

// reportThinStaleUDP judges the UDP entries of a bundle without Kubernetes
// objects: the endpoints are not known, so the entries can point at a gone
// endpoint (likely) but not prove it.
func reportThinStaleUDP(p *analyzer.Pass) {
	s := p.Snap
	type front struct {
		node string
		dst  netip.AddrPort
	}
	type flow struct {
		node       string
		orig       model.Tuple
		translated bool
	}
	dnat := map[front][]*model.ConntrackEntry{}
	answers := map[string]bool{} // node|backend that replied to a DNATed flow
	flows := map[flow]bool{}
	for i := range s.Conntrack {
		e := &s.Conntrack[i]
		if e.Proto != "udp" {
			continue
		}
		flows[flow{e.Node, e.Orig, e.DNAT()}] = true
		if e.DNAT() {
			dnat[front{e.Node, e.Orig.Dst}] = append(dnat[front{e.Node, e.Orig.Dst}], e)
			if !e.Unreplied {
				answers[e.Node+"|"+e.Reply.Src.Addr().String()] = true
			}
		}
	}
	groups := map[string]*thinStaleUDP{}
	var order []string
	for i := range s.Conntrack {
		e := &s.Conntrack[i]
		if e.Proto != "udp" || !e.Unreplied || e.Orig.Dst.Port() != 53 {
			continue
		}
		backend, untranslated := e.Reply.Src.Addr(), !e.DNAT()
		switch {
		case untranslated && len(dnat[front{e.Node, e.Orig.Dst}]) == 0:
			continue // a DNS server's own address, not a Service's
		case !untranslated && answers[e.Node+"|"+backend.String()]:
			continue // the backend answers other flows: it is there
		case !untranslated && flows[flow{e.Node, e.Orig, false}]:
			continue // the flow is left untranslated in another dump: that entry tells it
		}
		k := fmt.Sprint(e.Node, "|", e.Orig.Dst, "|", backend, "|", untranslated)
		g := groups[k]
		if g == nil {
			g = &thinStaleUDP{node: e.Node, front: e.Orig.Dst, frontName: ctOrigDst(e), backend: backend, untranslated: untranslated}
			for _, o := range dnat[front{e.Node, e.Orig.Dst}] {
				if o.Reply.Src.Addr() != backend {
					g.others = append(g.others, o)
				}
			}
			groups[k] = g
			order = append(order, k)
		}
		g.entries = append(g.entries, e)
		if c := e.Orig.Src.Addr().String(); !slices.Contains(g.clients, c) {
			g.clients = append(g.clients, c)
		}
	}
	for _, k := range order {
		p.Report(thinStaleUDPFinding(groups[k]))
	}
}

func thinStaleUDPFinding(g *thinStaleUDP) analyzer.Finding {
	n := len(g.entries)
	entries := plural(n, "entry", "entries")
	var ev []analyzer.Evidence
	for i, e := range g.entries {
		if i == maxGroupEvidence {
			break
		}
		ev = append(ev, analyzer.Evidence{Pos: e.Pos, Note: fmt.Sprintf("udp %s -> %s, reply from %s, unreplied",
			e.Orig.Src, ctOrigDst(e), e.Reply.Src)})
	}
	where := "the node"
	if g.node != "" {
		where = g.node
	}
	values := map[string]any{"destination": g.frontName, "entries": n, "clients": g.clients}
	if g.node != "" {
		values["node"] = g.node
	}
	f := analyzer.Finding{
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     values,
		Subject:   subject("node", g.node, "backend", g.backend.String(), "proto", "udp"),
		Decide: fmt.Sprintf("# is %s an endpoint of the Service at %s?\nkubectl get endpointslices -A -o wide | grep -e %s -e %s",
			g.backend, g.front.Addr(), g.front.Addr(), g.backend),
	}
	if !g.front.Addr().IsValid() {
		f.Decide = fmt.Sprintf("# is %s still an endpoint of the Service the paste calls %s?\n"+
			"kubectl get endpointslices -A -o wide | grep -e %s", g.backend, g.frontName, g.backend)
	}
	var others []string
	for i, o := range g.others {
		if i < maxGroupEvidence {
			ev = append(ev, analyzer.Evidence{Pos: o.Pos, Note: fmt.Sprintf("udp %s -> %s, reply from %s",
				o.Orig.Src, ctOrigDst(o), o.Reply.Src)})
		}
		if b := o.Reply.Src.Addr().String(); !slices.Contains(others, b) {
			others = append(others, b)
		}
	}
	f.Evidence = ev
	if g.untranslated {
		values["stale_backend"] = "none (untranslated)"
		f.Decide = fmt.Sprintf("# the endpoints of the Service at %s now, and the entry still untranslated\n"+
			"kubectl get endpointslices -A -o wide\nconntrack -L -p udp -d %s --dport %d", g.front.Addr(), g.front.Addr(), g.front.Port())
		f.Title = fmt.Sprintf("%s: %d DNS conntrack %s left untranslated, unanswered", g.front, n, entries)
		f.Summary = fmt.Sprintf("On %s, %d UDP conntrack %s from %s to %s %s not DNATed and got no reply, while "+
			"other entries DNAT the same destination to %s: %s is a Service's address, and these flows were "+
			"created while it had no endpoint. Each datagram of a reused socket renews its entry, so the client's "+
			"lookups keep going to the bare Service address after the endpoints are back.", where, n, entries,
			listSome(g.clients, false), g.front, plural(n, "is", "are"), orNone(others), g.front.Addr())
		f.Cause = fmt.Sprintf("The flows to %s started while the Service had no endpoint, so kube-proxy had "+
			"no DNAT for them; when the endpoints came back, the untranslated UDP entries were not deleted and the "+
			"client's traffic, renewing them, never reaches a backend.", g.front)
		f.Supports = append(f.Supports, fmt.Sprintf("%s: [UNREPLIED] %s -> %s, reply from %s itself: no DNAT",
			g.entries[0].Pos, g.entries[0].Orig.Src, g.front, g.front.Addr()))
		if len(g.others) > 0 {
			f.Supports = append(f.Supports, fmt.Sprintf("%s: the same destination DNATed to %s", g.others[0].Pos,
				g.others[0].Reply.Src.Addr()))
		}
		f.Alternatives = []string{"the Service still has no endpoint (the entry is current, not stale)"}
		f.Fix = fmt.Sprintf("On the node: `conntrack -D -p udp --orig-dst %s --dport %d`, then upgrade kube-proxy "+
			"(it must flush UDP entries of a Service whose endpoints go from none to some).", g.front.Addr(), g.front.Port())
	} else {
		values["stale_backend"] = g.backend.String()
		f.Title = fmt.Sprintf("%s: %d DNS conntrack %s %s to %s, which never answered", g.frontName, n, entries,
			plural(n, "goes", "go"), g.backend)
		f.Summary = fmt.Sprintf("On %s, %d UDP conntrack %s from %s to %s %s DNATed to %s and got no reply. A "+
			"DNS backend that does not answer a query the node keeps sending it is most likely gone (a CoreDNS Pod "+
			"deleted or its node lost) while the entries, renewed by each datagram of a reused socket, keep the "+
			"flows on its address.", where, n, entries, listSome(g.clients, false), g.frontName, plural(n, "is", "are"), g.backend)
		f.Cause = fmt.Sprintf("The UDP conntrack %s DNATing %s to %s %s not deleted when that endpoint went "+
			"(kube-proxy deletes them with conntrack -D): they keep the flows on the gone address.", entries, g.frontName,
			g.backend, plural(n, "was", "were"))
		f.Supports = append(f.Supports, fmt.Sprintf("%s: [UNREPLIED] %s -> %s, DNATed to %s", g.entries[0].Pos,
			g.entries[0].Orig.Src, g.frontName, g.backend))
		if len(g.others) > 0 {
			f.Supports = append(f.Supports, fmt.Sprintf("%s: other flows to %s go to %s", g.others[0].Pos, g.frontName,
				orNone(others)))
		}
		f.Contradicts = append(f.Contradicts, "the Service's endpoints are not in the bundle: that "+g.backend.String()+
			" is no longer one is not shown")
		f.Alternatives = []string{g.backend.String() + " is still an endpoint and does not answer (overloaded, a " +
			"NetworkPolicy drops the queries or the replies)"}
		f.Fix = fmt.Sprintf("On the node: `conntrack -D -p udp --reply-src %s --reply-port-src 53`. Then find why kube-proxy "+
			"did not delete them: its log (\"Failed to delete stale service connections\"), the conntrack binary it "+
			"needs.", g.backend)
	}
	return f
}

// ctOrigDst prints an entry's original destination: its placeholder and
// port when a paste hid the address (dst=<clusterIp>).
func ctOrigDst(e *model.ConntrackEntry) string {
	if e.HiddenDst != "" && !e.Orig.Dst.Addr().IsValid() {
		return fmt.Sprintf("%s:%d", e.HiddenDst, e.Orig.Dst.Port())
	}
	return e.Orig.Dst.String()
}
