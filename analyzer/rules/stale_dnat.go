package rules

import (
	"fmt"
	"github.com/netmortem/netmortem/internal/shq"
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
	Explains:    []*analyzer.Rule{ConntrackStaleUDP},
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(10), LoadBalancer502.At(110), DNSTimeouts.At(30), ConnectionsTimeOut.At(50)},
	Plot: analyzer.Plot{
		Parts:               []analyzer.PlotPart{analyzer.PlotAttempts, analyzer.PlotLogErrors, analyzer.PlotStaleMark},
		Servers:             []analyzer.Selector{analyzer.InFacts("stale_targets"), analyzer.InFacts("frontends")},
		NodeKubeProxyErrors: true,
		StaleTargets:        &analyzer.Selector{Fact: "stale_targets"},
	},
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
		g := &staleDNAT{sp: sp, eps: eps, epPos: epPos}
		if f, ok := judgeStaleDNAT(p, g); ok {
			f.Title, f.Summary, f.Cause, f.Fix = staleWords(g)
			p.Report(f)
		}
	}
	return nil
}

// staleDNAT is a Service port whose NAT rules on a node disagree with its
// endpoints, and its judgement (judgeStaleDNAT): the targets no endpoint
// has, the endpoints no rule sends to, the failures a capture or a connect
// loop shows, kube-proxy's failure to sync. staleWords words it.
type staleDNAT struct {
	sp    dataplane.ServicePort
	eps   facts.EndpointSet
	epPos model.Pos

	stale     []string        // the targets no endpoint has, described
	fail      float64         // the share of new connections the rules send to them
	failed    int             // the attempts to them a capture shows failing
	probe     *model.ProbeRun // a connect loop run by hand to the Service, nil when none
	missing   []string        // the endpoints the rules send nothing to
	kubeProxy bool            // kube-proxy's log shows it failing to list
	proven    bool
}

// judgeStaleDNAT judges g; ok is false when the rules and the endpoints
// agree. It fills in g and returns the finding without its words.
func judgeStaleDNAT(p *analyzer.Pass, g *staleDNAT) (f analyzer.Finding, ok bool) {
	s, sp, eps, epPos := p.Snap, g.sp, g.eps, g.epPos
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
	for ip := range eps.IPs {
		if knownIPs > 0 && !inDataplane[ip] {
			g.missing = append(g.missing, ip)
		}
	}
	slices.Sort(g.missing)
	if len(stale) == 0 && len(g.missing) == 0 && eps.Count == len(sp.Backends) {
		return analyzer.Finding{}, false
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
	ev := []analyzer.Evidence{{Pos: sp.Pos, Note: fmt.Sprintf("%s: %s -> %s", sp.Service, staleFront(sp), sp.Chain)}}
	f = analyzer.Finding{Subject: servicePortSubject(&sp), Severity: analyzer.Error, Certainty: analyzer.Proven, Facts: values}
	if len(stale) > 0 {
		for _, b := range stale {
			g.fail += b.Probability
			g.stale = append(g.stale, b.Describe())
			ev = append(ev, analyzer.Evidence{Pos: b.Pos, Note: fmt.Sprintf("DNAT to %s, which no endpoint has", b.Address)})
			f.Supports = append(f.Supports, fmt.Sprintf("%s sends %s of %s's connections to %s, which the Endpoints (%s) "+
				"do not list", b.Pos, dataplane.Percent(b.Probability), sp.Service, b.Address, epPos))
			kept, counted := facts.Attempts.Of(p).FailedTo(b.Addr) // counted, not kept, in summary mode
			for _, a := range kept {
				g.failed++
				if g.failed <= maxGroupEvidence && len(a.SYN) > 0 {
					ev = append(ev, analyzer.Evidence{Pos: a.SegPos(a.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s: %s", a.Client, a.Server, a.Outcome)})
				}
			}
			g.failed += counted
		}
		values["stale_targets"] = g.stale
		values["expected_failures"] = dataplane.Percent(g.fail)
		if g.failed > 0 {
			values["failed_attempts_to_stale"] = g.failed
			f.Supports = append(f.Supports, fmt.Sprintf("the capture shows %d connection %s to the stale %s failing", g.failed,
				plural(g.failed, "attempt", "attempts"), plural(len(stale), "target", "targets")))
		} else if len(s.Attempts) == 0 && len(s.EndpointStats) == 0 {
			f.Contradicts = append(f.Contradicts, "no capture in the bundle: that connections to the stale targets fail is not shown")
		} else {
			f.Contradicts = append(f.Contradicts, "the capture shows no failed connection attempt to the stale targets")
		}
	}
	for i, pr := range s.Probes {
		if !slices.Contains(sp.Frontends, pr.Target.String()) {
			continue
		}
		g.probe = &s.Probes[i]
		values["observed_failures"] = dataplane.Percent(float64(pr.Failed) / float64(pr.Attempts))
		values["observed_tries"] = pr.Attempts
		ev = append(ev, analyzer.Evidence{Pos: pr.Result, Note: fmt.Sprintf("%s loop: %d of %d connects to %s failed", pr.Tool, pr.Failed, pr.Attempts, pr.Target)})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %d of %d connects to %s failed", pr.Result, pr.Failed, pr.Attempts, pr.Target))
		break
	}
	if len(g.missing) > 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("the Endpoints (%s) list %s, to which the node's rules send nothing",
			epPos, strings.Join(g.missing, ", ")))
		values["missing_endpoints"] = g.missing
	}
	ev = append(ev, analyzer.Evidence{Pos: epPos, Note: fmt.Sprintf("%d endpoints of %s", eps.Count, sp.Service)})
	listErrors := facts.KubeProxyLogs.Of(p).ListErrors
	if g.kubeProxy = len(listErrors) > 0; g.kubeProxy {
		ev = append(ev, analyzer.Evidence{Pos: listErrors[0].Event.Pos, Note: "kube-proxy cannot list " + listErrors[0].Plural()})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: kube-proxy cannot list %s", listErrors[0].Event.Pos, listErrors[0].Plural()))
	} else {
		f.Contradicts = append(f.Contradicts, "kube-proxy's log shows no failure to list Services or endpoints (or is not in the "+
			"bundle): the rules may be a moment behind a change of the endpoints")
	}
	if len(stale) == 0 && len(g.missing) == 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("%s sends the Service to %d targets; the Endpoints (%s) count %d",
			sp.Pos, len(sp.Backends), epPos, eps.Count))
		if !g.kubeProxy {
			// Counts alone, with nothing saying kube-proxy stopped.
			f.Severity, f.Certainty = analyzer.Warning, analyzer.Unknown
			f.Alternatives = []string{
				"the rules and the endpoints were read at different moments, around a change kube-proxy has since applied",
				"kube-proxy stopped syncing the Service (its log would show why)",
			}
			f.Decide = fmt.Sprintf("kubectl -n %s get endpoints %s -o json", shq.Quote(sp.Namespace()), shq.Quote(sp.ServiceName()))
		}
	}
	g.proven = f.Certainty == analyzer.Proven
	f.Evidence = ev
	return f, true
}

// staleFront names what the rules catch: the Service port's frontends, or
// its chain.
func staleFront(sp dataplane.ServicePort) string {
	if front := strings.Join(sp.Frontends, ", "); front != "" {
		return front
	}
	return sp.Chain
}

// staleWords words the finding of g, as judgeStaleDNAT judged it.
func staleWords(g *staleDNAT) (title, summary, cause, fix string) {
	sp, count, fail := g.sp, g.eps.Count, dataplane.Percent(g.fail)
	says := []string{fmt.Sprintf("On this node %s (%s) is sent to %d %s by %s; the Service has %d %s.",
		sp.Service, staleFront(sp), len(sp.Backends), plural(len(sp.Backends), "backend", "backends"), sp.Chain,
		count, plural(count, "endpoint", "endpoints"))}
	if len(g.stale) > 0 {
		says = append(says, fmt.Sprintf("%d %s no endpoint of the Service: %s. About %s of new connections go there.",
			len(g.stale), plural(len(g.stale), "target is", "targets are"), strings.Join(g.stale, ", "), fail))
		if g.failed > 0 {
			says = append(says, fmt.Sprintf("The capture shows %d connection %s to them failing.", g.failed, plural(g.failed, "attempt", "attempts")))
		}
	}
	if pr := g.probe; pr != nil {
		line := fmt.Sprintf("A connect loop run by hand (%s) saw %d of %d connections to %s fail (%s)", pr.Pos, pr.Failed, pr.Attempts,
			pr.Target, dataplane.Percent(float64(pr.Failed)/float64(pr.Attempts)))
		if g.fail > 0 {
			line += fmt.Sprintf(", against the %s the stale targets predict", fail)
		}
		says = append(says, line+".")
	}
	if len(g.missing) > 0 {
		says = append(says, fmt.Sprintf("%d %s no traffic from this node: %s.", len(g.missing),
			plural(len(g.missing), "endpoint gets", "endpoints get"), strings.Join(g.missing, ", ")))
	}
	if len(g.stale) == 0 && len(g.missing) == 0 {
		says = append(says, "The endpoints' addresses are not in the bundle, but the counts differ: the rules "+
			"are not those of the current endpoints, and the targets that left take their share of connections with them.")
	}
	if g.kubeProxy {
		says = append(says, "kube-proxy's log shows it failing to list Services or endpoints: it has stopped syncing.")
	}
	switch {
	case len(g.stale) > 0:
		title = fmt.Sprintf("%s: %d of %d NAT targets are stale (~%s of connections fail)", sp.Service, len(g.stale), len(sp.Backends), fail)
	case len(g.missing) > 0:
		title = fmt.Sprintf("%s: %d endpoints missing from the node's NAT rules", sp.Service, len(g.missing))
	default:
		title = fmt.Sprintf("%s: the node's NAT rules have %d targets, the Service %d endpoints", sp.Service, len(sp.Backends), count)
	}
	cause = "kube-proxy on this node no longer writes the Service's current endpoints into the NAT rules: it cannot " +
		"list them from the apiserver, or it is stuck."
	if !g.proven {
		cause = "Not shown: the node's NAT rules and the Service's endpoints differ in number, but the bundle has " +
			"neither the endpoints' addresses nor a kube-proxy log saying it stopped syncing."
	}
	fix = "Find why kube-proxy does not sync (its log: `kubectl -n kube-system logs kube-proxy-XXXX`), fix its access " +
		"to the apiserver, then restart it on the node so it rewrites the rules."
	return title, strings.Join(says, " "), cause, fix
}
