package analyzer

import (
	"fmt"
	"net/netip"
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
Attempts answered by an ICMP error are left to icmp-unreachable.

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
refused" at once.

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

func runSynFailures(p *Pass, outcome model.Outcome) error {
	s := p.Snap
	answered := map[string]bool{} // attempts an ICMP error answers
	for _, ev := range s.ICMP {
		if ev.AttemptFrame != 0 {
			answered[fmt.Sprintf("%s#%d", ev.Pos.File, ev.AttemptFrame)] = true
		}
	}
	type group struct {
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
	}
	var groups []*group
	byKey := map[string]*group{}
	groupOf := func(node string, srv netip.AddrPort) *group {
		key := node + "|" + srv.String()
		g := byKey[key]
		if g == nil {
			g = &group{node: node, srv: srv, seen: map[string]bool{}}
			byKey[key] = g
			groups = append(groups, g)
		}
		return g
	}
	addClient := func(g *group, c string) {
		if !g.seen[c] {
			g.seen[c] = true
			g.clients = append(g.clients, c)
		}
	}
	span := func(g *group, first, last time.Time) {
		if g.first.IsZero() || first.Before(g.first) {
			g.first = first
		}
		if last.After(g.last) {
			g.last = last
		}
	}
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.Outcome != outcome || synOnlyCapture(s, a.Pos.File) {
			continue
		}
		if answered[fmt.Sprintf("%s#%d", a.Pos.File, a.Pos.Frame+a.Pos.Line)] {
			continue
		}
		g := groupOf(a.Node, a.Server)
		g.attempts = append(g.attempts, a)
		g.n++
		addClient(g, a.Client.Addr().String())
		g.retx += a.SYNRetransmissions()
		span(g, a.Start, a.Start)
	}
	// Attempts a capture read in summary mode counted without keeping
	// them (never those an ICMP error answers).
	for i := range s.EndpointStats {
		st := &s.EndpointStats[i]
		if st.Outcome != outcome || st.Attempts == 0 || synOnlyCapture(s, st.File) {
			continue
		}
		g := groupOf(st.Node, st.Server)
		g.n += st.Attempts
		for _, c := range st.ClientAddrs {
			addClient(g, c.String())
		}
		g.more = g.more || st.Clients > len(st.ClientAddrs)
		g.retx += st.SYNRetx
		span(g, st.First, st.Last)
	}
	roles := addrRoles(s)
	minAttempts := int(p.Param("min_attempts", 1))
	for _, g := range groups {
		if g.n < minAttempts {
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
		clients := clientList(g.clients, g.more)
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

// maxListedClients bounds how many client addresses a finding's title
// names.
const maxListedClients = 5

// clientList names the clients, the first maxListedClients of them and how
// many more.
func clientList(clients []string, more bool) string {
	if len(clients) <= maxListedClients {
		l := strings.Join(clients, ", ")
		if more {
			l += " and more"
		}
		return l
	}
	n := fmt.Sprintf("%d", len(clients)-maxListedClients)
	if more {
		n = "over " + n
	}
	return fmt.Sprintf("%s and %s more", strings.Join(clients[:maxListedClients], ", "), n)
}
