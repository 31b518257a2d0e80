package rules

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// IPVSStaleRealServer finds IPVS real servers that kube-proxy quiesced
// (weight 0) but that still take a Service's traffic.
var IPVSStaleRealServer = &analyzer.Rule{
	Name:        "ipvs-stale-realserver",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindIPVS},
	Uses:        []model.Kind{model.KindKube},
	Requires:    []analyzer.FactKey{facts.ServiceEndpoints},
	SubjectKeys: []string{"node", "vip", "backend"},
	Run:         runIPVSStaleRealServer,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(220), LoadBalancer502.At(130)},
	Proof: "a real server at weight 0 that still takes the virtual service's traffic (ipvsadm -Ln: active " +
		"connections, more entries than the servers in use; a UDP entry in ipvsadm -Lnc), and the " +
		"Service's Endpoints, which no longer list its address",
	Unproven: "from the IPVS tables alone a warning of likely cause, with kubectl get endpoints to decide; a " +
		"TCP real server at weight 0 with fewer entries than the servers in use is draining as kube-proxy " +
		"intends, and not reported",
	Doc: `an IPVS real server at weight 0 still takes traffic

When an endpoint goes away, kube-proxy in IPVS mode does not delete its real
server at once: it sets its weight to 0 (graceful termination) and deletes it
once its connections are gone. New connections should go to the other real
servers, but the kernel still sends a packet to the real server of an
existing IPVS connection entry: a UDP client that keeps sending from one
source port refreshes its entry forever (syslog, statsd, DNS from a fixed
port), and with net.ipv4.vs.conn_reuse_mode=0, which kube-proxy set before
kernel 5.9, a TCP client reusing the source port of a TIME_WAIT entry gets
the old real server too. The real server is never drained, and once the Pod
is gone that traffic is blackholed ("No route to host").

Evidence: ipvsadm -Ln (each real server's weight and connections),
ipvsadm -Lnc (the entries and the real server each points at), and the
Service's Endpoints or EndpointSlices (kubectl get endpoints), by the
virtual service's address, which is the Service's ClusterIP, LoadBalancer or
external IP.

Severity: an error when the Endpoints no longer list the real server;
a warning from the IPVS tables alone. A weight-0 TCP real server with
fewer entries than those in use is draining normally: not reported.

Fix: delete the stale entries (conntrack and ipvsadm: ipvsadm -d -t|-u
VIP:PORT -r RS:PORT once no client needs it); for UDP, upgrade kube-proxy
(1.19 and later delete UDP real servers at once) or have the client change
source port; for TCP, net.ipv4.vs.conn_reuse_mode=1 on kernels 5.9 and
later (kube-proxy sets it there) and net.ipv4.vs.expire_nodest_conn=1.`,
}

// staleReal is a weight-0 real server still taking traffic.
type staleReal struct {
	svc   *model.IPVSService
	real  *model.IPVSReal
	conns []*model.IPVSConn // -Lnc entries pointing at it
	// live counts the entries of the service's real servers in use.
	live int
	// service is the Service whose address the VIP is; listed says
	// its Endpoints still list the real server, known that they were read.
	service                  string
	servicePos, endpointsPos model.Pos
	known, listed            bool
}

func runIPVSStaleRealServer(p *analyzer.Pass) error {
	eps := facts.ServiceEndpoints.Of(p)
	for i := range p.Snap.IPVS {
		svc := &p.Snap.IPVS[i]
		live := 0
		for _, r := range svc.Reals {
			if r.Weight > 0 {
				live += r.ActiveConn + r.InactConn
			}
		}
		for j := range svc.Reals {
			r := &svc.Reals[j]
			if r.Weight != 0 || len(svc.Reals) < 2 && svc.Proto != "UDP" {
				continue
			}
			s := &staleReal{svc: svc, real: r, live: live}
			for k := range p.Snap.IPVSConns {
				c := &p.Snap.IPVSConns[k]
				if c.Node == svc.Node && c.Proto == svc.Proto && c.Virtual == svc.Addr && c.Dest == r.Addr {
					s.conns = append(s.conns, c)
				}
			}
			staleEndpoints(s, p.Snap, eps)
			if c, ok := judgeStaleReal(s); ok {
				f := withFinding(c, staleRealWords(s))
				p.Report(f)
			}
		}
	}
	return nil
}

// staleEndpoints looks up the Service whose address and port the VIP is,
// and whether its ready endpoints (when the bundle has them) hold the real
// server.
func staleEndpoints(s *staleReal, snap *model.Snapshot, eps *facts.Endpoints) {
	vip := s.svc.Addr
	for i := range snap.Kube.Services {
		svc := &snap.Kube.Services[i]
		ips := append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs...)
		ips = append(append(ips, svc.Spec.ExternalIPs...), svc.Spec.LoadBalancerIP)
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			ips = append(ips, ing.IP)
		}
		if !slices.ContainsFunc(ips, func(ip string) bool { a, err := netip.ParseAddr(ip); return err == nil && a == vip.Addr() }) {
			continue
		}
		for _, pt := range svc.Spec.Ports {
			if int(pt.Port) != int(vip.Port()) {
				continue
			}
			s.service = objectName(svc.Namespace, svc.Name)
			s.servicePos = svc.Source.Pos
			set, pos, found := eps.Of(svc.Namespace, svc.Name, pt.Name)
			s.known, s.listed, s.endpointsPos = found, set.IPs[s.real.Addr.Addr().String()], pos
			return
		}
	}
}

// judgeStaleReal decides whether s takes traffic it should not, and how
// firmly the evidence shows it.
func judgeStaleReal(s *staleReal) (analyzer.Finding, bool) {
	f := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely}
	entries := s.real.ActiveConn + s.real.InactConn
	switch {
	case s.svc.Proto == "UDP" && (entries > 0 || len(s.conns) > 0):
		f.Supports = append(f.Supports, fmt.Sprintf("UDP real server %s at weight 0 still holds %d %s (%s)",
			s.real.Addr, max(entries, len(s.conns)), plural(max(entries, len(s.conns)), "entry", "entries"), s.real.Pos))
	case s.svc.Proto != "UDP" && s.real.ActiveConn > 0 && entries > s.live:
		f.Supports = append(f.Supports, fmt.Sprintf("real server %s at weight 0 holds %d active and %d inactive "+
			"connections, more than the %d of the real servers in use (%s)", s.real.Addr, s.real.ActiveConn,
			s.real.InactConn, s.live, s.real.Pos))
	default:
		return f, false // draining as kube-proxy intends
	}
	if len(s.conns) > 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("ipvsadm -Lnc has %d %s to it, first %s", len(s.conns),
			plural(len(s.conns), "entry", "entries"), s.conns[0].Pos))
	}
	switch {
	case s.known && s.listed:
		// The Endpoints still list it: kube-proxy quiesced an endpoint
		// that is still there, not a stale one.
		return f, false
	case s.known:
		f.Supports = append(f.Supports, fmt.Sprintf("the Endpoints of Service %s do not list %s (%s)", s.service,
			s.real.Addr.Addr(), s.endpointsPos))
		f.Certainty, f.Severity = analyzer.Proven, analyzer.Error
		return f, true
	}
	f.Alternatives = []string{"long-lived connections draining as kube-proxy intends, the endpoint still terminating"}
	if s.svc.Proto == "UDP" {
		f.Alternatives = []string{"the last entries of a client that stopped sending, expiring within the UDP timeout " +
			"(ipvsadm -L --timeout)"}
	}
	f.Decide = fmt.Sprintf("# on %s, a minute apart: entries that stay or come back\n"+
		"kubectl get endpoints -A -o wide | grep %s; ipvsadm -Lnc | grep %s", nodeName(s.svc.Node), s.real.Addr.Addr(), s.real.Addr)
	return f, true
}

// staleRealWords words the finding of s.
func staleRealWords(s *staleReal) analyzer.Finding {
	vip := fmt.Sprintf("%s %s", s.svc.Proto, s.svc.Addr)
	f := analyzer.Finding{
		Subject: subject("node", s.svc.Node, "vip", s.svc.Addr.String(), "backend", s.real.Addr.String()),
		Title:   fmt.Sprintf("IPVS real server %s of %s at weight 0 still takes traffic", s.real.Addr, vip),
		Facts: map[string]any{"vip": s.svc.Addr.String(), "proto": s.svc.Proto, "backend": s.real.Addr.String(),
			"active_conn": s.real.ActiveConn, "inact_conn": s.real.InactConn, "entries": len(s.conns)},
	}
	f.Summary = fmt.Sprintf("On %s, the virtual service %s keeps real server %s at weight 0, as kube-proxy does for an "+
		"endpoint that went away, yet it still holds %d active and %d inactive connections", nodeName(s.svc.Node), vip,
		s.real.Addr, s.real.ActiveConn, s.real.InactConn)
	if s.svc.Proto != "UDP" {
		f.Summary += fmt.Sprintf(" (the real servers in use hold %d)", s.live)
	}
	f.Summary += "."
	if len(s.conns) > 0 {
		c := s.conns[0]
		f.Summary += fmt.Sprintf(" ipvsadm -Lnc shows %d %s to it, the first from %s (%s, expiring in %ds).", len(s.conns),
			plural(len(s.conns), "entry", "entries"), c.Client, c.State, c.Expire)
	}
	if s.known {
		f.Summary += fmt.Sprintf(" The VIP is Service %s's, whose endpoints no longer include %s.", s.service, s.real.Addr.Addr())
	}
	if s.svc.Proto == "UDP" {
		f.Cause = fmt.Sprintf("A client that keeps sending from one source port refreshes its IPVS entry to %s, the real "+
			"server of an endpoint that is gone: kube-proxy only quiesced it, and the entry never expires, so the "+
			"client's datagrams are blackholed instead of reaching the Service's current endpoints.", s.real.Addr)
		f.Fix = fmt.Sprintf("Delete the real server and its entries on %s (ipvsadm -d -u %s -r %s; conntrack -D -p udp "+
			"--orig-dst %s), and upgrade kube-proxy (1.19 and later delete UDP real servers at once).",
			nodeName(s.svc.Node), s.svc.Addr, s.real.Addr, s.svc.Addr.Addr())
	} else {
		f.Cause = fmt.Sprintf("New connections still reach %s at weight 0: with net.ipv4.vs.conn_reuse_mode=0 a client "+
			"reusing the source port of one of its TIME_WAIT entries is sent to it again, so it never drains and its "+
			"connections fail once the Pod is gone.", s.real.Addr)
		f.Fix = "Set net.ipv4.vs.conn_reuse_mode=1 (safe from kernel 5.9, where kube-proxy sets it) and " +
			"net.ipv4.vs.expire_nodest_conn=1 on the nodes, and upgrade kube-proxy; meanwhile delete the real server " +
			fmt.Sprintf("(ipvsadm -d -t %s -r %s) once its Pod is gone.", s.svc.Addr, s.real.Addr)
	}
	ev := []analyzer.Evidence{{Pos: s.real.Pos, Note: fmt.Sprintf("%s weight 0, %d active, %d inactive",
		s.real.Addr, s.real.ActiveConn, s.real.InactConn)}}
	for i, c := range s.conns {
		if i == maxGroupEvidence {
			break
		}
		ev = append(ev, analyzer.Evidence{Pos: c.Pos, Note: fmt.Sprintf("%s %s -> %s", c.State, c.Client, c.Dest)})
	}
	ev = append(ev, analyzer.Evidence{Pos: s.svc.Pos, Note: "virtual service " + vip})
	if s.known {
		ev = append(ev, analyzer.Evidence{Pos: s.servicePos, Note: "Service " + s.service},
			analyzer.Evidence{Pos: s.endpointsPos, Note: "endpoints of Service " + s.service})
	}
	f.Evidence = dedupEvidence(ev)
	return f
}
