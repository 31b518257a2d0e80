package analyzer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// EphemeralNodePortOverlap finds nodes whose ephemeral port range reaches
// into the NodePort range.
var EphemeralNodePortOverlap = &Rule{
	Name:     "ephemeral-nodeport-overlap",
	Severity: Error,
	Needs:    []model.Kind{model.KindSysctl},
	Uses:     []model.Kind{model.KindComponents, model.KindIPVS, model.KindKube},
	Run:      runEphemeralNodePortOverlap,
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

func runEphemeralNodePortOverlap(p *Pass) error {
	s := p.Snap
	np := findNodePortRange(s)

	// One finding per node that reports an ip_local_port_range.
	var nodes []string
	for _, sc := range s.Sysctls {
		if sc.Name == "net.ipv4.ip_local_port_range" && !slices.Contains(nodes, sc.Node) {
			nodes = append(nodes, sc.Node)
		}
	}
	for _, node := range nodes {
		lpr, _ := s.Sysctl(node, "net.ipv4.ip_local_port_range")
		eph, err := model.ParsePortRange(lpr.Value)
		if err != nil {
			continue // the parser has already warned about the value
		}
		over, ok := intersect(eph, np.Range)
		if !ok {
			continue
		}
		var reserved []model.PortRange
		rsv, haveRsv := s.Sysctl(node, "net.ipv4.ip_local_reserved_ports")
		if haveRsv {
			reserved, _ = model.ParsePortList(rsv.Value)
		}
		open := subtract(over, reserved)
		if len(open) == 0 {
			continue
		}
		p.Report(overlapFinding(s, node, eph, np, lpr, rsv, haveRsv, open))
	}
	return nil
}

func overlapFinding(s *model.Snapshot, node string, eph model.PortRange, np nodePortRange,
	lpr, rsv model.Sysctl, haveRsv bool, open []model.PortRange) Finding {
	owners := portOwners(s, node)
	var inOverlap []portOwner
	var ports []uint16
	for port, os := range owners {
		if inRanges(port, open) {
			inOverlap = append(inOverlap, os...)
			ports = append(ports, port)
		}
	}
	slices.Sort(ports)
	slices.SortFunc(inOverlap, func(a, b portOwner) int {
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
	facts := map[string]any{
		"ip_local_port_range":     eph.String(),
		"nodeport_range":          np.Range.String(),
		"nodeport_range_source":   np.source(),
		"ip_local_reserved_ports": rsv.Value,
		"overlap":                 openStr,
		"overlap_ports":           rangesLen(open),
	}
	if node != "" {
		facts["node"] = node
	}
	sources := []model.Kind{model.KindSysctl}
	ev := []Evidence{{Pos: lpr.Pos, Note: "net.ipv4.ip_local_port_range = " + lpr.Value}}
	if haveRsv {
		ev = append(ev, Evidence{Pos: rsv.Pos, Note: "net.ipv4.ip_local_reserved_ports = " + rsv.Value})
	}
	if np.Flag != nil {
		sources = append(sources, model.KindComponents)
		ev = append(ev, np.evidence()...)
	}

	sev := Warning
	title := fmt.Sprintf("ephemeral ports %s overlap the NodePort range %s on %s", eph, np.Range, where)
	summary := fmt.Sprintf("On %s the kernel picks outgoing source ports from %s (net.ipv4.ip_local_port_range), "+
		"and %d of them (%s) are in the NodePort range %s (%s) without being reserved in net.ipv4.ip_local_reserved_ports.",
		where, eph, rangesLen(open), openStr, np.Range, np.source())
	if np.Problem != "" {
		summary += " The --service-node-port-range flag could not be read (" + np.Problem + "), so the default range was used."
	}
	cause := "The ephemeral port range and the NodePort range were configured independently; " +
		"nothing keeps local clients from using a port that kube-proxy owns as a NodePort."
	if len(ports) > 0 {
		sev = Error
		var owned []string
		for _, o := range inOverlap {
			owned = append(owned, o.What)
			ev = append(ev, Evidence{Pos: o.Pos, Note: o.What})
			if strings.HasPrefix(o.What, "IPVS") {
				sources = append(sources, model.KindIPVS)
			} else {
				sources = append(sources, model.KindKube)
			}
		}
		facts["allocated_nodeports_in_overlap"] = ports
		facts["owners"] = owned
		share := float64(len(ports)) / float64(eph.Len())
		facts["chance_per_connection"] = fmt.Sprintf("%.4f%%", 100*share)
		summary += fmt.Sprintf(" %d allocated NodePort(s) lie in the overlap (%s): every new outgoing connection "+
			"that draws one of them as its source port fails, because the reply is taken for NodePort traffic "+
			"(about %.4f%% of connections; more when a busy local client cycles through the range quickly).",
			len(ports), joinPorts(ports), 100*share)
		cause += " A connection whose source port is an allocated NodePort gets its SYN/ACK reset by IPVS " +
			"(or DNATed by iptables), which shows up as probe failures and intermittent connect timeouts."
	} else if s.Has(model.KindIPVS) || s.Has(model.KindKube) {
		summary += " No allocated NodePort lies in the overlap yet, so this is latent: the first Service that gets a NodePort there will break connections."
	} else {
		summary += " Which NodePorts are allocated is unknown (no Services or IPVS table in the bundle)."
	}
	return Finding{
		Severity: sev,
		Title:    title,
		Summary:  summary,
		Cause:    cause,
		Fix:      reserveFix(np.Range, rsv.Value),
		Facts:    facts,
		Sources:  sources,
		Evidence: dedupEvidence(ev),
	}
}

func joinPorts(ports []uint16) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ", ")
}

func dedupEvidence(ev []Evidence) []Evidence {
	seen := map[Evidence]bool{}
	out := ev[:0:0]
	for _, e := range ev {
		if e.Pos.IsZero() || seen[e] {
			continue
		}
		seen[e] = true
		out = append(out, e)
	}
	return out
}
