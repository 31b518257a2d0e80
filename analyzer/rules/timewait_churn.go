package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// TimeWaitChurn finds local clients that burn through ephemeral ports.
var TimeWaitChurn = &analyzer.Rule{
	Name:     "timewait-churn",
	Severity: analyzer.Error,
	Needs:    []model.Kind{model.KindSockets},
	Uses:     []model.Kind{model.KindSysctl, model.KindIPVS, model.KindKube, model.KindComponents},
	Requires: []analyzer.FactKey{facts.NodePortRange, facts.LocalPorts, facts.PortOwners},
	Params: []analyzer.Param{{Name: "min_timewait", Type: analyzer.Integer, Default: 50, Range: analyzer.AtLeast(1),
		Doc: "the fewest TIME-WAIT sockets of one client on a node that make a finding"}},
	SubjectKeys: []string{"node", "proto"},
	Run:         runTimeWaitChurn,
	Explains:    []*analyzer.Rule{SNATPortExhaustion},
	Symptoms:    []analyzer.SymptomRef{LoadBalancer502.At(70)},
	Plot: analyzer.Plot{
		Clients: []analyzer.Selector{analyzer.InFacts("clients")},
	},
	Proof: "the TIME-WAIT sockets of a local address (ss, netstat) and, for the NodePort harm, the ephemeral range " +
		"(sysctl) reaching NodePorts that IPVS or the Services show allocated",
	Unproven: "the churn from the socket listings, with the clients it can be (one client opening a connection per " +
		"request, many clients behind one address) and ss -tanpi to tell them apart",
	Doc: `a local client burns through ephemeral ports

Every TCP connection a host opens and closes first leaves a socket in
TIME-WAIT for 60 seconds on Linux. Many TIME-WAIT sockets from one local
address mean a client opening short connections at a high rate: about N/60
new connections a second for N sockets. At that rate the kernel walks the
whole ephemeral port range (net.ipv4.ip_local_port_range) in a predictable
time, and where that range overlaps the NodePort range, every allocated
NodePort in the overlap is drawn as a source port again and again (see
ephemeral-nodeport-overlap and synack-reset). Health checks (kubelet probes,
node-local-dns checking itself, monitoring agents) are the usual clients.
A server that closes first leaves its TIME-WAIT sockets on its listening
port instead (a port the listing shows listened on, or one several sockets
share): they hold no ephemeral port and are not counted.

Evidence: ss or netstat listings and counts of TIME-WAIT sockets per local
address (ss -tan | grep TIME-WAIT | awk ... | uniq -c), the sockets
themselves (which peers the client talks to), the sysctl range and the
NodePorts.

Severity: error when the churning client's range reaches allocated NodePorts
(sysctl and IPVS or Services join); warning otherwise. Parameter min_timewait
(default 50) is the count below which a client is not reported.

Fix: reserve the NodePort range (net.ipv4.ip_local_reserved_ports); make the
client reuse connections (HTTP keep-alive), or lower its check rate.`,
}

// timeWaitSeconds is how long Linux keeps a socket in TIME-WAIT.
const timeWaitSeconds = 60

func runTimeWaitChurn(p *analyzer.Pass) error {
	s := p.Snap
	type client struct {
		node  string
		addr  netip.Addr
		count int
		ev    []analyzer.Evidence
		peers map[string]int
	}
	var clients []*client
	byKey := map[string]*client{}
	get := func(node string, a netip.Addr) *client {
		k := node + "|" + a.String()
		c := byKey[k]
		if c == nil {
			c = &client{node: node, addr: a, peers: map[string]int{}}
			byKey[k] = c
			clients = append(clients, c)
		}
		return c
	}
	counted := map[string]bool{}
	for _, sc := range s.SockCounts {
		a := sc.Local
		if !a.IsValid() {
			a = sc.Addr
		}
		if sc.State != "TIME-WAIT" || !a.IsValid() {
			continue
		}
		c := get(sc.Node, a)
		c.count += sc.Count
		counted[sc.Node+"|"+a.String()] = true
		c.ev = append(c.ev, analyzer.Evidence{Pos: sc.Pos, Note: fmt.Sprintf("%d TIME-WAIT sockets from %s", sc.Count, a)})
	}
	server := serverSideTimeWait(s.Sockets)
	for _, so := range s.Sockets {
		if so.State != "TIME-WAIT" || !so.Local.IsValid() || server[so.Node+"|"+so.Local.String()] {
			continue
		}
		c := get(so.Node, so.Local.Addr())
		if !counted[so.Node+"|"+so.Local.Addr().String()] {
			c.count++
		}
		c.peers[so.Peer.String()]++
		if len(c.ev) < 4 {
			c.ev = append(c.ev, analyzer.Evidence{Pos: so.Pos, Note: fmt.Sprintf("TIME-WAIT %s -> %s", so.Local, so.Peer)})
		}
	}
	minTW := int(p.Param("min_timewait", 50))
	slices.SortStableFunc(clients, func(a, b *client) int { return b.count - a.count })
	np := facts.NodePortRange.Partly(p) // only an overlap with it rests on it
	// One finding per node, its clients busiest first.
	var nodes []string
	for _, c := range clients {
		if c.count >= minTW && !slices.Contains(nodes, c.node) {
			nodes = append(nodes, c.node)
		}
	}
	for _, node := range nodes {
		var (
			parts   []string
			ev      []analyzer.Evidence
			total   int
			details []string
		)
		for _, c := range clients {
			if c.node != node || c.count < minTW {
				continue
			}
			rate := float64(c.count) / timeWaitSeconds
			total += c.count
			parts = append(parts, fmt.Sprintf("%s (%d)", c.addr, c.count))
			d := fmt.Sprintf("%s: %d TIME-WAIT, ~%.1f connections/s", c.addr, c.count, rate)
			if self := selfConnections(c.addr, c.peers); self > 0 {
				d += fmt.Sprintf(", %d of the sockets listed connect back to %s itself (a local health check)", self, c.addr)
			}
			details = append(details, d)
			ev = append(ev, c.ev...)
		}
		t := &twChurn{node: node, parts: parts, details: details, total: total, ev: ev}
		f := judgeChurn(p, t, np)
		f.Title, f.Summary, f.Cause, f.Fix = churnWords(t)
		p.Report(f)
	}
	return nil
}

// twChurn is one node's local clients that open many short connections,
// and its judgement (judgeChurn): how fast they walk through the ephemeral
// range, and whether it reaches allocated NodePorts. churnWords words it.
type twChurn struct {
	node    string
	parts   []string // each client, with its sockets in TIME-WAIT
	details []string // each client's rate, and its connections to itself
	total   int
	ev      []analyzer.Evidence

	rate     float64         // new connections a second
	walks    bool            // the ephemeral range is shown
	eph      model.PortRange // that range
	wrap     time.Duration   // how long the clients take to walk through it
	overlaps bool            // it overlaps the NodePort range
	overlap  model.PortRange // there
	owned    int             // the allocated NodePorts in the overlap
}

// judgeChurn judges t against the node's ephemeral range and the NodePort
// range np. It fills in t and returns the finding without its words.
func judgeChurn(p *analyzer.Pass, t *twChurn, np facts.NodePorts) analyzer.Finding {
	node, ev := t.node, t.ev
	values := map[string]any{}
	t.rate = float64(t.total) / timeWaitSeconds
	values["clients"] = t.details
	values["timewait_sockets"] = t.total
	values["connections_per_s"] = fmt.Sprintf("%.1f", t.rate)
	if node != "" {
		values["node"] = node
	}
	sev := analyzer.Warning
	if lp := facts.LocalPorts.Of(p).Of(node); lp.HasRange {
		if lpr, eph := lp.PortRange, lp.Range; lp.RangeErr == nil {
			ev = append(ev, analyzer.Evidence{Pos: lpr.Pos, Note: "net.ipv4.ip_local_port_range = " + lpr.Value})
			t.walks, t.eph = true, eph
			t.wrap = time.Duration(float64(eph.Len())/t.rate) * time.Second
			values["ip_local_port_range"] = eph.String()
			values["range_cycle"] = t.wrap.Round(time.Second).String()
			if ov, ok := intersect(eph, np.Range); ok {
				var owned []uint16
				owners := facts.PortOwners.Of(p).On(node)
				for port := range owners {
					if ov.Contains(port) {
						owned = append(owned, port)
					}
				}
				slices.Sort(owned)
				t.overlaps, t.overlap, t.owned = true, ov, len(owned)
				values["nodeport_overlap"] = ov.String()
				if len(owned) > 0 {
					sev = analyzer.Error
					values["owned_ports_in_range"] = len(owned)
					for _, o := range owners[owned[0]] { // the lowest, as an example
						ev = append(ev, o.Evidence())
					}
				}
			}
		}
	}
	f := analyzer.Finding{
		Subject:   subject("node", node, "proto", "tcp"),
		Severity:  sev,
		Certainty: analyzer.Likely,
		Facts:     values,
		Evidence:  ev,
		Supports: []string{fmt.Sprintf("the socket listings: %d sockets in TIME-WAIT from %s, each a connection "+
			"closed in the last %d s", t.total, strings.Join(t.parts, ", "), timeWaitSeconds)},
		Contradicts: []string{"many clients sharing one address (SNAT, a node-local proxy) would show the same counts " +
			"without any one of them churning"},
		Alternatives: []string{"a local client opens a new connection per request or check (health checks, monitoring agents)",
			"many clients share the address (SNAT, a proxy), each opening few connections"},
		Decide: collected("ss-tanpi", "the processes holding connections from the address, and their peers"),
	}
	if t.overlaps {
		facts.NodePortRange.RestsOn(p, &f)
	}
	if sev == analyzer.Error {
		f.Certainty = analyzer.Proven
		f.Supports = append(f.Supports, fmt.Sprintf("the sysctl range reaches %s, where the bundle lists %d allocated NodePorts",
			values["nodeport_overlap"], values["owned_ports_in_range"]))
	}
	return f
}

// churnWords words the finding of t, as judgeChurn judged it.
func churnWords(t *twChurn) (title, summary, cause, fix string) {
	summary = fmt.Sprintf("Local clients hold %d sockets in TIME-WAIT: about %.1f new connections a second, each "+
		"on a new ephemeral source port. By client: %s.", t.total, t.rate, strings.Join(t.details, "; "))
	if t.walks {
		summary += fmt.Sprintf(" Together they walk through the ephemeral range %s (%d ports) every %s.",
			t.eph, t.eph.Len(), t.wrap.Round(time.Second))
	}
	if t.overlaps {
		summary += fmt.Sprintf(" The range overlaps the NodePort range %s", t.overlap)
		if t.owned > 0 {
			summary += fmt.Sprintf(", where %d allocated NodePorts are drawn as source ports on every pass: "+
				"each such connection fails (see synack-reset).", t.owned)
		} else {
			summary += "."
		}
	}
	title = fmt.Sprintf("local clients open ~%.0f connections/s: %s in TIME-WAIT", t.rate, strings.Join(t.parts, ", "))
	cause = "Local clients open a new short connection for each request or check instead of reusing one; " +
		"health checks and monitoring agents do this."
	fix = "Reserve the NodePort range in net.ipv4.ip_local_reserved_ports so no churn can land on it; make the " +
		"clients keep connections alive, or check less often."
	return title, summary, cause, fix
}

// serverSideMin is how many TIME-WAIT sockets sharing one local address
// and port show a server's side: a client's connections each take an
// ephemeral port of their own.
const serverSideMin = 3

// serverSideTimeWait returns the local "node|address:port" of TIME-WAIT
// sockets left by a server that closed first: a port the node listens on,
// or one held by serverSideMin sockets or more. They are the server's
// side of connections remote clients opened, and use no ephemeral port.
func serverSideTimeWait(sockets []model.Socket) map[string]bool {
	listening := map[string]bool{} // node|port
	held := map[string]int{}
	for _, so := range sockets {
		switch {
		case so.State == "LISTEN" && so.Local.IsValid():
			listening[fmt.Sprintf("%s|%d", so.Node, so.Local.Port())] = true
		case so.State == "TIME-WAIT" && so.Local.IsValid():
			held[so.Node+"|"+so.Local.String()]++
		}
	}
	out := map[string]bool{}
	for _, so := range sockets {
		if so.State != "TIME-WAIT" || !so.Local.IsValid() {
			continue
		}
		k := so.Node + "|" + so.Local.String()
		if held[k] >= serverSideMin || listening[fmt.Sprintf("%s|%d", so.Node, so.Local.Port())] {
			out[k] = true
		}
	}
	return out
}

func selfConnections(a netip.Addr, peers map[string]int) int {
	n := 0
	for pr, c := range peers {
		if ap, err := netip.ParseAddrPort(pr); err == nil && ap.Addr() == a {
			n += c
		}
	}
	return n
}
