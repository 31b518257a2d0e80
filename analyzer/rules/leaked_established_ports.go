package rules

import (
	"fmt"
	"path"
	"slices"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/internal/shq"
	"github.com/netmortem/netmortem/model"
)

// LeakedEstablishedPorts finds connects failing with EADDRNOTAVAIL: the
// local ports toward one destination used up.
var LeakedEstablishedPorts = &analyzer.Rule{
	Name:        "leaked-established-ports",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	SubjectKeys: []string{"component", "node", "address"},
	Run:         runLeakedEstablishedPorts,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(240), ControlPlaneUnhealthy.At(90)},
	Proof: "a component's connects failing with \"cannot assign requested address\" (its log) and, in the same " +
		"network namespace, its sockets toward that destination by state (ss -tan): tens of thousands ESTAB, not " +
		"TIME-WAIT, prove the leak",
	Unproven: "from the log alone the ports toward the destination are shown used up, not by what: a warning of " +
		"unknown cause with leaked ESTABLISHED connections first among the causes, and the ss count that decides",
	Doc: `connects fail: no local port left toward one destination

connect() fails with EADDRNOTAVAIL ("dial tcp ADDR: connect: cannot
assign requested address") when the kernel finds no free local port for
the destination: every port of net.ipv4.ip_local_port_range is taken by a
socket to that same address and port. A client that opens a new connection
per request and never closes the old ones (a leaked HTTP client or
transport, a body never closed) piles up ESTABLISHED sockets toward its one
API endpoint until no port is left; the controller stops reconciling until
it is restarted, and the failure comes back an hour later. Many short
connections closed by the client (TIME-WAIT) use up the ports the same way.

Evidence: the component's log lines (the destination, their count); the
Pod's sockets toward that destination by state (ss -tan in its network
namespace) decide between a leak (ESTAB) and churn (TIME-WAIT).

Severity: warning, cause unknown from the log alone.

Fix: find the client that does not close its connections (reuse one
http.Client and Transport, close response bodies, set idle timeouts);
restarting the Pod frees the ports for a while. For TIME-WAIT churn, reuse
connections (keep-alive), or widen net.ipv4.ip_local_port_range.`,
}

// eaddrnotavailRe finds a connect that found no free local port, and its
// destination.
var eaddrnotavailRe = lazyre.New(`dial (?:tcp|udp)[46]? (\S+): (?:connect|bind): cannot assign requested address`)

// portsGone are the failed connects of one component, on one node, to one
// destination.
type portsGone struct {
	component, node, dest string
	lines                 []*model.LogEvent
}

func runLeakedEstablishedPorts(p *analyzer.Pass) error {
	var order []*portsGone
	byKey := map[string]*portsGone{}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		m := eaddrnotavailRe.FindStringSubmatch(le.Message)
		if m == nil {
			continue
		}
		comp := le.Source
		if comp == "" {
			comp = path.Base(le.Pos.File)
		}
		k := comp + "|" + le.Node + "|" + m[1]
		g := byKey[k]
		if g == nil {
			g = &portsGone{component: comp, node: le.Node, dest: m[1]}
			byKey[k] = g
			order = append(order, g)
		}
		g.lines = append(g.lines, le)
	}
	for _, g := range order {
		p.Report(portsGoneFinding(g))
	}
	return nil
}

func portsGoneFinding(g *portsGone) analyzer.Finding {
	n := len(g.lines)
	var ev []analyzer.Evidence
	for i, le := range g.lines {
		if i < maxGroupEvidence || i == n-1 {
			ev = append(ev, analyzer.Evidence{Pos: le.Pos, Note: fmt.Sprintf("%s: connect to %s: cannot assign requested address",
				g.component, g.dest)})
		}
	}
	ev = slices.Clip(ev)
	where := ""
	if g.node != "" {
		where = " on " + g.node
	}
	values := map[string]any{"component": g.component, "destination": g.dest, "errors": n}
	if g.node != "" {
		values["node"] = g.node
	}
	return analyzer.Finding{
		Subject:   subject("component", g.component, "node", g.node, "address", g.dest),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Unknown,
		Title:     fmt.Sprintf("%s: no local port left to connect to %s", g.component, g.dest),
		Summary: fmt.Sprintf("%s%s logs %d %s to %s failing with \"cannot assign requested address\" (EADDRNOTAVAIL): "+
			"the kernel found no free local port toward that destination, so every port of the range is held by a "+
			"socket to it.", g.component, where, n, plural(n, "connect", "connects"), g.dest),
		Cause: fmt.Sprintf("Not shown what holds the ports: connections to %s that the client opens and never closes "+
			"(ESTABLISHED, a leak), or many short ones it closes first (TIME-WAIT).", g.dest),
		Fix: "Count the component's sockets toward the destination by state; for ESTAB, find the client code that " +
			"does not close connections (reuse one HTTP client and transport, close response bodies) and restart the " +
			"Pod meanwhile; for TIME-WAIT, reuse connections or widen net.ipv4.ip_local_port_range.",
		Supports: []string{fmt.Sprintf("%s: %s", g.lines[0].Pos, g.lines[0].Message)},
		Alternatives: []string{
			fmt.Sprintf("the client leaks connections to %s: its ESTABLISHED sockets hold the ports", g.dest),
			"many short connections closed by the client: TIME-WAIT sockets hold the ports",
			"a local port range too narrow for the client's load (net.ipv4.ip_local_port_range)",
		},
		Decide: fmt.Sprintf("# in the component's Pod network namespace: tens of thousands ESTAB prove the leak\n"+
			"ss -tan dst %s | awk '{print $1}' | sort | uniq -c\nsysctl net.ipv4.ip_local_port_range", shq.Quote(g.dest)),
		Facts:    values,
		Evidence: ev,
	}
}
