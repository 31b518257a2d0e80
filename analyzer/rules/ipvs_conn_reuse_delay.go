package rules

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// IPVSConnReuseDelay finds connects that wait for the SYN retransmission
// under a burst of connections, the mark of IPVS dropping the first SYN
// of a connection that reuses a port of an old entry.
var IPVSConnReuseDelay = &analyzer.Rule{
	Name:        "ipvs-conn-reuse-delay",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindProbes, model.KindSysctl},
	Uses:        []model.Kind{model.KindIPVS},
	SubjectKeys: []string{"node", "address"},
	Run:         runIPVSConnReuseDelay,
	Symptoms:    []analyzer.SymptomRef{LoadBalancer502.At(160), ServiceUnreachable.At(250)},
	Proof: "a load test's connect times at the SYN retransmission timeout (median 1 s, maximum 3 s) and the node " +
		"in IPVS mode with net.ipv4.vs.conn_reuse_mode = 1 (sysctl) or the tested address an IPVS virtual service " +
		"(ipvsadm -Ln): likely; a capture of one slow connect (the first SYN not forwarded) proves it",
	Unproven: "the connect times alone show the first SYN of most connects dropped, not where: a warning of unknown " +
		"cause with IPVS connection reuse first, a listen backlog overflowing and conntrack insert drops after; " +
		"conn_reuse_mode = 0 on the node rules IPVS out and the rule says nothing",
	Doc: `connects wait for the SYN retransmission under a burst

With kube-proxy in IPVS mode and net.ipv4.vs.conn_reuse_mode = 1 (kernels
before 5.9), IPVS drops the first SYN of a new connection whose client port
matches an IPVS connection entry still in TIME_WAIT. Under many short
connections from one client (a load test, a busy proxy) most new ports
match one, and those connects wait for the kernel's SYN retransmission:
1 s, then 3 s. ApacheBench shows it as a median connect time of about
999 ms with a maximum of about 3009 ms, while the fastest connects take
0 ms: the path is fast, the first SYN is lost.

Evidence: ab's report (Connection Times, Connect row); the node's
net.ipv4.vs.conn_reuse_mode and IPVS table when present.

Severity: warning; likely with the IPVS evidence, unknown without.

Fix: kernel 5.9 or later (the reuse drop was fixed there, and kube-proxy
sets conn_reuse_mode = 1 only then); on older kernels kube-proxy 1.13+
sets net.ipv4.vs.conn_reuse_mode = 0 (mind its own trade-off: a reused
port keeps the old real server); or keep connections alive instead of
opening one per request.`,
}

// synRetransmitWait reports whether ms is the retransmission timeout of s seconds, as
// a connect that waited for it measures (a little above).
func synRetransmitWait(ms, s int) bool { return ms >= s*1000-50 && ms <= s*1000+200 }

func runIPVSConnReuseDelay(p *analyzer.Pass) error {
	for _, c := range p.Snap.ConnectTimes {
		if c.Min > 100 || !synRetransmitWait(c.Median, 1) && !(synRetransmitWait(c.Max, 3) && c.Mean >= 300) {
			continue // not the retransmission's mark: a slow path, or a few connects only
		}
		mode, hasMode := p.Snap.Sysctl(c.Node, "net.ipv4.vs.conn_reuse_mode")
		if hasMode && strings.TrimSpace(mode.Value) == "0" {
			continue // IPVS does not drop reused ports' SYNs
		}
		p.Report(connReuseFinding(p.Snap, c, mode, hasMode))
	}
	return nil
}

func connReuseFinding(s *model.Snapshot, c model.ConnectTimes, mode model.Sysctl, hasMode bool) analyzer.Finding {
	target := c.Host
	if c.Target.IsValid() {
		target = c.Target.String()
	}
	f := analyzer.Finding{
		Subject:   subject("node", c.Node, "address", target),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Unknown,
		Title:     fmt.Sprintf("connects to %s wait for the SYN retransmission (median %d ms)", target, c.Median),
		Summary: fmt.Sprintf("%s's connects to %s took %d ms at the median and %d ms at most, the fastest %d ms "+
			"(%d requests, %d at once): most connects lost their first SYN and waited for the 1 s retransmission, "+
			"some for the 3 s one.", c.Tool, target, c.Median, c.Max, c.Min, c.Requests, c.Concurrency),
		Cause: "The first SYN of most new connections is dropped on the way. With kube-proxy's IPVS mode and " +
			"net.ipv4.vs.conn_reuse_mode = 1 on a kernel before 5.9, IPVS drops the SYN of a connection whose client " +
			"port matches an old connection entry, which a burst of short connections makes the common case.",
		Fix: "Check the node: kernel version and `cat /proc/sys/net/ipv4/vs/conn_reuse_mode`. On kernels before 5.9 " +
			"set it to 0 (kube-proxy 1.13+ does), or upgrade the kernel; keep connections alive rather than one per request.",
		Supports: []string{fmt.Sprintf("%s: Connect min %d, mean %d, median %d, max %d ms", c.Pos, c.Min, c.Mean, c.Median, c.Max)},
		Alternatives: []string{
			"IPVS drops the first SYN of connections reusing a port of an old entry (conn_reuse_mode = 1, kernel < 5.9)",
			"the server's listen backlog overflows under the burst (nstat TcpExtListenOverflows grows)",
			"conntrack drops the SYNs (insert_failed, a full table: conntrack -S)",
		},
		Decide: "# on the node: 1 with a kernel before 5.9; then capture one slow connect: the first SYN to the Service " +
			"not forwarded, its retransmission 1 s later forwarded\ncat /proc/sys/net/ipv4/vs/conn_reuse_mode; uname -r",
		Facts: map[string]any{"target": target, "median_ms": c.Median, "max_ms": c.Max, "min_ms": c.Min,
			"requests": c.Requests, "concurrency": c.Concurrency},
		Evidence: []analyzer.Evidence{{Pos: c.Pos, Note: fmt.Sprintf("Connect: median %d ms, max %d ms", c.Median, c.Max)}},
	}
	if hasMode {
		f.Certainty = analyzer.Likely
		f.Supports = append(f.Supports, fmt.Sprintf("%s: net.ipv4.vs.conn_reuse_mode = %s", mode.Pos, mode.Value))
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: mode.Pos, Note: "net.ipv4.vs.conn_reuse_mode = " + mode.Value})
		f.Decide = "# on the node: a kernel before 5.9; then capture one slow connect: the first SYN to " +
			"the Service not forwarded, its retransmission 1 s later forwarded\nuname -r"
	} else if vs := connReuseVirtual(s, c); vs != nil {
		f.Certainty = analyzer.Likely
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s is an IPVS virtual service", vs.Pos, target))
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: vs.Pos, Note: "IPVS virtual service " + target})
	}
	return f
}

// connReuseVirtual finds the IPVS virtual service of the load test's target.
func connReuseVirtual(s *model.Snapshot, c model.ConnectTimes) *model.IPVSService {
	for i := range s.IPVS {
		if v := &s.IPVS[i]; c.Target.IsValid() && v.Addr == c.Target {
			return v
		}
	}
	return nil
}
