package rules

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// KubeProxySyncErrors finds kube-proxy instances that cannot read Services
// or endpoints from the apiserver, so that their dataplane goes stale.
var KubeProxySyncErrors = &analyzer.Rule{
	Name:     "kube-proxy-sync-errors",
	Severity: analyzer.Error,
	Needs:    []model.Kind{model.KindLogs},
	Uses:     []model.Kind{model.KindNetfilter, model.KindIPVS, model.KindKube},
	Requires: []analyzer.FactKey{facts.KubeProxyLogs},
	Run:      runKubeProxySyncErrors,
	Doc: `kube-proxy cannot list Services or endpoints

kube-proxy's log shows its informers failing to list or watch Services,
Endpoints or EndpointSlices ("Failed to list *v1.Service", "failed to list
*v1.EndpointSlice"): it keeps programming the dataplane from what it last
knew. Every endpoint change after that is missed: connections go to Pods
that are gone (see stale-dnat), and new Pods get no traffic.

Evidence: kube-proxy's log lines, with the first and last failure; the
node's NAT rules or IPVS table when present.

Severity: error when the node's dataplane (iptables or IPVS) is in the bundle
too, so the stale state can be checked; warning from the log alone.

Fix: restore kube-proxy's access to the apiserver: check its kubeconfig and
credentials, the apiserver address it uses (a dead load balancer VIP?), and
network policies or firewalls between the node and the apiserver; then restart
kube-proxy so it resyncs.`,
}

func runKubeProxySyncErrors(p *analyzer.Pass) error {
	s := p.Snap
	type group struct {
		node       string
		file       string
		kinds      []string
		events     []facts.ListError
		first, end time.Time
		timed      bool
	}
	var groups []*group
	byKey := map[string]*group{}
	// Other components' failures are apiserver-unreachable's.
	for _, e := range facts.KubeProxyLogs.Of(p).ListErrors {
		le := e.Event
		key := le.Node + "|" + le.Pos.File
		g := byKey[key]
		if g == nil {
			g = &group{node: le.Node, file: le.Pos.File}
			byKey[key] = g
			groups = append(groups, g)
		}
		if !slices.Contains(g.kinds, e.Kind) {
			g.kinds = append(g.kinds, e.Kind)
		}
		g.events = append(g.events, e)
		if !le.Time.IsZero() {
			if !g.timed || le.Time.Before(g.first) {
				g.first = le.Time
			}
			if !g.timed || le.Time.After(g.end) {
				g.end = le.Time
			}
			g.timed = true
		}
	}
	dataplane := s.Has(model.KindNetfilter) || s.Has(model.KindIPVS)
	for _, g := range groups {
		sev := analyzer.Warning
		sources := []model.Kind{model.KindLogs}
		if dataplane {
			sev = analyzer.Error
			if s.Has(model.KindNetfilter) {
				sources = append(sources, model.KindNetfilter)
			}
			if s.Has(model.KindIPVS) {
				sources = append(sources, model.KindIPVS)
			}
		}
		var ev []analyzer.Evidence
		for i, e := range g.events {
			if i < 3 || i == len(g.events)-1 {
				ev = append(ev, analyzer.Evidence{Pos: e.Event.Pos, Note: "kube-proxy cannot list " + e.Plural()})
			}
		}
		values := map[string]any{
			"errors":    len(g.events),
			"resources": g.kinds,
		}
		if g.node != "" {
			values["node"] = g.node
		}
		span := ""
		if g.timed {
			values["first"] = g.first.Format(logTime(g.first))
			values["last"] = g.end.Format(logTime(g.end))
			span = fmt.Sprintf(" from %s to %s", g.first.Format(logTime(g.first)), g.end.Format(logTime(g.end)))
		}
		kinds := strings.Join(g.kinds, ", ")
		p.Report(analyzer.Finding{
			Severity: sev,
			Title:    fmt.Sprintf("kube-proxy cannot list %s: its dataplane is not updated", kinds),
			Summary: fmt.Sprintf("kube-proxy logs %d failures to list or watch %s%s. It keeps the NAT rules (or IPVS "+
				"services) it last programmed: endpoint changes since then are missed.", len(g.events), kinds, span),
			Cause: "kube-proxy lost access to the apiserver (credentials, the address it uses, a network path or a " +
				"policy), or the apiserver fails these requests.",
			Fix: "Check kube-proxy's kubeconfig and the apiserver address it uses (`kubectl -n kube-system get cm kube-proxy " +
				"-o yaml`), test that address from the node, then restart kube-proxy (`kubectl -n kube-system rollout restart " +
				"ds/kube-proxy`) so it resyncs the dataplane.",
			Facts:    values,
			Sources:  sources,
			Evidence: ev,
		})
	}
	return nil
}
