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
	Explains:    []*analyzer.Rule{NodePortCollision},
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(90), LoadBalancer502.At(60)},
	Plot: analyzer.Plot{
		ClientPorts: []analyzer.Selector{analyzer.InFacts("allocated_nodeports_in_overlap")},
	},
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
		o := &portOverlap{node: node, np: np, lp: lp, open: open}
		f := judgeOverlap(p, o)
		f.Title, f.Summary, f.Cause, f.Fix = overlapWords(o)
		p.Report(f)
	}
	return nil
}

// portOverlap is a node's ephemeral port range reaching into the NodePort
// range, its open ports not reserved, and its judgement (judgeOverlap):
// the allocated NodePorts in the overlap. overlapWords words it.
type portOverlap struct {
	node string
	np   facts.NodePorts
	lp   facts.NodeLocalPorts
	open []model.PortRange // the overlap not reserved

	ports       []uint16 // the allocated NodePorts in it
	ownersShown bool     // the bundle shows which NodePorts are allocated (Services, the IPVS table)
}

// judgeOverlap judges o. It fills in o and returns the finding without its
// words.
func judgeOverlap(p *analyzer.Pass, o *portOverlap) analyzer.Finding {
	node, np, open := o.node, o.np, o.open
	eph, lpr, rsv, haveRsv := o.lp.Range, o.lp.PortRange, o.lp.Reserved, o.lp.HasReserved
	o.ownersShown = p.Snap.Has(model.KindIPVS) || p.Snap.Has(model.KindKube)
	// The owners by port, then by what they are; owners alike stay in the
	// order of the evidence.
	var inOverlap []facts.PortOwner
	owners := facts.PortOwners.Of(p).On(node)
	for _, port := range slices.Sorted(maps.Keys(owners)) {
		if inRanges(port, open) {
			inOverlap = append(inOverlap, owners[port]...)
			o.ports = append(o.ports, port)
		}
	}
	slices.SortStableFunc(inOverlap, func(a, b facts.PortOwner) int {
		if a.Port != b.Port {
			return int(a.Port) - int(b.Port)
		}
		return strings.Compare(a.What, b.What)
	})
	values := map[string]any{
		"ip_local_port_range":     eph.String(),
		"nodeport_range":          np.Range.String(),
		"nodeport_range_source":   np.Source(),
		"ip_local_reserved_ports": rsv.Value,
		"overlap":                 rangesString(open),
		"overlap_ports":           rangesLen(open),
	}
	if node != "" {
		values["node"] = node
	}
	ev := []analyzer.Evidence{{Pos: lpr.Pos, Note: "net.ipv4.ip_local_port_range = " + lpr.Value}}
	reserved := "no net.ipv4.ip_local_reserved_ports in the bundle"
	if haveRsv {
		reserved = fmt.Sprintf("%s: ip_local_reserved_ports = %q", rsv.Pos, rsv.Value)
		ev = append(ev, analyzer.Evidence{Pos: rsv.Pos, Note: "net.ipv4.ip_local_reserved_ports = " + rsv.Value})
	}
	f := analyzer.Finding{
		Subject:  subject("node", node, "setting", "net.ipv4.ip_local_port_range"),
		Severity: analyzer.Warning, Certainty: analyzer.Proven, Facts: values,
		Supports: []string{fmt.Sprintf("%s: ip_local_port_range = %s reaches into the NodePort range %s (%s); %s leaves "+
			"%s open", lpr.Pos, lpr.Value, np.Range, np.Source(), reserved, rangesString(open))},
	}
	if np.Flag != nil {
		ev = append(ev, np.Evidence()...)
		f.Supports = append(f.Supports, fmt.Sprintf("%s: --service-node-port-range=%s", np.Flag.Pos, np.Flag.Value))
	}
	switch {
	case len(o.ports) > 0:
		f.Severity = analyzer.Error
		var owned []string
		for i, ow := range inOverlap {
			if i < maxGroupEvidence {
				f.Supports = append(f.Supports, fmt.Sprintf("%s: %s, in the overlap", ow.Pos, ow.What))
			}
			owned = append(owned, ow.What)
			ev = append(ev, ow.Evidence())
		}
		values["allocated_nodeports_in_overlap"] = o.ports
		values["owners"] = owned
		values["chance_per_connection"] = fmt.Sprintf("%.4f%%", 100*o.share())
	case o.ownersShown:
		f.Contradicts = append(f.Contradicts, "no allocated NodePort (Services, IPVS table) lies in the overlap yet: no "+
			"connection can fail from it today")
	default:
		f.Contradicts = append(f.Contradicts, "no Services or IPVS table in the bundle: whether a NodePort is allocated in "+
			"the overlap is not shown")
	}
	if !p.Joins(ev) {
		// The sysctls alone: the NodePort range is the default.
		f.Certainty = analyzer.Likely
		f.Contradicts = append(f.Contradicts, "the apiserver's --service-node-port-range is not in the bundle: the range "+
			np.Range.String()+" is the default")
		f.Alternatives = []string{"the cluster's NodePort range is another, outside the ephemeral range"}
		f.Decide = "kubectl -n kube-system get pod -l component=kube-apiserver -o yaml | grep service-node-port-range"
		f.Severity = analyzer.Warning
	}
	f.Evidence = dedupEvidence(ev)
	return f
}

// share is the chance that a new outgoing connection draws an allocated
// NodePort as its source port.
func (o *portOverlap) share() float64 { return float64(len(o.ports)) / float64(o.lp.Range.Len()) }

// overlapWords words the finding of o, as judgeOverlap judged it.
func overlapWords(o *portOverlap) (title, summary, cause, fix string) {
	eph, np := o.lp.Range, o.np
	where := "this node"
	if o.node != "" {
		where = "node " + o.node
	}
	title = fmt.Sprintf("ephemeral ports %s overlap the NodePort range %s on %s", eph, np.Range, where)
	summary = fmt.Sprintf("On %s the kernel picks outgoing source ports from %s (net.ipv4.ip_local_port_range), "+
		"and %d of them (%s) are in the NodePort range %s (%s) without being reserved in net.ipv4.ip_local_reserved_ports.",
		where, eph, rangesLen(o.open), rangesString(o.open), np.Range, np.Source())
	if np.Problem != "" {
		summary += " The --service-node-port-range flag could not be read (" + np.Problem + "), so the default range was used."
	}
	cause = "The ephemeral port range and the NodePort range were configured independently; " +
		"nothing keeps local clients from using a port that kube-proxy owns as a NodePort."
	switch {
	case len(o.ports) > 0:
		summary += fmt.Sprintf(" %d allocated NodePort(s) lie in the overlap (%s): every new outgoing connection "+
			"that draws one of them as its source port fails, because the reply is taken for NodePort traffic "+
			"(about %.4f%% of connections; more when a busy local client cycles through the range quickly).",
			len(o.ports), joinPorts(o.ports), 100*o.share())
		cause += " A connection whose source port is an allocated NodePort gets its SYN/ACK reset by IPVS " +
			"(or DNATed by iptables), which shows up as probe failures and intermittent connect timeouts."
	case o.ownersShown:
		summary += " No allocated NodePort lies in the overlap yet, so this is latent: the first Service that gets a NodePort there will break connections."
	default:
		summary += " Which NodePorts are allocated is unknown (no Services or IPVS table in the bundle)."
	}
	return title, summary, cause, reserveFix(np.Range, o.lp.Reserved.Value)
}
