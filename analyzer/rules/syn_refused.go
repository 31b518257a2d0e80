package rules

import (
	"fmt"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// SynRefused finds server endpoints that refuse connections with an RST.
var SynRefused = &analyzer.Rule{
	Name:        "syn-refused",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindCapture, model.KindClient, model.KindLogs},
	Uses:        []model.Kind{model.KindKube},
	Requires:    synFailureFacts,
	Params:      synFailureParams,
	SubjectKeys: synFailureSubjectKeys,
	Run:         func(p *analyzer.Pass) error { return runSynFailures(p, refusedWords) },
	Symptoms:    []analyzer.SymptomRef{ProbesTimeOut.At(30), ServiceUnreachable.At(140)},
	Proof: "the capture's SYNs answered by RSTs from the server, and the Services or Endpoints saying the endpoint " +
		"should answer (a Service address, a ready endpoint)",
	Unproven: "the refused attempts from the capture or a client transcript alone, with the causes not ruled out (no " +
		"listener, a REJECT rule) and `ss -lntup` (the port's listener) to decide",
	Doc: `connection attempts to a server endpoint are refused

In a capture, the server answers SYNs with an RST: nothing listens on that
port on that host, or a firewall rejects the connection with a TCP reset
(iptables REJECT --reject-with tcp-reset). The application sees "connection
refused" at once. When one host refuses on many ports that no Service or
endpoint names (scan_ports, default 10), they are told in one finding listing
the ports, as a port scan finds most ports closed; many hosts refusing one
port (sweep_hosts, default 10) likewise.

Without a capture of the endpoint, a client transcript that shows a
connection refused (curl's "Connection refused", nc's "Connection
refused", an application's "dial tcp ADDR: connect: connection refused")
is reported as a warning of unknown cause: the refusal can also be
kube-proxy rejecting a Service without endpoints (an ICMP port
unreachable, which the client reports the same way).

Evidence: the capture's SYN and RST frames per server endpoint, or the
client transcripts' lines, or nginx's (an Ingress controller's) "connect()
failed (111: Connection refused) while connecting to upstream" with its
upstream's address; the Kubernetes objects that say what the endpoint is.

Severity: error when the Services or Endpoints say the endpoint should answer
(the failure is then proven; whether nothing listens or a rule rejects stays
among the alternatives, and ss -lntp decides); warning from the capture alone.

Fix: check the process on the backend listens on that address and port (ss
-lntp), that the Service's targetPort matches the container port, and that no
REJECT rule matches.`,
}

// refusedWords words the findings of syn-refused.
var refusedWords = synWords{
	outcome: model.OutcomeRefused,
	endpoint: func(f *analyzer.Finding, g *facts.FailGroup, t synText) {
		f.Title = fmt.Sprintf("%s refuses connections: %d %s answered with an RST", t.Subject, g.N, t.Attempts)
		f.Summary = fmt.Sprintf("%d connection %s from %s to %s %s answered with an RST instead of a SYN/ACK.%s",
			g.N, t.Attempts, t.Clients, t.Subject, plural(g.N, "was", "were"), t.What)
		f.Cause = "Nothing listens on that port at that address, or a firewall rejects the connection with a TCP reset."
		f.Fix = fmt.Sprintf("On the host of %s, check `ss -lntp 'sport = :%d'`; for a Service, check that its targetPort "+
			"matches the port the container listens on.", t.Server.Addr(), t.Server.Port())
	},
	scan: func(f *analyzer.Finding, g *facts.FailGroup, t synText) {
		f.Title = fmt.Sprintf("%s refuses connections on %d ports: %d %s answered with an RST", t.Subject, t.Count, g.N, t.Attempts)
		f.Summary = fmt.Sprintf("%d connection %s from %s to %d ports of %s (%s) %s answered with an RST instead of a "+
			"SYN/ACK. One client trying many ports of one host is a port scan, which finds most ports closed.%s", g.N, t.Attempts,
			t.Clients, t.Count, t.Subject, t.Listed, plural(g.N, "was", "were"), t.What)
		f.Cause = "Nothing listens on those ports at that address, or a firewall rejects the connections with a TCP reset."
		f.Fix = fmt.Sprintf("If this is a scan, nothing is wrong; find who runs it (%s). Otherwise check what listens on "+
			"%s (`ss -lntp`).", t.Clients, t.Subject)
	},
	sweep: func(f *analyzer.Finding, g *facts.FailGroup, t synText) {
		port := t.Server.Port()
		f.Title = fmt.Sprintf("%d hosts refuse connections on port %d: %d %s answered with an RST", t.Count, port, g.N, t.Attempts)
		f.Summary = fmt.Sprintf("%d connection %s from %s to port %d of %d hosts (%s) %s answered with an RST: nothing listens "+
			"on that port on those hosts.", g.N, t.Attempts, t.Clients, port, t.Count, t.Listed, plural(g.N, "was", "were"))
		f.Cause = "The hosts are up but nothing listens on the port: the service is not deployed or not running there, " +
			"or a firewall rejects the connections."
		f.Fix = fmt.Sprintf("Check what should listen on port %d on those hosts (`ss -lntp 'sport = :%d'`), and where %s "+
			"takes its targets from.", port, port, t.Clients)
	},
}
