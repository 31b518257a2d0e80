package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/model"
)

// ServiceRuleShadowed reports rules outside kube-proxy's chains that catch
// a Service's traffic before kube-proxy's rules do.
var ServiceRuleShadowed = &analyzer.Rule{
	Name:        "service-rule-shadowed",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindNetfilter},
	Uses:        []model.Kind{model.KindKube, model.KindCapture},
	Requires:    []analyzer.FactKey{facts.ShadowedServices, facts.AddrRoles},
	SubjectKeys: append(slices.Clone(servicePortSubjectKeys), "hook", "chain"),
	ObjectKinds: []string{"Service"},
	Run:         runServiceRuleShadowed,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(50)},
	Proof: "the node's ruleset shows a rule outside kube-proxy's chains that catches the Service address first (the " +
		"walk of the first packet through nat PREROUTING or OUTPUT, raw, or the nftables hooks), and a second source " +
		"shows the address is a Service's (the Service object) or the connections pinned by the rule (a capture)",
	Unproven: "with the ruleset alone the rule and what it does are shown, but not that the address still belongs to a " +
		"Service: a warning (likely), with kubectl get services -A -o wide to decide",
	Doc: `a rule outside kube-proxy's chains catches a Service first

kube-proxy catches a Service's ClusterIP, external and load-balancer IPs and
NodePorts in its own chains (KUBE-SERVICES, reached from nat PREROUTING for
traffic from pods and elsewhere and from nat OUTPUT for the node's own; the
kube-proxy table in nftables mode) and spreads new connections over the
endpoints. A rule placed before that jump by hand or by another tool (a DNAT
left over from a migration, a pin to one apiserver, a REDIRECT to a local
proxy, a DROP, a raw-table NOTRACK that keeps the connection away from NAT,
an nftables table of another tool whose nat chain has a lower priority)
takes the connections first: they all go to one backend, or nowhere, and
kube-proxy's rules look correct. netmortem walks the first packet to each
frontend of kube-proxy's chains through each node's ruleset, once as pod
traffic and once as the node's own, and reports the rules outside
kube-proxy's chains that end the walk before kube-proxy's do.

Evidence: the node's iptables-save (nat and raw tables) or nft list ruleset,
the Service object that owns the address, and a capture of the connections
to the Service's endpoints: a client whose connections all go to the rule's
target, where kube-proxy's rules would spread them, is pinned by it.

Severity: error when the ruleset and a second source (the Service, or the
capture) show it; a warning from the ruleset alone.

Fix: delete the rule (iptables -t nat -D ... with the rule as iptables-save
prints it, or nft delete rule ... handle N after nft -a list ruleset) and
stop whatever writes it; when a pin is wanted, use the Service's own means
(sessionAffinity, internalTrafficPolicy) instead.`,
}

// shadowPinMin is how many connections a client must make, all to the
// rule's target, to count as pinned by it.
const shadowPinMin = 3

func runServiceRuleShadowed(p *analyzer.Pass) error {
	byRule := map[model.Pos][]facts.Shadow{}
	var order []model.Pos
	for _, sh := range facts.ShadowedServices.Of(p) {
		k := sh.Rule.Pos
		if _, ok := byRule[k]; !ok {
			order = append(order, k)
		}
		byRule[k] = append(byRule[k], sh)
	}
	for _, k := range order {
		sh := &shadowed{shs: byRule[k]}
		f := judgeShadowed(p, sh)
		f.Title, f.Summary, f.Cause, f.Fix = shadowWords(sh)
		p.Report(f)
	}
	return nil
}

// pinning is what a capture shows of the connections to a Service's
// backends: clients whose connections all went to the rule's target, and
// clients that reached others.
type pinning struct {
	pinned, spread []string
	ev             []analyzer.Evidence
}

func capturePinning(s *model.Snapshot, target netip.AddrPort, backends []dataplane.Backend) pinning {
	var pn pinning
	if !target.IsValid() {
		return pn
	}
	servers := map[netip.AddrPort]bool{target: true}
	for _, b := range backends {
		if b.Addr.IsValid() {
			servers[b.Addr] = true
		}
	}
	if len(servers) < 2 {
		return pn
	}
	type tally struct {
		toTarget, toOther int
		first             []*model.Attempt
		counted           []model.Pos // the capture files that counted some, in summary mode
		inexact           bool        // counted among other clients': the counts are lower bounds
	}
	by := map[netip.Addr]*tally{}
	var clients []netip.Addr
	get := func(c netip.Addr) *tally {
		t := by[c]
		if t == nil {
			t = &tally{}
			by[c] = t
			clients = append(clients, c)
		}
		return t
	}
	seen := map[string]bool{}
	toTarget := 0 // every connection to the target, kept or counted
	for i := range s.Attempts {
		a := &s.Attempts[i]
		k := a.Client.String() + ">" + a.Server.String()
		if !servers[a.Server] || seen[k] { // the same connection seen on two nodes
			continue
		}
		seen[k] = true
		t := get(a.Client.Addr())
		if a.Server == target {
			toTarget++
			t.toTarget++
			if len(t.first) < 2 && len(a.SYN) > 0 {
				t.first = append(t.first, a)
			}
		} else {
			t.toOther++
		}
	}
	// Attempts counted, not kept (summary mode): a count is a client's
	// own only when one client made them all.
	for _, st := range s.EndpointStats {
		if !servers[st.Server] || st.Attempts == 0 {
			continue
		}
		if st.Server == target {
			toTarget += st.Attempts
		}
		for _, c := range st.ClientAddrs {
			n := 1
			t := get(c)
			if st.Clients == 1 {
				n = st.Attempts
			} else {
				t.inexact = true
			}
			if st.Server == target {
				t.toTarget += n
				t.counted = append(t.counted, model.Pos{File: st.File})
			} else {
				t.toOther += n
			}
		}
	}
	slices.SortFunc(clients, func(a, b netip.Addr) int { return a.Compare(b) })
	for _, c := range clients {
		t := by[c]
		switch {
		case t.toOther == 0 && t.toTarget > 0 && toTarget >= shadowPinMin:
			if t.inexact {
				pn.pinned = append(pn.pinned, fmt.Sprintf("%s (every connection to the endpoints, to %s)", c, target))
			} else {
				pn.pinned = append(pn.pinned, fmt.Sprintf("%s (%d connections, all to %s)", c, t.toTarget, target))
			}
			for _, a := range t.first {
				pn.ev = append(pn.ev, analyzer.Evidence{Pos: a.SegPos(a.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s, pinned", a.Client, a.Server)})
			}
			for _, pos := range t.counted {
				pn.ev = append(pn.ev, analyzer.Evidence{Pos: pos, Note: fmt.Sprintf("connections from %s to %s counted", c, target)})
			}
		case t.toOther > 0 && t.inexact:
			pn.spread = append(pn.spread, fmt.Sprintf("%s (connections to other endpoints than %s)", c, target))
		case t.toOther > 0:
			pn.spread = append(pn.spread, fmt.Sprintf("%s (%d of %d connections to other endpoints)", c, t.toOther, t.toOther+t.toTarget))
		}
	}
	return pn
}

// shadowed is a rule outside kube-proxy's chains that catches a Service
// port's traffic (one Shadow per frontend it catches), and its judgement
// (judgeShadowed): whether the Service and a capture confirm it.
// shadowWords words it.
type shadowed struct {
	shs []facts.Shadow

	svc, front, traffic, share string   // the Service port, its frontends caught, the traffic, its share
	pinned                     []string // the clients a capture shows pinned to the rule's target
}

// judgeShadowed judges sh. It fills in sh and returns the finding without
// its words.
func judgeShadowed(p *analyzer.Pass, sh *shadowed) analyzer.Finding {
	first := sh.shs[0]
	sp := first.Port
	sh.svc = sp.Service
	if sh.svc == "" {
		sh.svc = sp.Chain
	}
	sh.traffic = "connections from pods and from elsewhere"
	if first.NodeTraffic {
		sh.traffic = "the node's own connections"
	}
	sh.share = dataplane.Percent(first.Share)
	var fronts []string
	for _, x := range sh.shs {
		if !slices.Contains(fronts, x.Frontend) {
			fronts = append(fronts, x.Frontend)
		}
	}
	sh.front = strings.Join(fronts, ", ")
	svc, front, traffic, share := sh.svc, sh.front, sh.traffic, sh.share
	values := map[string]any{
		"service":   svc,
		"frontends": fronts,
		"hook":      first.Hook,
		"rule":      strings.TrimSpace(first.Rule.Raw),
		"action":    first.Action,
		"share":     share,
		"traffic":   map[bool]string{true: "node", false: "pods"}[first.NodeTraffic],
	}
	if sp.Node != "" {
		values["node"] = sp.Node
	}
	var backends []string
	for _, b := range sp.Backends {
		backends = append(backends, b.Describe())
	}
	values["kube_proxy_backends"] = backends
	ev := []analyzer.Evidence{
		{Pos: first.Rule.Pos, Note: fmt.Sprintf("%s: %s, before kube-proxy's chains", first.Hook, first.Action)},
		{Pos: sp.Pos, Note: fmt.Sprintf("kube-proxy's rule for %s (%s)", svc, front)},
	}
	supports := []string{fmt.Sprintf("%s (%s, chain %s) catches %s of %s to %s: %s, before kube-proxy's chains, which "+
		"would spread them over %d %s (%s)", first.Rule.Pos, first.Hook, first.Chain, share, traffic, front, first.Action,
		len(sp.Backends), plural(len(sp.Backends), "endpoint", "endpoints"), sp.Chain)}
	var contradicts []string
	// The Service that owns the address.
	roles := facts.AddrRoles.Of(p)
	if first.Dst.IsValid() {
		if rs := roles.Of(first.Dst.Addr(), first.Dst.Port()); rs.Live() && rs.NamePort() {
			supports = append(supports, rs.Words())
			ev = append(ev, rs.Evidence()...)
		} else {
			contradicts = append(contradicts, fmt.Sprintf("no Service object in the bundle has %s: that it is a "+
				"current Service's address rests on kube-proxy's own rules", first.Dst))
		}
	}
	if port, ok := strings.CutPrefix(first.Frontend, "NodePort "); ok {
		proto := sp.Proto
		if proto == "" {
			proto = "tcp"
		}
		var owner *model.NodePort
		for _, np := range p.Snap.Kube.NodePorts() {
			if fmt.Sprint(np.Port) == port && strings.EqualFold(np.Protocol, proto) {
				owner = &np
				break
			}
		}
		if owner != nil {
			supports = append(supports, fmt.Sprintf("NodePort %s/%s of Service %s", port, owner.Protocol,
				objectName(owner.Namespace, owner.Service)))
			ev = append(ev, analyzer.Evidence{Pos: owner.Pos, Note: fmt.Sprintf("NodePort %s of Service %s", port,
				objectName(owner.Namespace, owner.Service))})
		} else {
			contradicts = append(contradicts, fmt.Sprintf("no Service object in the bundle has NodePort %s: that it is a "+
				"current Service's rests on kube-proxy's own rules", port))
		}
	}
	// The connections the rule pins, in a capture.
	if first.Target.IsValid() {
		pn := capturePinning(p.Snap, first.Target, sp.Backends)
		if len(pn.pinned) > 0 {
			supports = append(supports, "the capture shows "+strings.Join(pn.pinned, "; ")+", where kube-proxy's rules "+
				"would spread them")
			ev = append(ev, pn.ev...)
			sh.pinned = clientsOf(pn.pinned)
			values["pinned_clients"] = sh.pinned
		}
		if len(pn.spread) > 0 {
			values["spread_clients"] = clientsOf(pn.spread)
			contradicts = append(contradicts, "clients whose connections reach other endpoints: "+strings.Join(pn.spread, "; ")+
				" (traffic the rule does not catch, or the rule was written after the capture)")
		}
		if len(p.Snap.Attempts) == 0 && len(p.Snap.EndpointStats) == 0 {
			contradicts = append(contradicts, "no capture of the connections to the Service's endpoints: the pinning is shown by "+
				"the rules alone")
		}
	}
	certainty := analyzer.Likely
	severity := analyzer.Warning
	var alternatives []string
	decide := ""
	if p.Joins(ev) {
		certainty, severity = analyzer.Proven, analyzer.Error
	} else {
		alternatives = []string{
			"the address no longer belongs to a Service (kube-proxy's rules for it are leftovers) and the rule serves it on purpose",
		}
		decide = "kubectl get services -A -o wide"
	}
	subj := servicePortSubject(sp)
	subj["hook"] = first.Hook // the rule's table and chain: its line moves with rules added above it
	subj["chain"] = first.Chain
	return analyzer.Finding{
		Subject:      subj,
		Severity:     severity,
		Certainty:    certainty,
		Facts:        values,
		Supports:     supports,
		Contradicts:  contradicts,
		Alternatives: alternatives,
		Decide:       decide,
		Evidence:     dedupEvidence(ev),
	}
}

// shadowWords words the finding of sh, as judgeShadowed judged it.
func shadowWords(sh *shadowed) (title, summary, cause, fix string) {
	first := sh.shs[0]
	sp, svc, front, traffic := first.Port, sh.svc, sh.front, sh.traffic
	pinned := ""
	if len(sh.pinned) > 0 {
		pinned = fmt.Sprintf(" The capture shows the connections of %s pinned to %s.", listSome(sh.pinned, false), first.Target)
	}
	summary = fmt.Sprintf("On %s the walk of a new connection to %s (%s) as %s meets %s in %s (%s) before kube-proxy's "+
		"chains: %s of them get %q instead of kube-proxy's %d %s.%s", nodeName(sp.Node), svc, front, traffic,
		first.Rule.Pos, first.Hook, strings.TrimSpace(first.Rule.Raw), sh.share, first.Action, len(sp.Backends),
		plural(len(sp.Backends), "endpoint", "endpoints"), pinned)
	title = fmt.Sprintf("%s (%s): %s caught by a rule outside kube-proxy's chains (%s)", svc, front, traffic, first.Action)
	cause = fmt.Sprintf("A rule in %s outside kube-proxy's chains (%s) catches %s to %s before kube-proxy's jump, so "+
		"kube-proxy's load balancing never applies to them.", first.Hook, first.Rule.Pos, traffic, front)
	return title, summary, cause, shadowFix(first)
}

// clientsOf takes the addresses of "addr (...)" descriptions.
func clientsOf(descs []string) []string {
	out := make([]string, len(descs))
	for i, d := range descs {
		out[i], _, _ = strings.Cut(d, " ")
	}
	return out
}

// shadowFix names the command that deletes the rule.
func shadowFix(sh facts.Shadow) string {
	raw := strings.TrimSpace(sh.Rule.Raw)
	if rest, ok := strings.CutPrefix(raw, "-A "); ok {
		return fmt.Sprintf("Delete the rule on the node (`iptables -t %s -D %s`) and stop whatever writes it (a script, "+
			"a leftover unit, another tool); kube-proxy's chains then take the connections. If a pin is wanted, use the "+
			"Service's sessionAffinity or internalTrafficPolicy.", sh.Table, rest)
	}
	family := map[string]string{"ipv4": "ip", "ipv6": "ip6"}[sh.Family]
	if family == "" {
		family = sh.Family
	}
	t := strings.TrimSpace(family + " " + sh.Table)
	return fmt.Sprintf("Delete the rule on the node (`nft -a list chain %s %s` gives its handle, then `nft delete rule "+
		"%s %s handle N`; it reads %q) and stop whatever writes it; kube-proxy's chains then take the connections.",
		t, sh.Chain, t, sh.Chain, raw)
}
