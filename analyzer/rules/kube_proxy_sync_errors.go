package rules

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// KubeProxySyncErrors finds kube-proxy instances that cannot read Services
// or endpoints from the apiserver, so that their dataplane goes stale.
var KubeProxySyncErrors = &analyzer.Rule{
	Name:        "kube-proxy-sync-errors",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindNetfilter, model.KindIPVS, model.KindKube},
	Requires:    []analyzer.FactKey{facts.KubeProxyLogs, facts.Dataplanes, facts.ServiceEndpoints},
	SubjectKeys: []string{"node", "component"},
	Run:         runKubeProxySyncErrors,
	Explains:    []*analyzer.Rule{StaleDNAT},
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(20), DNSTimeouts.At(60), ControlPlaneUnhealthy.At(40)},
	Plot: analyzer.Plot{
		Parts: []analyzer.PlotPart{analyzer.PlotLogErrors, analyzer.PlotStaleMark},
	},
	Proof: "kube-proxy's log failing to list Services or endpoints, and the node's NAT rules or IPVS table disagreeing " +
		"with the Services' endpoints (the dataplane left stale)",
	Unproven: "from the log alone, or with a dataplane that still matches the endpoints, the failures are shown but " +
		"not what they cost, and the log's message says why only when it names it (refused, timeout, Unauthorized, " +
		"Forbidden): a warning, with the command that reaches the apiserver as kube-proxy does",
	Doc: `kube-proxy cannot list Services or endpoints

kube-proxy's log shows its informers failing to list or watch Services,
Endpoints or EndpointSlices ("Failed to list *v1.Service", "failed to list
*v1.EndpointSlice"): it keeps programming the dataplane from what it last
knew. Every endpoint change after that is missed: connections go to Pods
that are gone (see stale-dnat), and new Pods get no traffic.

A kube-proxy that refuses its own kubeconfig at start ("invalid
configuration: no server found for cluster ...", "unable to load in-cluster
configuration") never lists anything: it exits and programs no rule at all.
Its own line names the cause; from the log alone it is likely.

Evidence: kube-proxy's log lines, with the first and last failure; the
node's NAT rules or IPVS table when present.

Severity: error when the node's dataplane (iptables, nftables or IPVS)
beside the Services' endpoints shows a Service port left stale; warning from
the log alone.

Fix: restore kube-proxy's access to the apiserver: check its kubeconfig and
credentials, the apiserver address it uses (a dead load balancer VIP?), and
network policies or firewalls between the node and the apiserver; then restart
kube-proxy so it resyncs.`,
}

// kubeProxyLists are the failures to list of one kube-proxy log, and their
// judgement (judgeKubeProxyLists): whether the node's rules are shown stale,
// and why the lists fail. kubeProxyWords words it.
type kubeProxyLists struct {
	node       string
	file       string
	kinds      []string
	events     []facts.ListError
	first, end time.Time
	timed      bool

	proven bool   // the node's rules are shown stale
	why    string // why the lists fail, as their messages say; "" when they do not
	cause  string // the cause listFailureCause words from the messages
}

func runKubeProxySyncErrors(p *analyzer.Pass) error {
	var groups []*kubeProxyLists
	byKey := map[string]*kubeProxyLists{}
	// Other components' failures are apiserver-unreachable's.
	for _, e := range facts.KubeProxyLogs.Of(p).ListErrors {
		le := e.Event
		key := le.Node + "|" + le.Pos.File
		g := byKey[key]
		if g == nil {
			g = &kubeProxyLists{node: le.Node, file: le.Pos.File}
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
	stale, stalePos, epEv := staleServicePorts(p)
	nodes := map[string]bool{}
	for _, g := range groups {
		f := judgeKubeProxyLists(p.Snap, g, stale, stalePos, epEv)
		f.Title, f.Summary, f.Cause, f.Fix = kubeProxyWords(g)
		p.Report(f)
		nodes[g.node] = true
	}
	for _, c := range kubeProxyConfigFailures(p) {
		if nodes[c.node] {
			continue // the node's finding is its list failures
		}
		f := judgeKubeProxyConfig(c)
		f.Title, f.Summary, f.Cause, f.Fix = kubeProxyConfigWords(c)
		p.Report(f)
	}
	return nil
}

// kubeProxyConfigRe finds kube-proxy refusing its own kubeconfig at start:
// client-go's "invalid configuration: no server found for cluster ...",
// "invalid configuration: no configuration has been provided", and
// "unable to load in-cluster configuration".
var kubeProxyConfigRe = lazyre.New(`(?i)(invalid configuration: (?:no server found for cluster "[^"]*"|no configuration has been provided[^,;]*)|unable to load in-cluster configuration[^,;]*)`)

// kubeProxyExitRe finds the process of a kube-proxy unit exiting with a
// failure (systemd's "Main process exited, code=exited, status=1/FAILURE").
var kubeProxyExitRe = lazyre.New(`(?i)main process exited, code=\w+, status=\d+/\w+`)

// kubeProxyStart is one kube-proxy that refused its kubeconfig at start:
// the line that says so, what it says, and the line where it exited.
type kubeProxyStart struct {
	node    string
	line    *model.LogEvent
	reason  string
	exit    *model.LogEvent
	repeats int // how many times the log says it
}

// kubeProxyConfigFailures gathers, per node, kube-proxy's own lines saying
// its kubeconfig is unusable, and the exit that follows.
func kubeProxyConfigFailures(p *analyzer.Pass) []*kubeProxyStart {
	logs := p.Snap.Logs
	var out []*kubeProxyStart
	byNode := map[string]*kubeProxyStart{}
	for i := range logs {
		le := &logs[i]
		if !facts.IsKubeProxyLog(le) {
			continue
		}
		if c := byNode[le.Node]; c != nil && c.exit == nil && le.Pos.File == c.line.Pos.File && kubeProxyExitRe.MatchString(le.Message) {
			c.exit = le
			continue
		}
		m := kubeProxyConfigRe.FindString(le.Message)
		if m == "" {
			continue
		}
		c := byNode[le.Node]
		if c == nil {
			c = &kubeProxyStart{node: le.Node, line: le, reason: m}
			byNode[le.Node] = c
			out = append(out, c)
		}
		c.repeats++
	}
	return out
}

// judgeKubeProxyConfig judges kube-proxy's refusal of its kubeconfig: its
// own line names the cause, but the log alone is one kind of evidence.
func judgeKubeProxyConfig(c *kubeProxyStart) analyzer.Finding {
	f := analyzer.Finding{
		Subject:   subject("node", c.node, "component", "kube-proxy"),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Supports:  []string{fmt.Sprintf("%s: kube-proxy says %s", c.line.Pos, c.reason)},
		Evidence:  []analyzer.Evidence{{Pos: c.line.Pos, Note: "kube-proxy refuses its kubeconfig: " + c.reason}},
		Contradicts: []string{"no NAT rules or IPVS table of the node in the bundle: that kube-proxy programmed " +
			"nothing is not shown"},
		Alternatives: []string{"the kubeconfig was fixed since and kube-proxy runs now: the line is from an earlier start"},
		Decide: "# KUBECONFIG_FILE is the file kube-proxy's --kubeconfig names\n" +
			"kubectl config view --kubeconfig KUBECONFIG_FILE -o jsonpath='{.clusters[*].cluster.server}'; " +
			"iptables-save -t nat | grep -c KUBE-SVC",
		Facts: map[string]any{"reason": c.reason, "errors": c.repeats},
	}
	if c.exit != nil {
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the kube-proxy unit exits (%s)", c.exit.Pos,
			kubeProxyExitRe.FindString(c.exit.Message)))
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: c.exit.Pos, Note: "kube-proxy exits"})
	}
	if c.node != "" {
		f.Facts["node"] = c.node
	}
	return f
}

// kubeProxyConfigWords words the finding of c.
func kubeProxyConfigWords(c *kubeProxyStart) (title, summary, cause, fix string) {
	title = "kube-proxy cannot start: its kubeconfig is unusable (" + c.reason + ")"
	exits := ""
	if c.exit != nil {
		exits = " and exits"
	}
	summary = fmt.Sprintf("kube-proxy%s says %s at start%s: it never lists Services or endpoints, so it programs "+
		"no NAT rules or IPVS services and no Service works through this node.", onNode(c.node), c.reason, exits)
	cause = "kube-proxy's kubeconfig does not give it a usable apiserver: " + c.reason + "."
	fix = "Give kube-proxy's kubeconfig the cluster entry with the apiserver's address (`kubectl config set-cluster " +
		"CLUSTER --server=https://APISERVER:6443 --certificate-authority=CA_FILE " +
		"--kubeconfig=KUBE_PROXY_KUBECONFIG`, with CLUSTER the entry's name in that file) and restart kube-proxy."
	return title, summary, cause, fix
}

// judgeKubeProxyLists judges g against the Service ports whose rules are
// stale (stale, the first one's rule at stalePos, its endpoints epEv). It
// fills in g and returns the finding without its words.
func judgeKubeProxyLists(s *model.Snapshot, g *kubeProxyLists, stale []string, stalePos model.Pos, epEv analyzer.Evidence) analyzer.Finding {
	f := analyzer.Finding{
		// Not the log's file name: a moved or CRI-named log of the same
		// kube-proxy would change it.
		Subject:   subject("node", g.node, "component", "kube-proxy"),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Supports:  []string{fmt.Sprintf("%s: %s", g.events[0].Event.Pos, strings.TrimSpace(g.events[0].Event.Message))},
	}
	switch {
	case len(stale) > 0:
		f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the node's rules for %s do not match the Service's endpoints "+
			"(stale-dnat)", stalePos, strings.Join(stale, ", ")))
	case s.Has(model.KindNetfilter) || s.Has(model.KindIPVS):
		if s.Has(model.KindKube) {
			f.Contradicts = append(f.Contradicts, "the node's dataplane matches the Services' endpoints in the bundle: no "+
				"stale rule is shown")
		} else {
			f.Contradicts = append(f.Contradicts, "no Endpoints or EndpointSlices in the bundle: whether the dataplane "+
				"is stale is not shown")
		}
	default:
		f.Contradicts = append(f.Contradicts, "no NAT rules or IPVS table of the node in the bundle: whether the "+
			"dataplane is stale is not shown")
	}
	g.proven = f.Certainty == analyzer.Proven
	g.why, g.cause, f.Alternatives = listFailureCause(g.events)
	switch {
	case g.why != "":
		f.Supports = append(f.Supports, g.why)
	case g.proven:
	default:
		f.Certainty = analyzer.Unknown
	}
	for i, e := range g.events {
		if i < 3 || i == len(g.events)-1 {
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: e.Event.Pos, Note: "kube-proxy cannot list " + e.Plural()})
		}
	}
	f.Facts = map[string]any{
		"errors":    len(g.events),
		"resources": g.kinds,
	}
	if g.node != "" {
		f.Facts["node"] = g.node
	}
	if g.timed {
		f.Facts["first"] = g.first.Format(logTime(g.first))
		f.Facts["last"] = g.end.Format(logTime(g.end))
	}
	if g.proven {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: stalePos, Note: "rules that do not match the Service's endpoints"})
		if !epEv.Pos.IsZero() {
			f.Evidence = append(f.Evidence, epEv)
		}
		f.Alternatives = nil
	} else {
		f.Decide = "kubectl -n kube-system logs ds/kube-proxy | grep -i 'failed to list' | tail -1\n# from the node\n" +
			"curl -k \"$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')/healthz\""
	}
	return f
}

// kubeProxyWords words the finding of g, as judgeKubeProxyLists judged it.
func kubeProxyWords(g *kubeProxyLists) (title, summary, cause, fix string) {
	kinds := strings.Join(g.kinds, ", ")
	title = fmt.Sprintf("kube-proxy cannot list %s: its dataplane is not updated", kinds)
	if !g.proven {
		title = fmt.Sprintf("kube-proxy cannot list %s: its dataplane may be stale", kinds)
	}
	span := ""
	if g.timed {
		span = fmt.Sprintf(" from %s to %s", g.first.Format(logTime(g.first)), g.end.Format(logTime(g.end)))
	}
	summary = fmt.Sprintf("kube-proxy logs %d failures to list or watch %s%s. It keeps the NAT rules (or IPVS "+
		"services) it last programmed: endpoint changes since then are missed.", len(g.events), kinds, span)
	cause = g.cause
	if g.why == "" && g.proven {
		cause = "kube-proxy cannot list what it programs the dataplane from, so the node's rules keep the state it " +
			"last knew; why the lists fail its log does not say (credentials, the address it uses, the apiserver)."
	}
	fix = "Check kube-proxy's kubeconfig and the apiserver address it uses (`kubectl -n kube-system get cm kube-proxy " +
		"-o yaml`), test that address from the node, then restart kube-proxy (`kubectl -n kube-system rollout restart " +
		"ds/kube-proxy`) so it resyncs the dataplane."
	return title, summary, cause, fix
}

// listFailureCause reads why kube-proxy's lists fail from the messages:
// what the message shows ("" when it names no reason), the cause in words,
// and the causes not ruled out.
func listFailureCause(events []facts.ListError) (why, cause string, alternatives []string) {
	all := []string{
		"kube-proxy's credentials are refused (an expired token, RBAC)",
		"the apiserver address kube-proxy uses is unreachable (a dead load balancer VIP, a firewall, a network policy)",
		"the apiserver, or a proxy in front of it, fails the requests",
	}
	for _, e := range events {
		m := strings.ToLower(e.Event.Message)
		switch {
		case strings.Contains(m, "unauthorized") || strings.Contains(m, "forbidden"):
			return fmt.Sprintf("%s: the apiserver answers %s", e.Event.Pos, pick(m, "unauthorized", "forbidden")),
				"The apiserver refuses kube-proxy's credentials or its RBAC rights: the lists fail with " +
					pick(m, "Unauthorized", "Forbidden") + ".", all[1:]
		case strings.Contains(m, "connection refused") || strings.Contains(m, "i/o timeout") ||
			strings.Contains(m, "no route to host") || strings.Contains(m, "connection reset"):
			return fmt.Sprintf("%s: the connection to the apiserver fails (%s)", e.Event.Pos,
					pick(m, "connection refused", "i/o timeout", "no route to host", "connection reset")),
				"kube-proxy cannot reach the apiserver address it uses: the connection itself fails.",
				[]string{all[2], "the apiserver is down"}
		}
	}
	return "", "Not shown: kube-proxy's log says its lists fail but not why (no refused connection, timeout, " +
		"Unauthorized or Forbidden in the messages).", all
}

// pick returns the first of words that s contains (case-insensitively),
// as written in words.
func pick(s string, words ...string) string {
	for _, w := range words {
		if strings.Contains(s, strings.ToLower(w)) {
			return w
		}
	}
	return words[0]
}

// staleServicePorts names the Service ports whose NAT rules or IPVS
// services disagree with the Service's endpoints (the addresses, or their
// number), the first one's rule, and its endpoints as evidence.
func staleServicePorts(p *analyzer.Pass) ([]string, model.Pos, analyzer.Evidence) {
	endpoints := facts.ServiceEndpoints.Of(p)
	var out []string
	var pos model.Pos
	var epEv analyzer.Evidence
	for _, sp := range facts.Dataplanes.Of(p) {
		if sp.Service == "" {
			continue
		}
		eps, epPos, found := endpoints.Of(sp.Namespace(), sp.ServiceName(), sp.PortName())
		if !found {
			continue
		}
		stale := eps.Count != len(sp.Backends)
		for _, b := range sp.Backends {
			if ip := facts.BackendIP(b); ip != "" && len(eps.IPs) > 0 && !eps.IPs[ip] {
				stale = true
			}
		}
		if stale && !slices.Contains(out, sp.Service) {
			if len(out) == 0 {
				addrs := slices.Sorted(slices.Values(eps.Addrs))
				pos, epEv = sp.Pos, analyzer.Evidence{Pos: epPos, Note: "endpoints " + orNone(addrs)}
			}
			out = append(out, sp.Service)
		}
	}
	return out, pos, epEv
}
