package rules

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// NodePortHeldByProcess finds a NodePort that a socket of another process
// than kube-proxy holds on a node.
var NodePortHeldByProcess = &analyzer.Rule{
	Name:        "nodeport-held-by-process",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindKube, model.KindNetfilter, model.KindLogs},
	Uses:        []model.Kind{model.KindSockets},
	SubjectKeys: []string{"port", "proto"},
	Run:         runNodePortHeldByProcess,
	FollowsFrom: []*analyzer.Rule{EphemeralNodePortOverlap},
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(280)},
	Proof: "a NodePort (a Service's nodePort, kube-proxy's REJECT rule of it or its failure to open it) and the " +
		"node's listening sockets (ss -lntup, netstat -lntup) showing a process other than kube-proxy on that port",
	Unproven: "kube-proxy's line that it cannot open the NodePort (bind: address already in use) alone is likely, " +
		"with the ss command on the port that names the holder; its REJECT of a NodePort without endpoints alone is " +
		"unknown (nothing may listen there); silent when the sockets show kube-proxy itself holding the port, or " +
		"nothing listening behind a REJECT",
	Doc: `a NodePort is held by another process on the node

A NodePort is the same port on every node, and kube-proxy opens (binds) it
on each node to keep it from other programs. When a host process already
listens on it (haproxy, a node exporter, a hand-started server: ss -lntp or
netstat -lntup name it), kube-proxy logs that it cannot open the port
("can't open "nodePort for ns/svc:port" (:45102/tcp), skipping this
nodePort: listen tcp :45102: bind: address already in use") and, before
1.23, writes no rule for it there; the Service's traffic to that node goes
to the process, or is refused. While the Service has no endpoints,
kube-proxy's REJECT of the port on every local address ("-m addrtype
--dst-type LOCAL --dport N -j REJECT", "has no endpoints") refuses the host
process's clients too.

Evidence: the Services' nodePorts, kube-proxy's REJECT rules and its log,
and the node's listening sockets with their processes.

Severity: error when the node's sockets show a process other than
kube-proxy holding the NodePort (proven); a warning of likely cause from
kube-proxy's bind failure alone, with the ss command on the port; a warning
of unknown cause from a REJECT alone. Nothing when the sockets show
kube-proxy itself holding the port (a kube-proxy that opened it twice,
kubernetes#107297) or nothing listening behind a REJECT.

Fix: move the host process off the NodePort range (or give the Service
another nodePort), and keep the range out of the ports host processes and
outbound connections use (net.ipv4.ip_local_port_range,
net.ipv4.ip_local_reserved_ports).`,
}

func runNodePortHeldByProcess(p *analyzer.Pass) error {
	s := p.Snap
	byPort := map[string]bool{}
	reported := map[string]bool{}
	for _, np := range s.Kube.NodePorts() {
		k := fmt.Sprintf("%d/%s", np.Port, np.Protocol)
		if byPort[k] {
			continue
		}
		byPort[k] = true
		if f, ok := judgeServiceListener(s, np); ok {
			p.Report(f)
			reported[k] = true
		}
	}
	for _, g := range portSignals(s) {
		k := fmt.Sprintf("%d/%s", g.port, g.proto)
		if byPort[k] && !g.bind || reported[k] {
			continue // a Service's port: judged from the Service above
		}
		if f, ok := judgePortSignal(s, g); ok {
			f.Title, f.Summary, f.Cause, f.Fix = portSignalWords(g)
			p.Report(f)
			reported[k] = true
		}
	}
	return nil
}

// sockProto is a socket's protocol as a Service names it: TCP, UDP, SCTP
// (tcp6 is TCP).
func sockProto(p string) string {
	return strings.TrimSuffix(strings.ToUpper(p), "6")
}

// judgeServiceListener judges a Service's nodePort against the listening
// sockets of the nodes: proven held when a process other than kube-proxy
// listens on it.
func judgeServiceListener(s *model.Snapshot, np model.NodePort) (analyzer.Finding, bool) {
	svc := objectName(np.Namespace, np.Service)
	for i := range s.Sockets {
		so := &s.Sockets[i]
		if so.State != "LISTEN" && so.State != "UNCONN" || so.Local.Port() != np.Port ||
			!strings.EqualFold(sockProto(so.Proto), np.Protocol) || so.MatchesProcess("kube-proxy") {
			continue
		}
		who := cmp.Or(so.Process, "a process")
		return analyzer.Finding{
			Subject:   subject("port", fmt.Sprint(np.Port), "proto", strings.ToLower(np.Protocol)),
			Severity:  analyzer.Error,
			Certainty: analyzer.Proven,
			Supports: []string{fmt.Sprintf("%s: %s listens on %s on %s, the NodePort of %s (%s)", so.Pos, who,
				so.Local, nodeName(so.Node), svc, np.Pos)},
			Facts: map[string]any{"nodeport": fmt.Sprintf("%d/%s", np.Port, np.Protocol), "service": svc,
				"claimed_by": who},
			Evidence: []analyzer.Evidence{
				{Pos: np.Pos, Note: fmt.Sprintf("NodePort %d/%s of Service %s", np.Port, np.Protocol, svc)},
				{Pos: so.Pos, Note: fmt.Sprintf("%s listens on %s", who, so.Local)},
			},
			Title: fmt.Sprintf("NodePort %d/%s of %s is also claimed by %s listening on %s on %s", np.Port,
				np.Protocol, svc, who, so.Local, nodeName(so.Node)),
			Summary: fmt.Sprintf("%s listens on %s on %s, the NodePort %d/%s of Service %s: kube-proxy cannot open "+
				"the port there, and the Service's traffic to that node goes to %s or is refused.", who, so.Local,
				nodeName(so.Node), np.Port, np.Protocol, svc, who),
			Cause: "A host process listens on a port of the NodePort range that a Service also holds: ports chosen " +
				"by hand for the process or the Service, without regard for the NodePort range.",
			Fix: "Move the host process off the NodePort range (or give the Service another nodePort), and keep the " +
				"range out of the ports host processes use.",
		}, true
	}
	return analyzer.Finding{}, false
}

// noEndpointsRe reads kube-proxy's comment on the REJECT rule of a Service
// port without endpoints: "default/traefik:http has no endpoints".
var noEndpointsRe = lazyre.New(`^(\S+) has no endpoints$`)

// nodePortBindRe reads kube-proxy's own line when it cannot open (bind) a
// NodePort: "can't open "nodePort for ns/svc:port" (:45102/tcp), skipping
// this nodePort: listen tcp :45102: bind: address already in use", and the
// structured form of later releases ("can't open port, skipping it"
// err="listen tcp4 :30619: bind: address already in use" port={...}).
var nodePortBindRe = lazyre.New(`(?i)can't open (?:"nodePort for [^"]*"|port)[\s\S]*?listen (tcp|udp|sctp)[46]? [^\s:]*:(\d{1,5}): bind: address already in use`)

// nodePortServiceRe finds the Service port a bind failure names.
var nodePortServiceRe = lazyre.New(`nodePort for ([^"\\\s]+)`)

// portSignal is one NodePort a node's own evidence shows contended without
// the Services: kube-proxy's REJECT of it on every local address (its
// Service has no endpoints; bind false), or kube-proxy's failures to open
// it (bind: address already in use); and the socket of another process
// the node's sockets show holding it.
type portSignal struct {
	port                 uint16
	proto, service, node string // proto TCP, UDP, SCTP; the Service port as named
	bind                 bool
	pos                  []model.Pos
	holder               *model.Socket
}

// portSignals lists the REJECT rules and the bind failures, once per node
// and port, each bind failure with the lines that repeat it.
func portSignals(s *model.Snapshot) []*portSignal {
	var out []*portSignal
	byKey := map[string]*portSignal{}
	add := func(bind bool, node, proto, port, service string, pos model.Pos) {
		n, err := strconv.ParseUint(port, 10, 16)
		proto = strings.ToUpper(proto)
		key := fmt.Sprintf("%t|%s|%s/%s", bind, node, port, proto)
		if err != nil || n == 0 || proto != "TCP" && proto != "UDP" && proto != "SCTP" {
			return
		}
		if g := byKey[key]; g != nil {
			g.pos = append(g.pos, pos)
			return
		}
		byKey[key] = &portSignal{port: uint16(n), proto: proto, service: service, node: node, bind: bind, pos: []model.Pos{pos}}
		out = append(out, byKey[key])
	}
	for _, rs := range s.Netfilter {
		for _, t := range rs.Tables {
			for _, c := range t.Chains {
				for _, r := range c.Rules {
					m := noEndpointsRe.FindStringSubmatch(strings.TrimSpace(r.Comment))
					if m != nil && r.Target == "REJECT" && strings.EqualFold(r.DstType, "LOCAL") && !r.NotDPort {
						add(false, rs.Node, r.Proto, r.DPort, m[1], r.Pos)
					}
				}
			}
		}
	}
	for i := range s.Logs {
		le := &s.Logs[i]
		msg := le.Message
		for _, k := range slices.Sorted(maps.Keys(le.Fields)) {
			msg += " " + k + "=" + le.Fields[k]
		}
		if m := nodePortBindRe.FindStringSubmatch(msg); m != nil && (facts.IsKubeProxyLog(le) || strings.Contains(msg, "nodePort for ")) {
			svc := ""
			if sm := nodePortServiceRe.FindStringSubmatch(msg); sm != nil {
				svc = strings.TrimSuffix(sm[1], ":") // "default/nginx:", a port without a name
			}
			add(true, le.Node, m[1], m[2], svc, le.Pos)
		}
	}
	return out
}

// judgePortSignal judges g: proven claimed twice when the node's sockets
// show another process holding the port (listening on it, for a REJECT);
// nothing when they show kube-proxy itself holding it (it opened the port
// twice, kubernetes#107297) or, for a REJECT, nothing on it. Without the
// sockets, kube-proxy's bind failure is likely, a REJECT unknown (it only
// says the Service has no endpoints). It fills in g.holder.
func judgePortSignal(s *model.Snapshot, g *portSignal) (analyzer.Finding, bool) {
	svc, what := cmp.Or(g.service, "a Service"), fmt.Sprintf("kube-proxy rejects %d/%s on every local address", g.port, g.proto)
	if g.bind {
		what = fmt.Sprintf("kube-proxy cannot open NodePort %d/%s: address already in use", g.port, g.proto)
	}
	f := analyzer.Finding{
		Subject:   subject("port", fmt.Sprint(g.port), "proto", strings.ToLower(g.proto)),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Supports:  []string{fmt.Sprintf("%s: %s (%s)", g.pos[0], what, svc)},
		Facts:     map[string]any{"nodeport": fmt.Sprintf("%d/%s", g.port, g.proto), "service": svc},
	}
	for i, pos := range g.pos {
		if i < 3 || i == len(g.pos)-1 {
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: pos, Note: what})
		}
	}
	if g.bind {
		f.Facts["bind_failures"] = len(g.pos)
	}
	own := false
	for i := range s.Sockets {
		so := &s.Sockets[i]
		if so.Local.Port() != g.port || !strings.EqualFold(sockProto(so.Proto), g.proto) ||
			(g.node != "" && so.Node != "" && so.Node != g.node) || !g.bind && so.State != "LISTEN" && so.State != "UNCONN" {
			continue
		}
		if so.MatchesProcess("kube-proxy") {
			own = true
			continue
		}
		g.holder = so
		who := cmp.Or(so.Process, "a process")
		f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s holds %s (%s)", so.Pos, who, so.Local, so.State))
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: so.Pos, Note: fmt.Sprintf("%s holds %s", who, so.Local)})
		f.Facts["claimed_by"] = who
		return f, true
	}
	switch {
	case own || !g.bind && s.Has(model.KindSockets):
		return f, false // kube-proxy's own socket, or nothing listening: the Service only has no endpoints
	case s.Has(model.KindSockets):
		f.Contradicts = []string{"the node's sockets in the bundle show nothing on the port: the holder may have gone since"}
	case !g.bind:
		f.Certainty = analyzer.Unknown
		f.Contradicts = []string{"no listening sockets of the node in the bundle: whether a host process listens on " +
			"the port is not shown"}
	}
	f.Alternatives = []string{
		"kube-proxy itself holds the port from an earlier open (a kube-proxy that opens each NodePort twice, " +
			"kubernetes#107297): the NodePort works",
		"an outbound connection's source port holds it: the NodePort range overlaps net.ipv4.ip_local_port_range",
	}
	f.Decide = fmt.Sprintf("# on %s\nss -anp '( sport = :%d )'; sysctl net.ipv4.ip_local_port_range", cmp.Or(g.node, "the node"), g.port)
	if !g.bind {
		f.Alternatives = []string{fmt.Sprintf("nothing else listens on %d: the rule only says %s has no endpoints, and "+
			"connections to the NodePort are refused until it has some", g.port, svc)}
		f.Decide = fmt.Sprintf("ss -lnp 'sport = :%d'; kubectl get svc -A | grep %d", g.port, g.port)
	}
	return f, true
}

// portSignalWords words the finding of g.
func portSignalWords(g *portSignal) (title, summary, cause, fix string) {
	svc, where := cmp.Or(g.service, "its Service"), ""
	if g.node != "" {
		where = " on " + g.node
	}
	title = fmt.Sprintf("NodePort %d/%s of %s has no endpoints: kube-proxy refuses the port on every local address",
		g.port, g.proto, svc)
	summary = fmt.Sprintf("kube-proxy rejects %d/%s on every address of the node (ICMP port unreachable) because %s "+
		"has no endpoints: a host process listening on the same port is refused too.", g.port, g.proto, svc)
	cause = "A host process listens on a port of the NodePort range that a Service also holds; while the Service " +
		"has no endpoints, kube-proxy's REJECT rule refuses every connection to that port on the node."
	fix = "Move the host process off the NodePort range (or give the Service another nodePort), and keep the " +
		"range out of the ports host processes use."
	if g.bind {
		title = fmt.Sprintf("NodePort %d/%s of %s is held by another socket%s: kube-proxy cannot open it", g.port, g.proto,
			svc, where)
		times := fmt.Sprintf("%d times", len(g.pos))
		if len(g.pos) == 1 {
			times = "once"
		}
		summary = fmt.Sprintf("kube-proxy%s logs %s that it cannot open NodePort %d/%s (bind: address already in "+
			"use) and skips it: another socket holds the port, and the NodePort may not work there (releases before "+
			"1.23 write no rule for a port they cannot open).", where, times, g.port, g.proto)
		cause = "Another socket of the node holds the NodePort: a host process listening on it, or an outbound " +
			"connection whose source port the kernel took from a range that overlaps the NodePort range."
		fix = "Find the holder (ss -anp on the port) and move it off the NodePort range; keep the range out of " +
			"net.ipv4.ip_local_port_range (or list it in net.ipv4.ip_local_reserved_ports)."
	}
	if g.holder != nil {
		title = fmt.Sprintf("NodePort %d/%s of %s is also claimed by %s listening on %s", g.port, g.proto, svc,
			cmp.Or(g.holder.Process, "a process"), g.holder.Local)
	}
	return title, summary, cause, fix
}
