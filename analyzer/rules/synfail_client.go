package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// Failed connection attempts told by a client transcript: what a ticket
// carries most often when it carries no capture (`curl -v`, `nc -vz`,
// telnet, an application's `dial tcp ...` line). The transcript says which
// server endpoint failed and how (refused, timed out), never why: a finding
// made of it alone names the failure, its cause stays unknown, with the
// candidates and the command that decides. Endpoints a capture shows are
// left to the capture's findings.

// clientFailGroup is the attempts of one outcome to one server endpoint
// that client transcripts tell, on one node.
type clientFailGroup struct {
	node    string
	server  netip.AddrPort
	results []*model.ClientResult
	tools   []string
}

// clientOutcomes are the transcript outcomes of each outcome of failed
// attempts: refused is an RST; a timeout, or a command interrupted before
// it printed anything, is SYNs left unanswered.
func clientOutcomes(o model.Outcome) []model.ClientOutcome {
	switch o {
	case model.OutcomeRefused:
		return []model.ClientOutcome{model.ClientRefused}
	case model.OutcomeUnanswered:
		return []model.ClientOutcome{model.ClientTimeout, model.ClientNoAnswer}
	}
	return nil
}

// clientFailures groups the TCP connection attempts of outcome o that the
// client transcripts of s tell, per node and server endpoint, leaving out
// the endpoints a capture holds attempts to, DNS lookups and UDP. (A
// request that times out after its connection was made is the
// transcript's connection, not a timeout.)
func clientFailures(s *model.Snapshot, o model.Outcome) []*clientFailGroup {
	want := clientOutcomes(o)
	captured := map[netip.AddrPort]bool{}
	for i := range s.Attempts {
		captured[s.Attempts[i].Server] = true
	}
	for i := range s.EndpointStats {
		captured[s.EndpointStats[i].Server] = true
	}
	var out []*clientFailGroup
	byKey := map[string]*clientFailGroup{}
	results := make([]*model.ClientResult, 0, len(s.Client))
	for i := range s.Client {
		results = append(results, &s.Client[i])
	}
	results = append(results, nginxUpstreamConnects(s)...)
	for _, r := range results {
		srv := netip.AddrPortFrom(r.Addr.Addr().Unmap(), r.Addr.Port())
		if !slices.Contains(want, r.Outcome) || !srv.Addr().IsValid() || srv.Port() == 0 || captured[srv] ||
			r.Tool == "dig" || r.Tool == "nslookup" || strings.Contains(strings.ToLower(r.Message), "udp") {
			continue
		}
		key := r.Node + "|" + srv.String()
		g := byKey[key]
		if g == nil {
			g = &clientFailGroup{node: r.Node, server: srv}
			byKey[key] = g
			out = append(out, g)
		}
		g.results = append(g.results, r)
		if tool := clientTool(r); !slices.Contains(g.tools, tool) {
			g.tools = append(g.tools, tool)
		}
	}
	return out
}

// nginxNoEndpoints is where NGINX's Ingress controllers point a backend
// whose Service has no endpoints (nginx/kubernetes-ingress, ingress-nginx's
// default backend of old): refused there is a placeholder answering.
var nginxNoEndpoints = netip.MustParseAddrPort("127.0.0.1:8181")

// nginxUpstreamConnects reads nginx's failures to connect to an upstream
// (an Ingress controller's to a Pod): "upstream timed out (110: Operation
// timed out) while connecting to upstream, ..., upstream:
// "http://192.168.215.1:80/"" and "connect() failed (111: Connection
// refused) while connecting to upstream" are a client's attempts that
// timed out or were refused, as a transcript tells them. Failures after the
// connection was made (reading the response) are not.
func nginxUpstreamConnects(s *model.Snapshot) []*model.ClientResult {
	var out []*model.ClientResult
	for i := range s.Logs {
		le := &s.Logs[i]
		up := le.Fields["upstream"]
		if up == "" || !strings.Contains(le.Message, "while connecting to upstream") {
			continue
		}
		var o model.ClientOutcome
		switch le.Fields["errno"] {
		case "110":
			o = model.ClientTimeout
		case "111":
			o = model.ClientRefused
		default:
			continue
		}
		host, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(up, "http://"), "https://"), "/")
		addr, err := netip.ParseAddrPort(host)
		if err != nil {
			continue // a name, or no port: no endpoint to judge
		}
		if addr == nginxNoEndpoints {
			continue // a backend without endpoints, not a connection: service-no-endpoints reads it
		}
		out = append(out, &model.ClientResult{Pos: le.Pos, Node: le.Node, Tool: "nginx", Target: host, Addr: addr,
			Outcome: o, Message: strings.TrimSpace(le.Message)})
	}
	return out
}

// clientTool names the client of r: "curl", "nc", "app" (an
// application's line), or "a client" when the transcript names none.
func clientTool(r *model.ClientResult) string {
	if r.Tool == "" || r.Tool == "app" && r.Command == "" && !strings.Contains(r.Message, "dial ") {
		return "a client"
	}
	return r.Tool
}

// clientFailFinding reports the failed attempts of g, told only by client
// transcripts: a warning whose cause stays unknown, with the alternatives
// and the command that decides them, as for a capture seen alone.
func clientFailFinding(g *clientFailGroup, o model.Outcome, roles facts.AddrIndex, nodePorts []model.NodePort) analyzer.Finding {
	rs := roles.Of(g.server.Addr(), g.server.Port())
	var ev []analyzer.Evidence
	for i, r := range g.results {
		if i == maxGroupEvidence {
			break
		}
		ev = append(ev, analyzer.Evidence{Pos: r.Pos, Note: r.Message})
	}
	ev = append(ev, rs.Evidence()...)
	n := 0
	for _, r := range g.results {
		n += max(1, r.Count)
	}
	told := "client transcript"
	if len(g.tools) == 1 && g.tools[0] == "nginx" {
		told = "nginx error log" // an Ingress controller's upstream
	}
	values := map[string]any{"server": g.server.String(), "attempts": n, "clients": g.tools, "source": told}
	if g.node != "" {
		values["node"] = g.node
	}
	what := ""
	if len(rs) > 0 {
		values["server_is"] = rs.Words()
		what = fmt.Sprintf(" The server is %s.", rs.Words())
	}
	f := analyzer.Finding{Severity: analyzer.Warning, Facts: values, Evidence: ev,
		Subject: subject("node", g.node, "address", g.server.String(), "proto", "tcp")}
	first := g.results[0]
	attempts := plural(n, "attempt", "attempts")
	tools := strings.Join(g.tools, ", ")
	switch o {
	case model.OutcomeRefused:
		f.Title = fmt.Sprintf("%s refuses connections: a %s says %q", g.server, told, first.Message)
		f.Summary = fmt.Sprintf("%d connection %s from %s to %s %s refused (ECONNREFUSED): something answered the SYN "+
			"with a reset, or with an ICMP port unreachable.%s No capture shows who answered.", n, attempts, tools, g.server,
			plural(n, "was", "were"), what)
		f.Cause = "Nothing listens on that port at that address (the process is down, listens on another port, or only " +
			"on 127.0.0.1), or a rule rejects the connection: kube-proxy rejects connections to a Service without " +
			"endpoints this way, and a firewall's REJECT does too."
		f.Fix = fmt.Sprintf("On the host of %s, check `ss -lntp 'sport = :%d'` (a listener on 0.0.0.0 or the Pod's "+
			"address, not 127.0.0.1); for a Service, check it has endpoints and that its targetPort is the port the "+
			"container listens on.", g.server.Addr(), g.server.Port())
		if g.server.Addr().IsLoopback() {
			f.Cause = fmt.Sprintf("%s is the client's own host: nothing listens on port %d there (a `kubectl "+
				"port-forward`, a host port mapping or a local proxy not running), or a local rule rejects it.",
				g.server.Addr(), g.server.Port())
			f.Fix = fmt.Sprintf("On the client's host, check `ss -lntp 'sport = :%d'`; start what should listen there "+
				"(the port-forward or the mapping to the cluster), or use an address that reaches the Service.", g.server.Port())
		}
	default:
		f.Title = fmt.Sprintf("%s does not answer: a %s says %q", g.server, told, first.Message)
		f.Summary = fmt.Sprintf("%d connection %s from %s to %s timed out: no SYN/ACK, RST or ICMP error came back "+
			"to the client.%s No capture shows where the SYNs were lost.", n, attempts, tools, g.server, what)
		f.Cause = "The SYNs or their replies are dropped on the way or at the server: a firewall, security group or " +
			"NetworkPolicy drops them, the backend is down or gone, or the replies take another path."
		f.Fix = fmt.Sprintf("Capture on the server's node while the client retries (`tcpdump -ni any host %s and port "+
			"%d`) to see whether the SYNs arrive and what answers, and check the DROP rules and NetworkPolicies on "+
			"the path.", g.server.Addr(), g.server.Port())
	}
	synCertainty(&f, o, ev, false, g.server.String(), g.server)
	// The capture's words do not apply: the transcript is what shows it.
	how := "timing out"
	if o == model.OutcomeRefused {
		how = "refused"
	}
	f.Supports[len(f.Supports)-1] = fmt.Sprintf("the client transcript shows the %s to %s %s", attempts, g.server, how)
	if o != model.OutcomeRefused {
		f.Contradicts = nil // a capture's blind spots
	}
	f.Contradicts = append(f.Contradicts, "a client transcript tells how the attempt ended, not where: only a "+
		"capture shows which host answered or where the SYNs stopped")
	if o == model.OutcomeRefused {
		f.Alternatives = append(f.Alternatives, "the address is a Service's without ready endpoints, which "+
			"kube-proxy rejects")
		if !slices.ContainsFunc(roles.Of(g.server.Addr(), 0), func(r facts.AddrRole) bool { return r.Kind != facts.RoleNodeAddress }) {
			// Not a Service's, an endpoint's or a Pod's address: a node's, or
			// one the bundle does not name, where a NodePort answers.
			noNodePort(&f, g.server.Port(), nodePorts)
		}
	}
	return f
}

// noNodePort weighs, in a refusal at an address that is a node's or one
// the bundle does not name, a port of the NodePort range that none of the
// Services the bundle lists holds: a request to the wrong port, for
// which kube-proxy writes no rule and nothing listens. The list may not
// hold every namespace's Services, so it stays one cause among the
// others, first, with the command that lists them all.
func noNodePort(f *analyzer.Finding, port uint16, nodePorts []model.NodePort) {
	if port < 30000 || port > 32767 || len(nodePorts) == 0 {
		return
	}
	// The TCP NodePorts held, by Service, in the order listed.
	var svcs []string
	held := map[string][]string{}
	n := 0
	for _, np := range nodePorts {
		if np.Port == port {
			return
		}
		if np.Protocol != "TCP" || n == 8 {
			continue
		}
		name := strings.TrimPrefix(model.ObjectName("Service", np.Namespace, np.Service), "Service ")
		if held[name] == nil {
			svcs = append(svcs, name)
		}
		held[name] = append(held[name], strconv.Itoa(int(np.Port)))
		n++
	}
	if n == 0 {
		return
	}
	var list []string
	for _, name := range svcs {
		list = append(list, name+" "+strings.Join(held[name], ", "))
	}
	f.Alternatives = append([]string{fmt.Sprintf("no Service has NodePort %d, a port of the NodePort range: the "+
		"Services listed hold %s; kube-proxy writes no rule for %d and nothing listens there (a wrong port)", port,
		strings.Join(list, "; "), port)}, f.Alternatives...)
	f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: nodePorts[0].Pos, Note: "Services listed: no NodePort " +
		strconv.Itoa(int(port))})
	f.Decide = fmt.Sprintf("# every namespace's Services: no line, no Service has NodePort %d\nkubectl get svc -A | grep ':%d/'\n%s",
		port, port, f.Decide)
}

// runClientFailures reports the failed attempts of outcome o that only
// client transcripts tell.
func runClientFailures(p *analyzer.Pass, o model.Outcome, minAttempts int) {
	roles := facts.AddrRoles.Of(p)
	nodePorts := p.Snap.Kube.NodePorts()
	for _, g := range clientFailures(p.Snap, o) {
		if len(g.results) >= minAttempts {
			p.Report(clientFailFinding(g, o, roles, nodePorts))
		}
	}
}
