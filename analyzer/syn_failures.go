package analyzer

import (
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/model"
)

// SynUnanswered finds server endpoints whose SYNs get no answer at all.
var SynUnanswered = &Rule{
	Name:     "syn-unanswered",
	Severity: Error,
	Needs:    []model.Kind{model.KindCapture},
	Uses:     []model.Kind{model.KindKube},
	Run:      func(p *Pass) error { return runSynFailures(p, model.OutcomeUnanswered) },
	Doc: `connection attempts to a server endpoint get no answer

In a capture, clients send SYNs (and retransmit them) to a server endpoint
and nothing comes back: no SYN/ACK, no RST, no ICMP error. The application
sees a connect timeout after about 1, 3, 7, 15 ... seconds of retransmissions.
Attempts answered by an ICMP error are left to icmp-unreachable. When one
host fails this way on many ports that no Service or endpoint names
(scan_ports, default 10), they are told in one finding listing the ports: a
port scan, or a host (a Node) down or firewalled. Likewise many hosts that no
Kubernetes object names failing on one port (sweep_hosts, default 10): a
client with a list of targets that are gone.

Evidence: the capture's SYN frames, grouped per server endpoint; the
Kubernetes objects that say what the endpoint is (a Service's ClusterIP or
LoadBalancer IP, a ready endpoint, a Pod IP).

Severity: error when the Services or Endpoints say the endpoint should answer
(a Service address or a ready endpoint); warning from the capture alone,
since a capture taken on one side of a path, or filtered, may miss replies.
Captures whose command filters on TCP flags (tcpdump 'tcp[tcpflags] ...') are
not judged.

Fix: find where the SYNs are lost: is the backend up and listening (ss -lnt
on its node), does a firewall or NetworkPolicy drop them, does the dataplane
still DNAT to an address that no longer exists (see stale-dnat)?`,
}

// SynRefused finds server endpoints that refuse connections with an RST.
var SynRefused = &Rule{
	Name:     "syn-refused",
	Severity: Error,
	Needs:    []model.Kind{model.KindCapture},
	Uses:     []model.Kind{model.KindKube},
	Run:      func(p *Pass) error { return runSynFailures(p, model.OutcomeRefused) },
	Doc: `connection attempts to a server endpoint are refused

In a capture, the server answers SYNs with an RST: nothing listens on that
port on that host, or a firewall rejects the connection with a TCP reset
(iptables REJECT --reject-with tcp-reset). The application sees "connection
refused" at once. When one host refuses on many ports that no Service or
endpoint names (scan_ports, default 10), they are told in one finding listing
the ports, as a port scan finds most ports closed; many hosts refusing one
port (sweep_hosts, default 10) likewise.

Evidence: the capture's SYN and RST frames per server endpoint; the
Kubernetes objects that say what the endpoint is.

Severity: error when the Services or Endpoints say the endpoint should answer;
warning from the capture alone.

Fix: check the process on the backend listens on that address and port (ss
-lntp), that the Service's targetPort matches the container port, and that no
REJECT rule matches.`,
}

// maxGroupEvidence bounds how many attempts of a group are cited frame by frame.
const maxGroupEvidence = 5

// failGroup gathers the failed attempts to one server endpoint seen on one
// node.
type failGroup struct {
	node     string
	srv      netip.AddrPort
	attempts []*model.Attempt // kept one by one
	n        int              // with those counted only (summary mode)
	clients  []string
	seen     map[string]bool
	more     bool // clients beyond those listed
	retx     int
	first    time.Time
	last     time.Time
	spanned  bool // first and last are set
	scan     bool // reported with the other ports of its host
	// hostPorts are the ports of a host's counters (srv's port is 0): a
	// capture read in summary mode counted a scan's later ports together.
	hostPorts []uint16
}

func (g *failGroup) addClient(c string) {
	if !g.seen[c] {
		g.seen[c] = true
		g.clients = append(g.clients, c)
	}
}

func (g *failGroup) span(first, last time.Time) {
	// Times of pasted text count from year 0, before the zero Time: the
	// first span sets both ends.
	if !g.spanned || first.Before(g.first) {
		g.first = first
	}
	if !g.spanned || last.After(g.last) {
		g.last = last
	}
	g.spanned = true
}

// scanGroup gathers the failing ports of one host that no evidence says
// anything of: many of them at once is a port scan (or a host down or
// firewalled), better told once than port by port.
type scanGroup struct {
	failGroup
	ports []uint16
	parts []*failGroup
}

// scanGroups merges the groups of each host (per node) that fail on at
// least minPorts ports, leaving out ports whose endpoint the Kubernetes
// objects name (a Service port, an endpoint: those are reported on their
// own), and marks the groups merged.
func scanGroups(groups []*failGroup, roles map[netip.Addr][]addrRole, minPorts int) []*scanGroup {
	if minPorts < 2 {
		minPorts = math.MaxInt // only what a capture counted as a scan
	}
	type hostKey struct {
		node string
		addr netip.Addr
	}
	var order []hostKey
	byHost := map[hostKey][]*failGroup{}
	counted := map[hostKey]bool{} // hosts whose ports were counted together: scans
	for _, g := range groups {
		if g.srv.Port() != 0 && portRole(rolesOf(roles, g.srv.Addr(), g.srv.Port())) {
			continue
		}
		k := hostKey{g.node, g.srv.Addr()}
		if byHost[k] == nil {
			order = append(order, k)
		}
		byHost[k] = append(byHost[k], g)
		if g.srv.Port() == 0 {
			counted[k] = true
		}
	}
	var out []*scanGroup
	for _, k := range order {
		gs := byHost[k]
		ports := map[uint16]bool{}
		for _, g := range gs {
			if g.srv.Port() == 0 {
				for _, pt := range g.hostPorts {
					ports[pt] = true
				}
			} else {
				ports[g.srv.Port()] = true
			}
		}
		if len(ports) < minPorts && !counted[k] {
			continue
		}
		sc := mergeGroups(k.node, netip.AddrPortFrom(k.addr, 0), gs)
		sc.ports = slices.Sorted(maps.Keys(ports))
		out = append(out, sc)
	}
	return out
}

// sweepGroups merges, per node and port, the groups of hosts that fail on
// that one port, when at least minHosts do and nothing in the Kubernetes
// objects names them: a client trying one port across many hosts (a
// monitoring job scraping targets that are gone, a sweep). Groups already
// told with their host's other ports are left out; the groups merged are
// marked.
func sweepGroups(groups []*failGroup, roles map[netip.Addr][]addrRole, minHosts int) []*scanGroup {
	if minHosts < 2 {
		return nil
	}
	type portKey struct {
		node string
		port uint16
	}
	var order []portKey
	byPort := map[portKey][]*failGroup{}
	for _, g := range groups {
		if g.scan || g.srv.Port() == 0 || len(rolesOf(roles, g.srv.Addr(), g.srv.Port())) > 0 {
			continue
		}
		k := portKey{g.node, g.srv.Port()}
		if byPort[k] == nil {
			order = append(order, k)
		}
		byPort[k] = append(byPort[k], g)
	}
	var out []*scanGroup
	for _, k := range order {
		gs := byPort[k]
		if len(gs) < minHosts {
			continue
		}
		out = append(out, mergeGroups(k.node, netip.AddrPortFrom(netip.Addr{}, k.port), gs))
	}
	return out
}

// mergeGroups joins the groups of a scan or a sweep, marking them merged.
func mergeGroups(node string, srv netip.AddrPort, gs []*failGroup) *scanGroup {
	m := &scanGroup{failGroup: failGroup{node: node, srv: srv, seen: map[string]bool{}}, parts: gs}
	for _, g := range gs {
		g.scan = true
		m.n += g.n
		m.retx += g.retx
		m.more = m.more || g.more
		for _, c := range g.clients {
			m.addClient(c)
		}
		m.span(g.first, g.last)
	}
	return m
}

// partsEvidence cites the first attempt kept of each merged group, up to
// maxGroupEvidence of them, and counts the attempts kept.
func (m *scanGroup) partsEvidence() ([]Evidence, int) {
	kept := 0
	var ev []Evidence
	for _, g := range m.parts {
		kept += len(g.attempts)
		if len(ev) >= maxGroupEvidence || len(g.attempts) == 0 {
			continue
		}
		a := g.attempts[0]
		if len(a.SYN) > 0 {
			ev = append(ev, Evidence{Pos: a.SegPos(a.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s", a.Client, a.Server)})
		}
		if len(a.ServerRST) > 0 {
			ev = append(ev, Evidence{Pos: a.SegPos(a.ServerRST[0]), Note: fmt.Sprintf("RST %s -> %s", a.Server, a.Client)})
		}
	}
	return ev, kept
}

// maxListedHosts bounds how many hosts a sweep finding lists.
const maxListedHosts = 20

func sweepFinding(sw *scanGroup, outcome model.Outcome) Finding {
	port := sw.srv.Port()
	var hosts []string
	for _, g := range sw.parts {
		hosts = append(hosts, g.srv.Addr().String())
	}
	ev, kept := sw.partsEvidence()
	listed := listUpTo(hosts, maxListedHosts, false)
	facts := map[string]any{
		"port":      int(port),
		"hosts":     len(hosts),
		"host_list": listed,
		"attempts":  sw.n,
		"clients":   sw.clients,
		"first":     sw.first.Format(time.RFC3339Nano),
		"last":      sw.last.Format(time.RFC3339Nano),
	}
	if kept < sw.n {
		facts["attempts_kept"] = kept
	}
	if sw.node != "" {
		facts["node"] = sw.node
	}
	clients := listSome(sw.clients, sw.more)
	attempts := plural(sw.n, "attempt", "attempts")
	f := Finding{Severity: Warning, Facts: facts, Evidence: ev, Sources: []model.Kind{model.KindCapture}}
	switch outcome {
	case model.OutcomeUnanswered:
		facts["syn_retransmissions"] = sw.retx
		f.Title = fmt.Sprintf("%d hosts do not answer on port %d: %d connection %s from %s got no reply", len(hosts), port,
			sw.n, attempts, clients)
		f.Summary = fmt.Sprintf("%d connection %s to port %d of %d hosts (%s) got neither a SYN/ACK nor an RST nor an ICMP "+
			"error, with %d SYN %s. One port tried across many hosts is a client with a list of targets: a monitoring job "+
			"scraping Pods that are gone, a client with stale endpoints, or a sweep.", sw.n, attempts, port, len(hosts), listed,
			sw.retx, plural(sw.retx, "retransmission", "retransmissions"))
		f.Cause = "The hosts are gone, down, or behind a firewall that drops, and the client still has them in its list."
		f.Fix = fmt.Sprintf("Find where %s takes its targets from (a scrape configuration, a service discovery, a stale "+
			"cache) and whether those hosts should exist.", clients)
	case model.OutcomeRefused:
		f.Title = fmt.Sprintf("%d hosts refuse connections on port %d: %d %s answered with an RST", len(hosts), port, sw.n, attempts)
		f.Summary = fmt.Sprintf("%d connection %s from %s to port %d of %d hosts (%s) %s answered with an RST: nothing listens "+
			"on that port on those hosts.", sw.n, attempts, clients, port, len(hosts), listed, plural(sw.n, "was", "were"))
		f.Cause = "The hosts are up but nothing listens on the port: the service is not deployed or not running there, " +
			"or a firewall rejects the connections."
		f.Fix = fmt.Sprintf("Check what should listen on port %d on those hosts (`ss -lntp 'sport = :%d'`), and where %s "+
			"takes its targets from.", port, port, clients)
	}
	return f
}

// portRole reports whether a role names the port itself (a Service port,
// an endpoint), not just the address (a Node's or a Pod's IP).
func portRole(rs []addrRole) bool {
	for _, r := range rs {
		if r.Port != 0 {
			return true
		}
	}
	return false
}

// maxListedPorts bounds how many ports a scan finding lists.
const maxListedPorts = 20

func scanFinding(sc *scanGroup, outcome model.Outcome, roles map[netip.Addr][]addrRole) Finding {
	host := sc.srv.Addr().String()
	var rs []addrRole // what the host is: a Node's or a Pod's address
	for _, r := range rolesOf(roles, sc.srv.Addr(), 0) {
		if r.Port == 0 {
			rs = append(rs, r)
		}
	}
	var listed []string
	for i, pt := range sc.ports {
		if i == maxListedPorts {
			listed = append(listed, fmt.Sprintf("and %d more", len(sc.ports)-maxListedPorts))
			break
		}
		listed = append(listed, fmt.Sprint(pt))
	}
	facts := map[string]any{
		"server":    host,
		"ports":     len(sc.ports),
		"port_list": strings.Join(listed, ", "),
		"attempts":  sc.n,
		"clients":   sc.clients,
		"first":     sc.first.Format(time.RFC3339Nano),
		"last":      sc.last.Format(time.RFC3339Nano),
	}
	ev, kept := sc.partsEvidence()
	if kept < sc.n {
		facts["attempts_kept"] = kept
	}
	if sc.more {
		facts["more_clients"] = true
	}
	if sc.node != "" {
		facts["node"] = sc.node
	}
	clients := listSome(sc.clients, sc.more)
	attempts := plural(sc.n, "attempt", "attempts")
	f := Finding{Severity: Warning, Facts: facts, Evidence: ev, Sources: []model.Kind{model.KindCapture}}
	what := ""
	if len(rs) > 0 {
		facts["server_is"] = roleWords(rs)
		what = fmt.Sprintf(" The host is %s.", roleWords(rs))
		f.Evidence = append(f.Evidence, roleEvidence(rs)...)
		f.Sources = append(f.Sources, model.KindKube)
	}
	switch outcome {
	case model.OutcomeUnanswered:
		facts["syn_retransmissions"] = sc.retx
		f.Title = fmt.Sprintf("%s does not answer on %d ports: %d connection %s from %s got no reply", host, len(sc.ports),
			sc.n, attempts, clients)
		f.Summary = fmt.Sprintf("%d connection %s to %d ports of %s (%s) got neither a SYN/ACK nor an RST nor an ICMP error, "+
			"with %d SYN %s. One client trying many ports of one host is a port scan; many clients failing on many "+
			"ports is a host that is down, unreachable or behind a firewall that drops.%s", sc.n, attempts, len(sc.ports), host,
			strings.Join(listed, ", "), sc.retx, plural(sc.retx, "retransmission", "retransmissions"), what)
		f.Cause = "The SYNs are dropped on the way or at the host: a firewall or NetworkPolicy drops them (a scan sees " +
			"filtered ports), or the host is down or gone."
		f.Fix = fmt.Sprintf("If this is a scan, nothing is wrong with the ports; find who runs it (%s). Otherwise check "+
			"that %s is up and reachable, and which DROP rule or NetworkPolicy matches.", clients, host)
	case model.OutcomeRefused:
		f.Title = fmt.Sprintf("%s refuses connections on %d ports: %d %s answered with an RST", host, len(sc.ports), sc.n, attempts)
		f.Summary = fmt.Sprintf("%d connection %s from %s to %d ports of %s (%s) %s answered with an RST instead of a "+
			"SYN/ACK. One client trying many ports of one host is a port scan, which finds most ports closed.%s", sc.n, attempts,
			clients, len(sc.ports), host, strings.Join(listed, ", "), plural(sc.n, "was", "were"), what)
		f.Cause = "Nothing listens on those ports at that address, or a firewall rejects the connections with a TCP reset."
		f.Fix = fmt.Sprintf("If this is a scan, nothing is wrong; find who runs it (%s). Otherwise check what listens on "+
			"%s (`ss -lntp`).", clients, host)
	}
	return f
}

func runSynFailures(p *Pass, outcome model.Outcome) error {
	s := p.Snap
	answered := map[string]bool{} // attempts an ICMP error answers
	for _, ev := range s.ICMP {
		if ev.AttemptFrame != 0 {
			answered[fmt.Sprintf("%s#%d", ev.Pos.File, ev.AttemptFrame)] = true
		}
	}
	var groups []*failGroup
	byKey := map[string]*failGroup{}
	groupOf := func(node string, srv netip.AddrPort) *failGroup {
		key := node + "|" + srv.String()
		g := byKey[key]
		if g == nil {
			g = &failGroup{node: node, srv: srv, seen: map[string]bool{}}
			byKey[key] = g
			groups = append(groups, g)
		}
		return g
	}
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.Outcome != outcome || synOnlyCapture(s, a.Pos.File) {
			continue
		}
		if a.ICMP || answered[fmt.Sprintf("%s#%d", a.Pos.File, a.Pos.Frame+a.Pos.Line)] {
			continue
		}
		g := groupOf(a.Node, a.Server)
		g.attempts = append(g.attempts, a)
		g.n++
		g.addClient(a.Client.Addr().String())
		g.retx += a.SYNRetransmissions()
		g.span(a.Start, a.Start)
	}
	// Attempts a capture read in summary mode counted without keeping
	// them (never those an ICMP error answers).
	for i := range s.EndpointStats {
		st := &s.EndpointStats[i]
		if st.Outcome != outcome || st.Attempts == 0 || synOnlyCapture(s, st.File) {
			continue
		}
		g := groupOf(st.Node, st.Server)
		g.hostPorts = append(g.hostPorts, st.Ports...)
		g.n += st.Attempts
		for _, c := range st.ClientAddrs {
			g.addClient(c.String())
		}
		g.more = g.more || st.Clients > len(st.ClientAddrs)
		g.retx += st.SYNRetx
		g.span(st.First, st.Last)
	}
	roles := addrRoles(s)
	minAttempts := int(p.Param("min_attempts", 1))
	scans := scanGroups(groups, roles, int(p.Param("scan_ports", 10)))
	for _, sc := range scans {
		if sc.n >= minAttempts {
			p.Report(scanFinding(sc, outcome, roles))
		}
	}
	for _, sw := range sweepGroups(groups, roles, int(p.Param("sweep_hosts", 10))) {
		if sw.n >= minAttempts {
			p.Report(sweepFinding(sw, outcome))
		}
	}
	for _, g := range groups {
		if g.n < minAttempts || g.scan {
			continue
		}
		// One unanswered SYN without retransmission may just be cut off
		// by the end of the capture.
		if outcome == model.OutcomeUnanswered && g.n == 1 && g.retx == 0 {
			continue
		}
		srv := g.srv
		server := srv.String()
		rs := rolesOf(roles, srv.Addr(), srv.Port())
		sev := Warning
		sources := []model.Kind{model.KindCapture}
		if liveRole(rs) {
			sev = Error
			sources = append(sources, model.KindKube)
		}
		var ev []Evidence
		for i, a := range g.attempts {
			if i == maxGroupEvidence {
				break
			}
			for _, x := range a.SYN {
				ev = append(ev, Evidence{Pos: a.SegPos(x), Note: fmt.Sprintf("SYN %s -> %s", a.Client, a.Server)})
			}
			for _, x := range a.ServerRST {
				ev = append(ev, Evidence{Pos: a.SegPos(x), Note: fmt.Sprintf("RST %s -> %s", a.Server, a.Client)})
			}
		}
		ev = append(ev, roleEvidence(rs)...)
		facts := map[string]any{
			"server":   server,
			"attempts": g.n,
			"clients":  g.clients,
			"first":    g.first.Format(time.RFC3339Nano),
			"last":     g.last.Format(time.RFC3339Nano),
		}
		if kept := len(g.attempts); kept < g.n {
			facts["attempts_kept"] = kept
		}
		if g.more {
			facts["more_clients"] = true
		}
		clients := listSome(g.clients, g.more)
		if g.node != "" {
			facts["node"] = g.node
		}
		if len(rs) > 0 {
			facts["server_is"] = roleWords(rs)
		}
		what := ""
		if len(rs) > 0 {
			what = fmt.Sprintf(" The server is %s.", roleWords(rs))
		}
		f := Finding{Severity: sev, Facts: facts, Evidence: ev, Sources: sources}
		switch outcome {
		case model.OutcomeUnanswered:
			facts["syn_retransmissions"] = g.retx
			f.Title = fmt.Sprintf("%s does not answer: %d connection %s from %s got no reply", server, g.n,
				plural(g.n, "attempt", "attempts"), clients)
			f.Summary = fmt.Sprintf("%d connection %s to %s got neither a SYN/ACK nor an RST nor an ICMP error, "+
				"with %d SYN %s.%s", g.n, plural(g.n, "attempt", "attempts"),
				server, g.retx, plural(g.retx, "retransmission", "retransmissions"), what)
			f.Cause = "The SYNs are dropped on the way or at the server: the backend is down or gone, a firewall or " +
				"NetworkPolicy drops them, or a stale DNAT rule sends them to an address nobody has."
			f.Fix = fmt.Sprintf("Check that %s is up and listening (`ss -lnt` on its node), that no DROP rule or "+
				"NetworkPolicy matches, and that the node's NAT rules still point at live endpoints (`iptables-save -t nat | grep %s`).",
				server, srv.Addr())
		case model.OutcomeRefused:
			f.Title = fmt.Sprintf("%s refuses connections: %d %s answered with an RST", server, g.n,
				plural(g.n, "attempt", "attempts"))
			f.Summary = fmt.Sprintf("%d connection %s from %s to %s %s answered with an RST instead of a SYN/ACK.%s",
				g.n, plural(g.n, "attempt", "attempts"), clients, server,
				plural(g.n, "was", "were"), what)
			f.Cause = "Nothing listens on that port at that address, or a firewall rejects the connection with a TCP reset."
			f.Fix = fmt.Sprintf("On the host of %s, check `ss -lntp 'sport = :%d'`; for a Service, check that its targetPort "+
				"matches the port the container listens on.", srv.Addr(), srv.Port())
		}
		p.Report(f)
	}
	return nil
}

// maxListed bounds how many addresses a finding's title names.
const maxListed = 5

// listSome names items (client addresses, MACs), the first maxListed of
// them and how many more; more says there are others beyond items.
func listSome(items []string, more bool) string { return listUpTo(items, maxListed, more) }

// listUpTo names the first limit items and how many more.
func listUpTo(items []string, limit int, more bool) string {
	if len(items) <= limit {
		l := strings.Join(items, ", ")
		if more {
			l += " and more"
		}
		return l
	}
	n := fmt.Sprintf("%d", len(items)-limit)
	if more {
		n = "over " + n
	}
	return fmt.Sprintf("%s and %s more", strings.Join(items[:limit], ", "), n)
}
