package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// EphemeralNodePortOverlap finds nodes whose ephemeral port range reaches
// into the NodePort range.
var EphemeralNodePortOverlap = &analyzer.Rule{
	Name:        "ephemeral-nodeport-overlap",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindSysctl},
	Uses:        []model.Kind{model.KindComponents, model.KindIPVS, model.KindKube},
	Requires:    []analyzer.FactKey{facts.NodePortRange, facts.LocalPorts, facts.PortOwners},
	SubjectKeys: []string{"node", "setting"},
	Run:         runEphemeralNodePortOverlap,
	Proof: "the node's sysctls (ip_local_port_range, ip_local_reserved_ports) beside the NodePort range of the " +
		"apiserver's flag or the NodePorts allocated in the overlap (Services, the IPVS table)",
	Unproven: "with the sysctls alone the NodePort range is the default, which the cluster may not use: a warning " +
		"(likely), with the apiserver's flag to decide",
	Doc: `ephemeral port range overlaps the NodePort range

A node's net.ipv4.ip_local_port_range (the source ports the kernel picks for
outgoing connections) overlaps the NodePort range of the cluster
(kube-apiserver --service-node-port-range, 30000-32767 when not set), and
net.ipv4.ip_local_reserved_ports does not exclude the overlap.

When a local client (kubelet probing a pod, a health check, any process on the
node) picks a source port that is also an allocated NodePort, the reply to its
SYN is taken for NodePort traffic: with kube-proxy in IPVS mode the SYN/ACK
hits the IPVS virtual service on that port and is answered with an RST, so the
connection fails (see the synack-reset rule); in iptables mode the reply can
be DNATed to a Service backend.

Evidence: sysctl output (ip_local_port_range, ip_local_reserved_ports), the
apiserver's --service-node-port-range flag from its static pod manifest, and
the allocated NodePorts from Services or the IPVS table.

Severity: error when allocated NodePorts (Services or IPVS virtual services)
lie inside the overlap; warning when the overlap is only latent (no NodePort
allocated in it yet) or the allocations are unknown.

Fix: add the NodePort range to net.ipv4.ip_local_reserved_ports (persisted in
/etc/sysctl.d/), or move ip_local_port_range out of the NodePort range.`,
}

func runEphemeralNodePortOverlap(p *analyzer.Pass) error {
	np := facts.NodePortRange.Of(p)
	local := facts.LocalPorts.Of(p)
	// One finding per node that reports an ip_local_port_range.
	for _, node := range local.Nodes() {
		lp := local.Of(node)
		if lp.RangeErr != nil {
			continue // the parser has already warned about the value
		}
		over, ok := intersect(lp.Range, np.Range)
		if !ok {
			continue
		}
		open := subtract(over, lp.ReservedRanges)
		if len(open) == 0 {
			continue
		}
		p.Report(overlapFinding(p, node, np, lp, open))
	}
	return nil
}

func overlapFinding(p *analyzer.Pass, node string, np facts.NodePorts, lp facts.NodeLocalPorts, open []model.PortRange) analyzer.Finding {
	s := p.Snap
	eph, lpr, rsv, haveRsv := lp.Range, lp.PortRange, lp.Reserved, lp.HasReserved
	// The owners by port, then by what they are; owners alike stay in the
	// order of the evidence.
	var inOverlap []facts.PortOwner
	var ports []uint16
	owners := facts.PortOwners.Of(p).On(node)
	for _, port := range slices.Sorted(maps.Keys(owners)) {
		if inRanges(port, open) {
			inOverlap = append(inOverlap, owners[port]...)
			ports = append(ports, port)
		}
	}
	slices.SortStableFunc(inOverlap, func(a, b facts.PortOwner) int {
		if a.Port != b.Port {
			return int(a.Port) - int(b.Port)
		}
		return strings.Compare(a.What, b.What)
	})

	where := "this node"
	if node != "" {
		where = "node " + node
	}
	openStr := rangesString(open)
	values := map[string]any{
		"ip_local_port_range":     eph.String(),
		"nodeport_range":          np.Range.String(),
		"nodeport_range_source":   np.Source(),
		"ip_local_reserved_ports": rsv.Value,
		"overlap":                 openStr,
		"overlap_ports":           rangesLen(open),
	}
	if node != "" {
		values["node"] = node
	}
	ev := []analyzer.Evidence{{Pos: lpr.Pos, Note: "net.ipv4.ip_local_port_range = " + lpr.Value}}
	reserved := "no net.ipv4.ip_local_reserved_ports in the bundle"
	if haveRsv {
		reserved = fmt.Sprintf("%s: ip_local_reserved_ports = %q", rsv.Pos, rsv.Value)
	}
	supports := []string{fmt.Sprintf("%s: ip_local_port_range = %s reaches into the NodePort range %s (%s); %s leaves "+
		"%s open", lpr.Pos, lpr.Value, np.Range, np.Source(), reserved, rangesString(open))}
	var contradicts, alternatives []string
	decide := ""
	certainty := analyzer.Proven
	if haveRsv {
		ev = append(ev, analyzer.Evidence{Pos: rsv.Pos, Note: "net.ipv4.ip_local_reserved_ports = " + rsv.Value})
	}
	if np.Flag != nil {
		ev = append(ev, np.Evidence()...)
		supports = append(supports, fmt.Sprintf("%s: --service-node-port-range=%s", np.Flag.Pos, np.Flag.Value))
	}

	sev := analyzer.Warning
	title := fmt.Sprintf("ephemeral ports %s overlap the NodePort range %s on %s", eph, np.Range, where)
	summary := fmt.Sprintf("On %s the kernel picks outgoing source ports from %s (net.ipv4.ip_local_port_range), "+
		"and %d of them (%s) are in the NodePort range %s (%s) without being reserved in net.ipv4.ip_local_reserved_ports.",
		where, eph, rangesLen(open), openStr, np.Range, np.Source())
	if np.Problem != "" {
		summary += " The --service-node-port-range flag could not be read (" + np.Problem + "), so the default range was used."
	}
	cause := "The ephemeral port range and the NodePort range were configured independently; " +
		"nothing keeps local clients from using a port that kube-proxy owns as a NodePort."
	if len(ports) > 0 {
		sev = analyzer.Error
		var owned []string
		for i, o := range inOverlap {
			if i < maxGroupEvidence {
				supports = append(supports, fmt.Sprintf("%s: %s, in the overlap", o.Pos, o.What))
			}
			owned = append(owned, o.What)
			ev = append(ev, o.Evidence())
		}
		values["allocated_nodeports_in_overlap"] = ports
		values["owners"] = owned
		share := float64(len(ports)) / float64(eph.Len())
		values["chance_per_connection"] = fmt.Sprintf("%.4f%%", 100*share)
		summary += fmt.Sprintf(" %d allocated NodePort(s) lie in the overlap (%s): every new outgoing connection "+
			"that draws one of them as its source port fails, because the reply is taken for NodePort traffic "+
			"(about %.4f%% of connections; more when a busy local client cycles through the range quickly).",
			len(ports), joinPorts(ports), 100*share)
		cause += " A connection whose source port is an allocated NodePort gets its SYN/ACK reset by IPVS " +
			"(or DNATed by iptables), which shows up as probe failures and intermittent connect timeouts."
	} else if s.Has(model.KindIPVS) || s.Has(model.KindKube) {
		summary += " No allocated NodePort lies in the overlap yet, so this is latent: the first Service that gets a NodePort there will break connections."
		contradicts = append(contradicts, "no allocated NodePort (Services, IPVS table) lies in the overlap yet: no "+
			"connection can fail from it today")
	} else {
		summary += " Which NodePorts are allocated is unknown (no Services or IPVS table in the bundle)."
		contradicts = append(contradicts, "no Services or IPVS table in the bundle: whether a NodePort is allocated in "+
			"the overlap is not shown")
	}
	if !p.Joins(ev) {
		// The sysctls alone: the NodePort range is the default.
		certainty = analyzer.Likely
		contradicts = append(contradicts, "the apiserver's --service-node-port-range is not in the bundle: the range "+
			np.Range.String()+" is the default")
		alternatives = []string{"the cluster's NodePort range is another, outside the ephemeral range"}
		decide = "kubectl -n kube-system get pod -l component=kube-apiserver -o yaml | grep service-node-port-range"
		sev = analyzer.Warning
	}
	return analyzer.Finding{
		Subject:      subject("node", node, "setting", "net.ipv4.ip_local_port_range"),
		Severity:     sev,
		Certainty:    certainty,
		Supports:     supports,
		Contradicts:  contradicts,
		Alternatives: alternatives,
		Decide:       decide,
		Title:        title,
		Summary:      summary,
		Cause:        cause,
		Fix:          reserveFix(np.Range, rsv.Value),
		Facts:        values,
		Evidence:     dedupEvidence(ev),
	}
}
