package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// IPVSIdleTimeout finds IPVS forgetting idle TCP connections before TCP
// keepalive would keep them alive.
var IPVSIdleTimeout = &analyzer.Rule{
	Name:        "ipvs-idle-timeout",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindIPVS, model.KindSysctl},
	SubjectKeys: []string{"node", "setting"},
	Run:         runIPVSIdleTimeout,
	Symptoms:    []analyzer.SymptomRef{LoadBalancer502.At(150), ServiceUnreachable.At(230)},
	Proof: "IPVS's TCP timeout (ipvsadm -l --timeout) shorter than the first keepalive probe " +
		"(net.ipv4.tcp_keepalive_time) on the same node: the mismatch is shown, that idle connections were " +
		"reset by it is likely; the IPVS connection table after such an idle time (the entry gone) proves it",
	Unproven: "the timeouts without the keepalive setting, or the setting without the timeouts, say nothing: " +
		"IPVS's 900 s default is harmless when clients probe sooner",
	Doc: `ipvs forgets idle tcp connections before keepalive

kube-proxy's IPVS mode (and kube-router, and any IPVS load balancer) keeps
an entry per connection in the kernel's IPVS table. An established TCP
connection that is idle longer than IPVS's TCP timeout (900 s by default,
ipvsadm -l --timeout) loses its entry; its next packet does not match one,
is not forwarded to the real server, and the connection is reset
("Connection reset by peer") or hangs. TCP keepalive would keep the entry
alive, but the kernel sends its first probe only after
net.ipv4.tcp_keepalive_time (7200 s by default): pooled connections to
databases, message brokers and gRPC backends through a Service go idle for
15 minutes and fail when next used.

Evidence: ipvsadm -l --timeout and sysctl net.ipv4.tcp_keepalive_time on
the same node (or in the client Pod: the keepalive time is per network
namespace).

Severity: warning of likely cause when the keepalive time is not below the
IPVS TCP timeout.

Fix: lower net.ipv4.tcp_keepalive_time below the IPVS TCP timeout (600 on
the nodes, and in the Pods through securityContext.sysctls or the
application's own keepalive), or raise IPVS's timeout (kube-proxy
--ipvs-tcp-timeout, ipvsadm --set).`,
}

const keepaliveSetting = "net.ipv4.tcp_keepalive_time"

func runIPVSIdleTimeout(p *analyzer.Pass) error {
	s := p.Snap
	seen := map[string]bool{}
	for i := len(s.IPVSTimeouts) - 1; i >= 0; i-- { // the last printed of a node wins
		t := s.IPVSTimeouts[i]
		if seen[t.Node] || t.TCP == 0 {
			continue
		}
		seen[t.Node] = true
		ka, ok := s.Sysctl(t.Node, keepaliveSetting)
		if !ok {
			continue
		}
		keep, err := strconv.Atoi(strings.TrimSpace(ka.Value))
		if err != nil || keep < t.TCP {
			continue
		}
		p.Report(ipvsIdleFinding(t, ka, keep))
	}
	return nil
}

func ipvsIdleFinding(t model.IPVSTimeouts, ka model.Sysctl, keep int) analyzer.Finding {
	where := nodeName(t.Node)
	return analyzer.Finding{
		Subject:   subject("node", t.Node, "setting", keepaliveSetting),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title:     fmt.Sprintf("IPVS forgets idle TCP connections after %d s, keepalive starts at %d s", t.TCP, keep),
		Summary: fmt.Sprintf("On %s, IPVS drops the entry of a TCP connection idle for %d s, while TCP keepalive "+
			"sends its first probe only after %d s (%s). A connection through an IPVS Service left idle longer "+
			"than %d s (a pooled database or broker connection) has no entry any more when next used: its packets "+
			"are not forwarded and the connection is reset.", where, t.TCP, keep, keepaliveSetting, t.TCP),
		Cause: fmt.Sprintf("IPVS's TCP timeout (%d s) is shorter than the keepalive time (%d s): nothing keeps an "+
			"idle connection's IPVS entry alive.", t.TCP, keep),
		Fix: fmt.Sprintf("Set %s below %d (600, on the nodes and in the client Pods: it is per network namespace), "+
			"or raise IPVS's TCP timeout (kube-proxy --ipvs-tcp-timeout, ipvsadm --set %d %d %d).", keepaliveSetting,
			t.TCP, keep+60, t.TCPFin, t.UDP),
		Supports: []string{
			fmt.Sprintf("%s: IPVS TCP timeout %d s", t.Pos, t.TCP),
			fmt.Sprintf("%s: %s = %d", ka.Pos, keepaliveSetting, keep),
		},
		Contradicts: []string{"the keepalive time of the client Pods' network namespaces is not shown (the node's " +
			"is), nor whether the applications set their own keepalive"},
		Alternatives: []string{"the resets come from elsewhere (a backend closing idle connections, a conntrack " +
			"entry expired by nf_conntrack_tcp_timeout_established)"},
		Decide: "# on the node, after the client's connection has been idle longer than the IPVS TCP timeout: " +
			"its entry is gone (CLIENT_IP is the client Pod's address)\nipvsadm -Lnc | grep CLIENT_IP\n" +
			"# in the client Pod\nsysctl " + keepaliveSetting,
		Facts: map[string]any{"ipvs_tcp_timeout_s": t.TCP, "tcp_keepalive_time_s": keep},
		Evidence: []analyzer.Evidence{
			{Pos: t.Pos, Note: fmt.Sprintf("Timeout (tcp tcpfin udp): %d %d %d", t.TCP, t.TCPFin, t.UDP)},
			{Pos: ka.Pos, Note: fmt.Sprintf("%s = %d", keepaliveSetting, keep)},
		},
	}
}
