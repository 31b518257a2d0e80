package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/model"
)

// StaleDNAT compares each Service port's dataplane backends with the
// Service's endpoints.
var StaleDNAT = &analyzer.Rule{
	Name:        "stale-dnat",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindNetfilter, model.KindKube},
	Uses:        []model.Kind{model.KindCapture, model.KindLogs, model.KindProbes},
	Requires:    []analyzer.FactKey{facts.Dataplanes, facts.ServiceEndpoints, facts.Attempts, facts.KubeProxyLogs},
	SubjectKeys: servicePortSubjectKeys,
	ObjectKinds: []string{"Service"},
	Run:         runStaleDNAT,
	Proof: "the node's NAT rules send traffic to an address that the Service's Endpoints or EndpointSlices do not " +
		"list, or leave out one they list (netfilter and kube); with counts alone, kube-proxy's log failing to list " +
		"Services or endpoints",
	Unproven: "when only the counts of targets and endpoints differ and kube-proxy's log shows no list failure, the " +
		"rules and the endpoints may have been read at different moments: a warning (unknown cause), with the endpoints' " +
		"addresses (kubectl get endpoints NAME -o json) to decide",
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

Severity: error when the rules send traffic to an address no endpoint has,
or leave out one the endpoints list, or when only the counts differ and
kube-proxy's log shows it failing to list; a warning, with the cause left
open, when only the counts differ.

Fix: make kube-proxy sync again (see kube-proxy-sync-errors) and restart it
on the node (kubectl -n kube-system delete pod kube-proxy-XXXX); it rewrites
the rules from the current endpoints.`,
}

func runStaleDNAT(p *analyzer.Pass) error {
	endpoints := facts.ServiceEndpoints.Of(p)
	for _, sp := range facts.Dataplanes.Of(p) {
		if sp.Service == "" {
			continue
		}
		eps, epPos, found := endpoints.Of(sp.Namespace(), sp.ServiceName(), sp.PortName())
		if !found {
			continue
		}
		if f, ok := staleFinding(p, sp, eps, epPos); ok {
			p.Report(f)
		}
	}
	return nil
}

func staleFinding(p *analyzer.Pass, sp dataplane.ServicePort, eps facts.EndpointSet, epPos model.Pos) (analyzer.Finding, bool) {
	s := p.Snap
	var stale []dataplane.Backend
	knownIPs := 0
	inDataplane := map[string]bool{}
	for _, b := range sp.Backends {
		ip := facts.BackendIP(b)
		if ip == "" {
			continue
		}
		knownIPs++
		inDataplane[ip] = true
		if len(eps.IPs) > 0 && !eps.IPs[ip] {
			stale = append(stale, b)
		}
	}
	var missing []string
	for ip := range eps.IPs {
		if knownIPs > 0 && !inDataplane[ip] {
			missing = append(missing, ip)
		}
	}
	slices.Sort(missing)
	countDiffers := eps.Count != len(sp.Backends)
	if len(stale) == 0 && len(missing) == 0 && !countDiffers {
		return analyzer.Finding{}, false
	}
	front := strings.Join(sp.Frontends, ", ")
	if front == "" {
		front = sp.Chain
	}
	values := map[string]any{
		"service":            sp.Service,
		"frontends":          sp.Frontends,
		"dataplane_backends": len(sp.Backends),
		"endpoints":          eps.Count,
		"chain":              sp.Chain,
	}
	if sp.Node != "" {
		values["node"] = sp.Node
	}
	ev := []analyzer.Evidence{{Pos: sp.Pos, Note: fmt.Sprintf("%s: %s -> %s", sp.Service, front, sp.Chain)}}
	var supports, contradicts []string
	var summary []string
	summary = append(summary, fmt.Sprintf("On this node %s (%s) is sent to %d %s by %s; the Service has %d %s.",
		sp.Service, front, len(sp.Backends), plural(len(sp.Backends), "backend", "backends"), sp.Chain,
		eps.Count, plural(eps.Count, "endpoint", "endpoints")))
	fail := 0.0
	failed := 0
	if len(stale) > 0 {
		var names []string
		for _, b := range stale {
			fail += b.Probability
			names = append(names, b.Describe())
			ev = append(ev, analyzer.Evidence{Pos: b.Pos, Note: fmt.Sprintf("DNAT to %s, which no endpoint has", b.Address)})
			supports = append(supports, fmt.Sprintf("%s sends %s of %s's connections to %s, which the Endpoints (%s) "+
				"do not list", b.Pos, dataplane.Percent(b.Probability), sp.Service, b.Address, epPos))
			kept, counted := facts.Attempts.Of(p).FailedTo(b.Addr) // counted, not kept, in summary mode
			for _, a := range kept {
				failed++
				if failed <= maxGroupEvidence && len(a.SYN) > 0 {
					ev = append(ev, analyzer.Evidence{Pos: a.SegPos(a.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s: %s", a.Client, a.Server, a.Outcome)})
				}
			}
			failed += counted
		}
		values["stale_targets"] = names
		values["expected_failures"] = dataplane.Percent(fail)
		summary = append(summary, fmt.Sprintf("%d %s no endpoint of the Service: %s. About %s of new connections go there.",
			len(stale), plural(len(stale), "target is", "targets are"), strings.Join(names, ", "), dataplane.Percent(fail)))
		if failed > 0 {
			values["failed_attempts_to_stale"] = failed
			summary = append(summary, fmt.Sprintf("The capture shows %d connection %s to them failing.", failed, plural(failed, "attempt", "attempts")))
			supports = append(supports, fmt.Sprintf("the capture shows %d connection %s to the stale %s failing", failed,
				plural(failed, "attempt", "attempts"), plural(len(stale), "target", "targets")))
		} else if len(s.Attempts) == 0 && len(s.EndpointStats) == 0 {
			contradicts = append(contradicts, "no capture in the bundle: that connections to the stale targets fail is not shown")
		} else {
			contradicts = append(contradicts, "the capture shows no failed connection attempt to the stale targets")
		}
	}
	for _, pr := range s.Probes {
		if !slices.Contains(sp.Frontends, pr.Target.String()) {
			continue
		}
		observed := float64(pr.Failed) / float64(pr.Attempts)
		values["observed_failures"] = dataplane.Percent(observed)
		values["observed_tries"] = pr.Attempts
		ev = append(ev, analyzer.Evidence{Pos: pr.Result, Note: fmt.Sprintf("%s loop: %d of %d connects to %s failed", pr.Tool, pr.Failed, pr.Attempts, pr.Target)})
		line := fmt.Sprintf("A connect loop run by hand (%s) saw %d of %d connections to %s fail (%s)", pr.Pos, pr.Failed, pr.Attempts,
			pr.Target, dataplane.Percent(observed))
		if fail > 0 {
			line += fmt.Sprintf(", against the %s the stale targets predict", dataplane.Percent(fail))
		}
		summary = append(summary, line+".")
		supports = append(supports, fmt.Sprintf("%s: %d of %d connects to %s failed", pr.Result, pr.Failed, pr.Attempts, pr.Target))
		break
	}
	if len(missing) > 0 {
		supports = append(supports, fmt.Sprintf("the Endpoints (%s) list %s, to which the node's rules send nothing",
			epPos, strings.Join(missing, ", ")))
		values["missing_endpoints"] = missing
		summary = append(summary, fmt.Sprintf("%d %s no traffic from this node: %s.", len(missing),
			plural(len(missing), "endpoint gets", "endpoints get"), strings.Join(missing, ", ")))
	}
	if len(stale) == 0 && len(missing) == 0 {
		summary = append(summary, "The endpoints' addresses are not in the bundle, but the counts differ: the rules "+
			"are not those of the current endpoints, and the targets that left take their share of connections with them.")
	}
	ev = append(ev, analyzer.Evidence{Pos: epPos, Note: fmt.Sprintf("%d endpoints of %s", eps.Count, sp.Service)})
	listErrors := facts.KubeProxyLogs.Of(p).ListErrors
	if len(listErrors) > 0 {
		ev = append(ev, analyzer.Evidence{Pos: listErrors[0].Event.Pos, Note: "kube-proxy cannot list " + listErrors[0].Plural()})
		summary = append(summary, "kube-proxy's log shows it failing to list Services or endpoints: it has stopped syncing.")
		supports = append(supports, fmt.Sprintf("%s: kube-proxy cannot list %s", listErrors[0].Event.Pos, listErrors[0].Plural()))
	} else {
		contradicts = append(contradicts, "kube-proxy's log shows no failure to list Services or endpoints (or is not in the "+
			"bundle): the rules may be a moment behind a change of the endpoints")
	}
	certainty := analyzer.Proven
	var alternatives []string
	decide := ""
	if len(stale) == 0 && len(missing) == 0 {
		supports = append(supports, fmt.Sprintf("%s sends the Service to %d targets; the Endpoints (%s) count %d",
			sp.Pos, len(sp.Backends), epPos, eps.Count))
		if len(listErrors) == 0 {
			// Counts alone, with nothing saying kube-proxy stopped.
			certainty = analyzer.Unknown
			alternatives = []string{
				"the rules and the endpoints were read at different moments, around a change kube-proxy has since applied",
				"kube-proxy stopped syncing the Service (its log would show why)",
			}
			decide = fmt.Sprintf("kubectl -n %s get endpoints %s -o json", sp.Namespace(), sp.ServiceName())
		}
	}
	title := fmt.Sprintf("%s: %d of %d NAT targets are stale", sp.Service, len(stale), len(sp.Backends))
	switch {
	case len(stale) > 0:
		title += fmt.Sprintf(" (~%s of connections fail)", dataplane.Percent(fail))
	case len(missing) > 0:
		title = fmt.Sprintf("%s: %d endpoints missing from the node's NAT rules", sp.Service, len(missing))
	default:
		title = fmt.Sprintf("%s: the node's NAT rules have %d targets, the Service %d endpoints", sp.Service, len(sp.Backends), eps.Count)
	}
	severity := analyzer.Error
	cause := "kube-proxy on this node no longer writes the Service's current endpoints into the NAT rules: it cannot " +
		"list them from the apiserver, or it is stuck."
	if certainty != analyzer.Proven {
		severity = analyzer.Warning
		cause = "Not shown: the node's NAT rules and the Service's endpoints differ in number, but the bundle has " +
			"neither the endpoints' addresses nor a kube-proxy log saying it stopped syncing."
	}
	return analyzer.Finding{
		Subject:      servicePortSubject(&sp),
		Severity:     severity,
		Certainty:    certainty,
		Supports:     supports,
		Contradicts:  contradicts,
		Alternatives: alternatives,
		Decide:       decide,
		Title:        title,
		Summary:      strings.Join(summary, " "),
		Cause:        cause,
		Fix: "Find why kube-proxy does not sync (its log: `kubectl -n kube-system logs kube-proxy-XXXX`), fix its access " +
			"to the apiserver, then restart it on the node so it rewrites the rules.",
		Facts:    values,
		Evidence: ev,
	}, true
}
