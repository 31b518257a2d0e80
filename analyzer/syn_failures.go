package analyzer

import (
	"fmt"
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
		key      string
		node     string
		server   string
		attempts []*model.Attempt
		clients  []string
		retx     int
	}
	var groups []*group
	byKey := map[string]*group{}
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.Outcome != outcome || synOnlyCapture(s, a.Pos.File) {
			continue
		}
		if answered[fmt.Sprintf("%s#%d", a.Pos.File, a.Pos.Frame+a.Pos.Line)] {
			continue
		}
		key := a.Node + "|" + a.Server.String()
		g := byKey[key]
		if g == nil {
			g = &group{key: key, node: a.Node, server: a.Server.String()}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.attempts = append(g.attempts, a)
		if c := a.Client.Addr().String(); !slices.Contains(g.clients, c) {
			g.clients = append(g.clients, c)
		}
		g.retx += a.SYNRetransmissions()
	}
	roles := addrRoles(s)
	minAttempts := int(p.Param("min_attempts", 1))
	for _, g := range groups {
		if len(g.attempts) < minAttempts {
			continue
		}
		// One unanswered SYN without retransmission may just be cut off
		// by the end of the capture.
		if outcome == model.OutcomeUnanswered && len(g.attempts) == 1 && g.retx == 0 {
			continue
		}
		srv := g.attempts[0].Server
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
		first, last := g.attempts[0].Start, g.attempts[len(g.attempts)-1].Start
		facts := map[string]any{
			"server":   g.server,
			"attempts": len(g.attempts),
			"clients":  g.clients,
			"first":    first.Format(time.RFC3339Nano),
			"last":     last.Format(time.RFC3339Nano),
		}
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
			f.Title = fmt.Sprintf("%s does not answer: %d connection %s from %s got no reply", g.server, len(g.attempts),
				plural(len(g.attempts), "attempt", "attempts"), strings.Join(g.clients, ", "))
			f.Summary = fmt.Sprintf("%d connection %s to %s got neither a SYN/ACK nor an RST nor an ICMP error, "+
				"with %d SYN %s.%s", len(g.attempts), plural(len(g.attempts), "attempt", "attempts"),
				g.server, g.retx, plural(g.retx, "retransmission", "retransmissions"), what)
			f.Cause = "The SYNs are dropped on the way or at the server: the backend is down or gone, a firewall or " +
				"NetworkPolicy drops them, or a stale DNAT rule sends them to an address nobody has."
			f.Fix = fmt.Sprintf("Check that %s is up and listening (`ss -lnt` on its node), that no DROP rule or "+
				"NetworkPolicy matches, and that the node's NAT rules still point at live endpoints (`iptables-save -t nat | grep %s`).",
				g.server, srv.Addr())
		case model.OutcomeRefused:
			f.Title = fmt.Sprintf("%s refuses connections: %d %s answered with an RST", g.server, len(g.attempts),
				plural(len(g.attempts), "attempt", "attempts"))
			f.Summary = fmt.Sprintf("%d connection %s from %s to %s %s answered with an RST instead of a SYN/ACK.%s",
				len(g.attempts), plural(len(g.attempts), "attempt", "attempts"), strings.Join(g.clients, ", "), g.server,
				plural(len(g.attempts), "was", "were"), what)
			f.Cause = "Nothing listens on that port at that address, or a firewall rejects the connection with a TCP reset."
			f.Fix = fmt.Sprintf("On the host of %s, check `ss -lntp 'sport = :%d'`; for a Service, check that its targetPort "+
				"matches the port the container listens on.", srv.Addr(), srv.Port())
		}
		p.Report(f)
	}
	return nil
}
