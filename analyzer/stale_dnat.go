package analyzer

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/model"
)

// StaleDNAT compares each Service port's dataplane backends with the
// Service's endpoints.
var StaleDNAT = &Rule{
	Name:     "stale-dnat",
	Severity: Error,
	Needs:    []model.Kind{model.KindNetfilter, model.KindKube},
	Uses:     []model.Kind{model.KindCapture, model.KindLogs, model.KindProbes},
	Run:      runStaleDNAT,
	Doc: `a Service's NAT rules point at endpoints that are gone

kube-proxy programs each node's NAT rules from the Service's endpoints. When
it stops syncing (it cannot reach the apiserver, it is stuck or crashed), the
rules keep the endpoints of that moment: Pods that have since gone still get
their share of new connections, which time out, and new Pods get none.
netmortem builds, from iptables-save, iptables -L or nft list ruleset, what
the node does with each Service port (the KUBE-SVC chain, its statistic
probabilities multiplied out, each KUBE-SEP chain's DNAT target; in
nftables mode the service- chain's numgen map and each endpoint- chain's
dnat) and holds it against the Service's Endpoints or EndpointSlices.

Evidence: the node's nat table (the Service chain's jumps, the DNAT rules),
the Endpoints, and when present the connection attempts to the stale targets
in a capture (unanswered SYNs), connect loops run by hand against the
Service (nc in a loop: the share that failed) and kube-proxy's log errors.

Severity: error (the rules and the endpoints disagree).

Fix: make kube-proxy sync again (see kube-proxy-sync-errors) and restart it
on the node (kubectl -n kube-system delete pod kube-proxy-XXXX); it rewrites
the rules from the current endpoints.`,
}

func runStaleDNAT(p *Pass) error {
	s := p.Snap
	attemptsTo := map[netip.AddrPort][]*model.Attempt{}
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.Outcome.Failed() {
			attemptsTo[a.Server] = append(attemptsTo[a.Server], a)
		}
	}
	for _, sp := range dataplane.Build(s) {
		if sp.Service == "" {
			continue
		}
		eps, epPos, found := serviceEndpoints(s, sp.Namespace(), sp.ServiceName(), sp.PortName())
		if !found {
			continue
		}
		if f, ok := staleFinding(s, sp, eps, epPos, attemptsTo); ok {
			p.Report(f)
		}
	}
	return nil
}

// endpointSet is what Kubernetes says a Service port's endpoints are.
type endpointSet struct {
	addrs []string // IPs (with the port when known)
	ips   map[string]bool
	count int // addresses, with or without IPs (a `jq length` gives only the count)
}

// serviceEndpoints gathers the ready endpoints of one Service port from
// Endpoints and EndpointSlices.
func serviceEndpoints(s *model.Snapshot, ns, name, portName string) (endpointSet, model.Pos, bool) {
	set := endpointSet{ips: map[string]bool{}}
	var pos model.Pos
	found := false
	for _, ep := range s.Kube.Endpoints {
		if ep.Namespace != ns || ep.Name != name {
			continue
		}
		found = true
		pos = ep.Source.Pos
		if pos.Object == "" {
			pos.Object = model.ObjectName("Endpoints", ns, name)
		}
		for _, ss := range ep.Subsets {
			port := int32(0)
			matched := len(ss.Ports) == 0
			for _, pt := range ss.Ports {
				if pt.Name == portName || len(ss.Ports) == 1 {
					port, matched = pt.Port, true
				}
			}
			if !matched {
				continue
			}
			for _, a := range ss.Addresses {
				set.count++
				if a.IP == "" {
					continue
				}
				set.ips[a.IP] = true
				if port != 0 {
					set.addrs = append(set.addrs, netip.AddrPortFrom(mustParseAddr(a.IP), uint16(port)).String())
				} else {
					set.addrs = append(set.addrs, a.IP)
				}
			}
		}
	}
	for _, sl := range s.Kube.EndpointSlices {
		if sl.Namespace != ns || sl.Labels["kubernetes.io/service-name"] != name || found && len(set.ips) > 0 {
			continue
		}
		found = true
		pos = sl.Source.Pos
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				set.count++
				set.ips[a] = true
				set.addrs = append(set.addrs, a)
			}
		}
	}
	return set, pos, found
}

func mustParseAddr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s)
	return a
}

// backendIP returns the IP of a backend, from its DNAT target or what the
// dump showed of it.
func backendIP(b dataplane.Backend) string {
	if b.Addr.IsValid() {
		return b.Addr.Addr().String()
	}
	if ap, err := netip.ParseAddrPort(b.Address); err == nil {
		return ap.Addr().String()
	}
	if a, err := netip.ParseAddr(b.Address); err == nil {
		return a.String()
	}
	return ""
}

func staleFinding(s *model.Snapshot, sp dataplane.ServicePort, eps endpointSet, epPos model.Pos,
	attemptsTo map[netip.AddrPort][]*model.Attempt) (Finding, bool) {
	var stale []dataplane.Backend
	knownIPs := 0
	inDataplane := map[string]bool{}
	for _, b := range sp.Backends {
		ip := backendIP(b)
		if ip == "" {
			continue
		}
		knownIPs++
		inDataplane[ip] = true
		if len(eps.ips) > 0 && !eps.ips[ip] {
			stale = append(stale, b)
		}
	}
	var missing []string
	for ip := range eps.ips {
		if knownIPs > 0 && !inDataplane[ip] {
			missing = append(missing, ip)
		}
	}
	slices.Sort(missing)
	countDiffers := eps.count != len(sp.Backends)
	if len(stale) == 0 && len(missing) == 0 && !countDiffers {
		return Finding{}, false
	}
	front := strings.Join(sp.Frontends, ", ")
	if front == "" {
		front = sp.Chain
	}
	facts := map[string]any{
		"service":            sp.Service,
		"frontends":          sp.Frontends,
		"dataplane_backends": len(sp.Backends),
		"endpoints":          eps.count,
		"chain":              sp.Chain,
	}
	if sp.Node != "" {
		facts["node"] = sp.Node
	}
	ev := []Evidence{{Pos: sp.Pos, Note: fmt.Sprintf("%s: %s -> %s", sp.Service, front, sp.Chain)}}
	sources := []model.Kind{model.KindNetfilter, model.KindKube}
	var summary []string
	summary = append(summary, fmt.Sprintf("On this node %s (%s) is sent to %d %s by %s; the Service has %d %s.",
		sp.Service, front, len(sp.Backends), plural(len(sp.Backends), "backend", "backends"), sp.Chain,
		eps.count, plural(eps.count, "endpoint", "endpoints")))
	fail := 0.0
	failed := 0
	if len(stale) > 0 {
		var names []string
		for _, b := range stale {
			fail += b.Probability
			names = append(names, b.Describe())
			ev = append(ev, Evidence{Pos: b.Pos, Note: fmt.Sprintf("DNAT to %s, which no endpoint has", b.Address)})
			for _, a := range attemptsTo[b.Addr] {
				failed++
				if failed <= maxGroupEvidence && len(a.SYN) > 0 {
					ev = append(ev, Evidence{Pos: a.SegPos(a.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s: %s", a.Client, a.Server, a.Outcome)})
				}
			}
			for _, st := range s.EndpointStats { // counted, not kept, in summary mode
				if st.Server == b.Addr && st.Outcome.Failed() {
					failed += st.Attempts
				}
			}
		}
		facts["stale_targets"] = names
		facts["expected_failures"] = dataplane.Percent(fail)
		summary = append(summary, fmt.Sprintf("%d %s no endpoint of the Service: %s. About %s of new connections go there.",
			len(stale), plural(len(stale), "target is", "targets are"), strings.Join(names, ", "), dataplane.Percent(fail)))
		if failed > 0 {
			facts["failed_attempts_to_stale"] = failed
			sources = append(sources, model.KindCapture)
			summary = append(summary, fmt.Sprintf("The capture shows %d connection %s to them failing.", failed, plural(failed, "attempt", "attempts")))
		}
	}
	for _, pr := range s.Probes {
		if !slices.Contains(sp.Frontends, pr.Target.String()) {
			continue
		}
		observed := float64(pr.Failed) / float64(pr.Attempts)
		facts["observed_failures"] = dataplane.Percent(observed)
		facts["observed_tries"] = pr.Attempts
		sources = append(sources, model.KindProbes)
		ev = append(ev, Evidence{Pos: pr.Result, Note: fmt.Sprintf("%s loop: %d of %d connects to %s failed", pr.Tool, pr.Failed, pr.Attempts, pr.Target)})
		line := fmt.Sprintf("A connect loop run by hand (%s) saw %d of %d connections to %s fail (%s)", pr.Pos, pr.Failed, pr.Attempts,
			pr.Target, dataplane.Percent(observed))
		if fail > 0 {
			line += fmt.Sprintf(", against the %s the stale targets predict", dataplane.Percent(fail))
		}
		summary = append(summary, line+".")
		break
	}
	if len(missing) > 0 {
		facts["missing_endpoints"] = missing
		summary = append(summary, fmt.Sprintf("%d %s no traffic from this node: %s.", len(missing),
			plural(len(missing), "endpoint gets", "endpoints get"), strings.Join(missing, ", ")))
	}
	if len(stale) == 0 && len(missing) == 0 {
		summary = append(summary, "The endpoints' addresses are not in the bundle, but the counts differ: the rules "+
			"are not those of the current endpoints, and the targets that left take their share of connections with them.")
	}
	ev = append(ev, Evidence{Pos: epPos, Note: fmt.Sprintf("%d endpoints of %s", eps.count, sp.Service)})
	for _, le := range s.Logs {
		if isKubeProxyLog(&le) && kubeProxyListRe.MatchString(le.Message) {
			ev = append(ev, Evidence{Pos: le.Pos, Note: "kube-proxy cannot list " + kubeProxyListRe.FindStringSubmatch(le.Message)[1] + "s"})
			sources = append(sources, model.KindLogs)
			summary = append(summary, "kube-proxy's log shows it failing to list Services or endpoints: it has stopped syncing.")
			break
		}
	}
	title := fmt.Sprintf("%s: %d of %d NAT targets are stale", sp.Service, len(stale), len(sp.Backends))
	switch {
	case len(stale) > 0:
		title += fmt.Sprintf(" (~%s of connections fail)", dataplane.Percent(fail))
	case len(missing) > 0:
		title = fmt.Sprintf("%s: %d endpoints missing from the node's NAT rules", sp.Service, len(missing))
	default:
		title = fmt.Sprintf("%s: the node's NAT rules have %d targets, the Service %d endpoints", sp.Service, len(sp.Backends), eps.count)
	}
	return Finding{
		Severity: Error,
		Title:    title,
		Summary:  strings.Join(summary, " "),
		Cause: "kube-proxy on this node no longer writes the Service's current endpoints into the NAT rules: it cannot " +
			"list them from the apiserver, or it is stuck.",
		Fix: "Find why kube-proxy does not sync (its log: `kubectl -n kube-system logs kube-proxy-XXXX`), fix its access " +
			"to the apiserver, then restart it on the node so it rewrites the rules.",
		Facts:    facts,
		Sources:  sources,
		Evidence: ev,
	}, true
}
