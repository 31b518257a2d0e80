package rules

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// PortInUse finds components that cannot listen on their port because
// another socket of the node holds it.
var PortInUse = &analyzer.Rule{
	Name:        "port-in-use",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindSockets},
	SubjectKeys: []string{"node", "component", "port"},
	Run:         runPortInUse,
	Symptoms:    []analyzer.SymptomRef{DNSTimeouts.At(98), ProbesTimeOut.At(60)},
	Proof: "the component's own line that its listen failed (\"listen tcp 169.254.20.20:8080: bind: address " +
		"already in use\", nginx's \"bind() to 0.0.0.0:80 failed (98: Address already in use)\") and the node's " +
		"listening sockets (ss -lntp, netstat -lntp) naming the process that holds the port",
	Unproven: "from the component's line alone, which process holds the port; `ss -lntp 'sport = :PORT'` on the " +
		"node names it",
	Doc: `a component cannot listen: another process holds its port

A component of the host's network (hostNetwork: NodeLocal DNSCache,
an Ingress controller, a load balancer's speaker, a node agent) listens
on the node's own addresses, where every other host process listens
too. When one already holds the port, the bind fails ("listen tcp
169.254.20.20:8080: bind: address already in use", nginx's "bind() to
0.0.0.0:80 failed (98: Address already in use)"), the component exits
and restarts, or runs without that listener: a health port missing fails
its probes, a DNS cache missing leaves its clients timing out.

Evidence: the components' lines, per node, component and port (not
kube-proxy's NodePort lines: nodeport-held-by-process reads those), and
the node's listening sockets, whose process holds the port on that
address or on every address.

Severity: an error when the node's sockets show another process holding
the port (proven); a warning of likely cause from the line alone.

Fix: move one of them: the component's port (its flag, its chart's
value) or the other process's; two host-network programs cannot share a
port on the same address.`,
}

var (
	// portGoBindRe is Go's failure to listen: the address and port.
	portGoBindRe = lazyre.New(`\blisten (tcp|udp)[46]? (\S*?):(\d+): bind: address already in use`)
	// portNginxBindRe is nginx's failure to listen.
	portNginxBindRe = lazyre.New(`\bbind\(\) to (\S+?):(\d+) failed \(98: Address already in use\)`)
)

// portBindFail is one component's failures to listen on one port.
type portBindFail struct {
	node, comp string
	proto      string
	addr       netip.Addr // invalid for every address
	port       uint16
	lineRun
}

func runPortInUse(p *analyzer.Pass) error {
	var groups []*portBindFail
	byKey := map[string]*portBindFail{}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		text := logText(le)
		if facts.IsKubeProxyLog(le) || strings.Contains(strings.ToLower(text), "nodeport") {
			continue // nodeport-held-by-process reads kube-proxy's
		}
		proto, host, port, ok := portBindFailure(text)
		if !ok {
			continue
		}
		comp := subjectComponent(le.Source, le.Pos.File)
		k := le.Node + "\x00" + comp + "\x00" + proto + strconv.Itoa(int(port))
		g := byKey[k]
		if g == nil {
			a, _ := netip.ParseAddr(strings.Trim(host, "[]"))
			g = &portBindFail{node: le.Node, comp: comp, proto: proto, addr: a.Unmap(), port: port}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.add(le)
	}
	for _, g := range groups {
		p.Report(portInUseFinding(g, portHolder(p.Snap, g)))
	}
	return nil
}

// portBindFailure reads a failed listen: its protocol, address (as
// printed, "" or "0.0.0.0" for every address) and port.
func portBindFailure(text string) (proto, host string, port uint16, ok bool) {
	if m := portGoBindRe.FindStringSubmatch(text); m != nil {
		n, err := strconv.ParseUint(m[3], 10, 16)
		return m[1], m[2], uint16(n), err == nil
	}
	if m := portNginxBindRe.FindStringSubmatch(text); m != nil {
		n, err := strconv.ParseUint(m[2], 10, 16)
		return "tcp", m[1], uint16(n), err == nil
	}
	return "", "", 0, false
}

// portHolder returns a listening socket of g's node that holds g's port
// where g's listen asked for it (the same address, or every address on
// either side), of a process not g's component; nil when the sockets show
// none.
func portHolder(s *model.Snapshot, g *portBindFail) *model.Socket {
	for i := range s.Sockets {
		so := &s.Sockets[i]
		if g.node != "" && so.Node != "" && so.Node != g.node || so.Local.Port() != g.port ||
			!strings.HasPrefix(so.Proto, g.proto) || g.proto == "tcp" && so.State != "LISTEN" {
			continue
		}
		la := so.Local.Addr().Unmap()
		if g.addr.IsValid() && !g.addr.IsUnspecified() && !la.IsUnspecified() && la != g.addr {
			continue
		}
		if so.Process != "" && strings.Contains(strings.ToLower(g.comp), strings.ToLower(so.Process)) {
			continue // the component's own socket (an earlier run of it)
		}
		return so
	}
	return nil
}

// portInUseFinding judges one component's failures, with the socket that
// holds the port when the node's listing shows it.
func portInUseFinding(g *portBindFail, holder *model.Socket) analyzer.Finding {
	on := onNode(g.node)
	where := fmt.Sprintf(":%d", g.port)
	if g.addr.IsValid() && !g.addr.IsUnspecified() {
		where = netip.AddrPortFrom(g.addr, g.port).String()
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "component", g.comp, "port", fmt.Sprintf("%d/%s", g.port, g.proto)),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title:     fmt.Sprintf("%s%s cannot listen on %s/%s: the port is taken", g.comp, on, where, g.proto),
		Summary: fmt.Sprintf("%s%s fails to listen on %s (%s): another socket of the node holds the port, so the "+
			"component exits or runs without that listener.", g.comp, on, where, times(g.count)),
		Cause: fmt.Sprintf("Another process of the node (or of its network namespace) listens on port %d/%s where "+
			"%s asks for it.", g.port, g.proto, g.comp),
		Alternatives: []string{"an earlier run of the component itself still holds the port (a process that did " +
			"not exit, a second replica on a hostNetwork node)"},
		Fix: fmt.Sprintf("Move %s or the other process to another port (the component's flag or chart value), so "+
			"that no two host-network programs share %d/%s.", g.comp, g.port, g.proto),
		Decide: fmt.Sprintf("# on %s: which process listens on the port\nss -lntup 'sport = :%d'", nodeName(g.node),
			g.port),
		Facts:    map[string]any{"component": g.comp, "port": g.port, "proto": g.proto, "lines": g.count},
		Evidence: g.evidence(fmt.Sprintf("bind %s: address already in use", where), "the last such line"),
		Supports: []string{fmt.Sprintf("%s: %s: %s", g.first.Pos, g.comp, firstLine(g.first.Message))},
	}
	if holder == nil {
		return f
	}
	who := holder.Process
	if who == "" {
		who = "a process the listing does not name"
	}
	f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
	f.Alternatives, f.Decide = nil, ""
	f.Title = fmt.Sprintf("%s%s cannot listen on %s/%s: %s holds the port", g.comp, on, where, g.proto, who)
	f.Cause = fmt.Sprintf("%s listens on %s, which covers %s: %s's listen on the same port fails.", who,
		holder.Local, where, g.comp)
	f.Fix = fmt.Sprintf("Move %s or %s to another port (the component's flag or chart value).", g.comp, who)
	f.Facts["holder"] = who
	f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: holder.Pos, Note: fmt.Sprintf("%s listens on %s", who, holder.Local)})
	f.Supports = append(f.Supports, fmt.Sprintf("%s: %s listens on %s", holder.Pos, who, holder.Local))
	return f
}
