package rules

import (
	"fmt"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// SynUnanswered finds server endpoints whose SYNs get no answer at all.
var SynUnanswered = &analyzer.Rule{
	Name:        "syn-unanswered",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindCapture, model.KindClient, model.KindLogs},
	Uses:        []model.Kind{model.KindKube},
	Requires:    synFailureFacts,
	Params:      synFailureParams,
	SubjectKeys: synFailureSubjectKeys,
	Run:         func(p *analyzer.Pass) error { return runSynFailures(p, unansweredWords) },
	Symptoms:    []analyzer.SymptomRef{ProbesTimeOut.At(20), ServiceUnreachable.At(130), DNSTimeouts.At(90), ConnectionsTimeOut.At(10)},
	Decide: "# on the server's node while the client retries: the SYNs arriving, and whether anything answers\n" +
		"tcpdump -ni any 'tcp[tcpflags] & (tcp-syn|tcp-rst) != 0'",
	Proof: "the capture's unanswered SYNs, and the Services or Endpoints saying the endpoint should answer " +
		"(a Service address, a ready endpoint)",
	Unproven: "the unanswered attempts from the capture or a client transcript alone, with the causes not ruled out " +
		"(a firewall drop, a backend gone, replies on another path) and the node's firewall rules to decide",
	Doc: `connection attempts to a server endpoint get no answer

In a capture, clients send SYNs (and retransmit them) to a server endpoint
and nothing comes back: no SYN/ACK, no RST, no ICMP error. The application
sees a connect timeout after about 1, 3, 7, 15 ... seconds of retransmissions.
Attempts answered by an ICMP error are left to icmp-unreachable. When one
host fails this way on many ports that no Service or endpoint names
(scan_ports, default 10), they are told in one finding listing the ports: a
port scan, or a host (a Node) down or firewalled. Likewise many hosts that no
Kubernetes object names failing on one port (sweep_hosts, default 10): a
client with a list of targets that are gone. When the same endpoint answered
other attempts in the capture, the finding says so (answered_attempts) and
does not blame a backend that is down: those SYNs differ (a scanner's probe
with unusual flags, other clients) or are dropped selectively.

Without a capture of the endpoint, a client transcript that shows a
connection attempt timing out (curl's "Connection timed out", nc's "timed
out", an application's "dial tcp ADDR: i/o timeout") is reported as a
warning of unknown cause: it tells which endpoint did not answer, not where
the SYNs were lost; a capture on the server's node decides.

Evidence: the capture's SYN frames, grouped per server endpoint, or the
client transcripts' lines, or nginx's (an Ingress controller's) "upstream
timed out (110: ...) while connecting to upstream" with its upstream's
address; the Kubernetes objects that say what the
endpoint is (a Service's ClusterIP or LoadBalancer IP, a ready endpoint, a
Pod IP).

Severity: error when the Services or Endpoints say the endpoint should answer
(a Service address or a ready endpoint: the failure is then proven, while
what drops the SYNs stays among the alternatives); warning from the capture
alone, since a capture taken on one side of a path, or filtered, may miss
replies. A SYN seen again after DNAT whose translated copy was answered is
not unanswered (see nat-reply-untranslated).
Captures whose command filters on TCP flags (tcpdump 'tcp[tcpflags] ...') are
not judged.

Fix: find where the SYNs are lost: is the backend up and listening (ss -lnt
on its node), does a firewall or NetworkPolicy drop them, does the dataplane
still DNAT to an address that no longer exists (see stale-dnat)?`,
}

// unansweredWords words the findings of syn-unanswered.
var unansweredWords = synWords{
	outcome: model.OutcomeUnanswered,
	// One unanswered SYN without retransmission may just be cut off by the
	// end of the capture.
	skip: func(g *facts.FailGroup) bool { return g.N == 1 && g.Retx == 0 },
	endpoint: func(f *analyzer.Finding, g *facts.FailGroup, t synText) {
		f.Facts["syn_retransmissions"] = g.Retx
		f.Title = fmt.Sprintf("%s does not answer: %d connection %s from %s got no reply", t.Subject, g.N, t.Attempts, t.Clients)
		f.Summary = fmt.Sprintf("%d connection %s to %s got neither a SYN/ACK nor an RST nor an ICMP error, "+
			"with %d SYN %s.%s", g.N, t.Attempts, t.Subject, g.Retx, plural(g.Retx, "retransmission", "retransmissions"), t.What)
		f.Cause = "The SYNs are dropped on the way or at the server: the backend is down or gone, a firewall or " +
			"NetworkPolicy drops them, or a stale DNAT rule sends them to an address nobody has."
		f.Fix = fmt.Sprintf("Check that %s is up and listening (`ss -lnt` on its node), that no DROP rule or "+
			"NetworkPolicy matches, and that the node's NAT rules still point at live endpoints (`iptables-save -t nat | grep %s`).",
			t.Subject, t.Server.Addr())
	},
	scan: func(f *analyzer.Finding, g *facts.FailGroup, t synText) {
		f.Facts["syn_retransmissions"] = g.Retx
		f.Title = fmt.Sprintf("%s does not answer on %d ports: %d connection %s from %s got no reply", t.Subject, t.Count,
			g.N, t.Attempts, t.Clients)
		f.Summary = fmt.Sprintf("%d connection %s to %d ports of %s (%s) got neither a SYN/ACK nor an RST nor an ICMP error, "+
			"with %d SYN %s. One client trying many ports of one host is a port scan; many clients failing on many "+
			"ports is a host that is down, unreachable or behind a firewall that drops.%s", g.N, t.Attempts, t.Count, t.Subject,
			t.Listed, g.Retx, plural(g.Retx, "retransmission", "retransmissions"), t.What)
		f.Cause = "The SYNs are dropped on the way or at the host: a firewall or NetworkPolicy drops them (a scan sees " +
			"filtered ports), or the host is down or gone."
		f.Fix = fmt.Sprintf("If this is a scan, nothing is wrong with the ports; find who runs it (%s). Otherwise check "+
			"that %s is up and reachable, and which DROP rule or NetworkPolicy matches.", t.Clients, t.Subject)
	},
	sweep: func(f *analyzer.Finding, g *facts.FailGroup, t synText) {
		port := t.Server.Port()
		f.Facts["syn_retransmissions"] = g.Retx
		f.Title = fmt.Sprintf("%d hosts do not answer on port %d: %d connection %s from %s got no reply", t.Count, port,
			g.N, t.Attempts, t.Clients)
		f.Summary = fmt.Sprintf("%d connection %s to port %d of %d hosts (%s) got neither a SYN/ACK nor an RST nor an ICMP "+
			"error, with %d SYN %s. One port tried across many hosts is a client with a list of targets: a monitoring job "+
			"scraping Pods that are gone, a client with stale endpoints, or a sweep.", g.N, t.Attempts, port, t.Count, t.Listed,
			g.Retx, plural(g.Retx, "retransmission", "retransmissions"))
		f.Cause = "The hosts are gone, down, or behind a firewall that drops, and the client still has them in its list."
		f.Fix = fmt.Sprintf("Find where %s takes its targets from (a scrape configuration, a service discovery, a stale "+
			"cache) and whether those hosts should exist.", t.Clients)
	},
}
