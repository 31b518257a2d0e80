package rules

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// VXLANPortMismatch finds the two ends of the overlay configured with
// different VXLAN ports: Felix given two VXLANPort values, or one VXLAN
// device's dstport differing between nodes.
var VXLANPortMismatch = &analyzer.Rule{
	Name:     "vxlan-port-mismatch",
	Severity: analyzer.Error,
	NeedsAny: []model.Kind{model.KindLogs, model.KindLinks},
	Proof: "the VXLAN device of one name (vxlan.calico, flannel.1) has different dstports on two nodes (ip -d link), " +
		"and Felix's log shows it given two VXLANPort values from different sources, one of them the other node's",
	Unproven: "Felix's two VXLANPort values alone, or the two nodes' dstports alone, make the mismatch likely " +
		"(a warning), with `ip -d link show` of the VXLAN device on each node (its dstport) as what decides",
	SubjectKeys: []string{"node", "component", "setting", "interface"},
	Run:         runVXLANPortMismatch,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(190)},
	Doc: `the overlay's nodes use different VXLAN ports

Every node of a VXLAN overlay sends to the UDP port its own VXLAN device
is configured with (dstport) and listens on that same port: when two
nodes disagree, each sends to a port the other does not listen on, the
kernel drops the packets (or answers port unreachable), and Pods reach
Pods of their own node only. Calico's Felix reads VXLANPort from several
sources, the environment of the calico-node DaemonSet (FELIX_VXLANPORT)
over the FelixConfiguration of the datastore: nodes whose DaemonSet sets
it differently from the FelixConfiguration, or a change that reached some
nodes only, split the cluster. Flannel reads Backend.Port from its
net-conf.json; two DaemonSets or a changed ConfigMap do the same.

Evidence: Felix's "Parsed value for VXLANPort: N (from SOURCE)" lines
(calico-node's log at startup) with two values; the dstport of the VXLAN
device of one name on two nodes (ip -d link show).

Severity: error when both show it (Felix's two values and two nodes'
dstports, proven); a warning of likely cause from either alone, with the
dstport of the VXLAN device on each node as what decides.

Fix: configure the port in one place (remove FELIX_VXLANPORT from the
calico-node DaemonSet, or set it to the FelixConfiguration's vxlanPort;
one net-conf.json for flannel), restart the agent on every node, and
check that each node's VXLAN device has the same dstport and the
firewall between nodes allows it.`,
}

// felixVXLANPort is Felix's line for a value of VXLANPort and its source.
var felixVXLANPort = lazyre.New(`Parsed value for (VXLANPort(?:V6)?): (\d+) \(from (.+)\)\s*$`)

// felixSourceRank orders Felix's configuration sources, the one that
// wins first.
func felixSourceRank(src string) int {
	switch {
	case strings.HasPrefix(src, "environment"):
		return 0
	case strings.HasPrefix(src, "config file"):
		return 1
	case strings.Contains(src, "per-host"):
		return 2
	case strings.Contains(src, "global"):
		return 3
	}
	return 4
}

// felixPortValue is one value Felix read for VXLANPort.
type felixPortValue struct {
	port int
	src  string
	le   *model.LogEvent
}

func runVXLANPortMismatch(p *analyzer.Pass) error {
	s := p.Snap
	devPorts := vxlanDevPorts(s)
	type key struct{ node, setting string }
	var order []key
	values := map[key][]felixPortValue{}
	for i := range s.Logs {
		le := &s.Logs[i]
		m := felixVXLANPort.FindStringSubmatch(le.Message)
		if m == nil {
			continue
		}
		port, err := strconv.Atoi(m[2])
		if err != nil {
			continue
		}
		k := key{le.Node, m[1]}
		if values[k] == nil {
			order = append(order, k)
		}
		values[k] = append(values[k], felixPortValue{port: port, src: m[3], le: le})
	}
	reported := map[string]bool{}
	for _, k := range order {
		vs := values[k]
		if !slices.ContainsFunc(vs, func(v felixPortValue) bool { return v.port != vs[0].port }) {
			continue
		}
		var links []model.Link
		if k.setting == "VXLANPort" {
			links = devPorts["vxlan.calico"]
			reported["vxlan.calico"] = true
		}
		p.Report(felixPortFinding(k.node, k.setting, vs, links))
	}
	devs := make([]string, 0, len(devPorts))
	for d := range devPorts {
		devs = append(devs, d)
	}
	sort.Strings(devs)
	for _, d := range devs {
		if !reported[d] && len(devPorts[d]) > 0 {
			p.Report(linkPortFinding(d, devPorts[d]))
		}
	}
	return nil
}

// vxlanDevPorts returns, by VXLAN device name, one link per node whose
// dstport differs from another node's: the devices whose ports disagree.
func vxlanDevPorts(s *model.Snapshot) map[string][]model.Link {
	byDev := map[string][]model.Link{}
	for _, node := range s.Nodes() {
		if node == "" {
			continue
		}
		for _, l := range s.LinksOf(node) {
			if l.Kind == "vxlan" && l.Port > 0 && l.Node == node {
				byDev[l.Dev] = append(byDev[l.Dev], l)
			}
		}
	}
	out := map[string][]model.Link{}
	for d, ls := range byDev {
		if slices.ContainsFunc(ls, func(l model.Link) bool { return l.Port != ls[0].Port }) {
			out[d] = ls
		}
	}
	return out
}

func felixPortFinding(node, setting string, vs []felixPortValue, links []model.Link) analyzer.Finding {
	win := vs[0]
	var ports []string
	for _, v := range vs {
		if felixSourceRank(v.src) < felixSourceRank(win.src) {
			win = v
		}
		if p := strconv.Itoa(v.port); !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	var others []string
	for _, v := range vs {
		if v.port != win.port {
			others = append(others, fmt.Sprintf("%d (%s)", v.port, v.src))
		}
	}
	f := analyzer.Finding{
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Subject:   subject("node", node, "component", "felix", "setting", setting),
		Facts:     map[string]any{"setting": setting, "ports": ports, "effective": win.port, "effective_source": win.src},
	}
	if node != "" {
		f.Facts["node"] = node
	}
	var lines []string
	for _, v := range vs {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: v.le.Pos, Note: fmt.Sprintf("%s %d from %s", setting, v.port, v.src)})
		lines = append(lines, fmt.Sprintf("%s: %d from %s", v.le.Pos, v.port, v.src))
	}
	f.Supports = []string{fmt.Sprintf("Felix read %s with %d values: %s", setting, len(ports), strings.Join(lines, "; "))}
	on := ""
	if node != "" {
		on = " on " + node
	}
	if len(links) > 0 {
		f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
		var dp []string
		for _, l := range links {
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: l.Pos, Note: fmt.Sprintf("%s on %s: dstport %d", l.Dev, l.Node, l.Port)})
			dp = append(dp, fmt.Sprintf("%s %d (%s)", l.Node, l.Port, l.Pos))
		}
		f.Supports = append(f.Supports, "the nodes' vxlan.calico devices have different dstports: "+strings.Join(dp, ", "))
	} else {
		f.Contradicts = []string{fmt.Sprintf("every node's vxlan.calico with dstport %d (ip -d link show vxlan.calico): "+
			"the other value is then used nowhere", win.port)}
		f.Alternatives = []string{
			fmt.Sprintf("nodes without the %s's value use %s, and the two sets of nodes cannot reach each other", win.src, strings.Join(others, ", ")),
			"every node has the same override and the other value is used nowhere (harmless)",
		}
		f.Decide = "# on two nodes: the dstport of each\nip -d link show vxlan.calico"
	}
	f.Title = fmt.Sprintf("Felix%s is given two VXLAN ports: %d (%s) and %s", on, win.port, win.src, strings.Join(others, ", "))
	f.Summary = fmt.Sprintf("Felix%s read %s as %s from different sources; it uses %d (the %s's value wins), while "+
		"nodes without that setting use the other value. Nodes that disagree on the VXLAN port send their "+
		"encapsulated traffic to a port the other end does not listen on, so Pods reach only Pods on nodes "+
		"of the same port.", on, setting, strings.Join(ports, " and "), win.port, win.src)
	f.Cause = fmt.Sprintf("%s is configured twice with different values, %d (%s) and %s, so the nodes' VXLAN "+
		"devices do not all use the same UDP port.", setting, win.port, win.src, strings.Join(others, ", "))
	f.Fix = "Set the VXLAN port in one place: remove FELIX_VXLANPORT from the calico-node DaemonSet's environment " +
		"(or give it the FelixConfiguration's vxlanPort), restart calico-node on every node, and check that " +
		"`ip -d link show vxlan.calico` shows the same dstport everywhere."
	f.Evidence = dedupEvidence(f.Evidence)
	return f
}

func linkPortFinding(dev string, links []model.Link) analyzer.Finding {
	byPort := map[int][]string{}
	var ports []int
	for _, l := range links {
		if byPort[l.Port] == nil {
			ports = append(ports, l.Port)
		}
		byPort[l.Port] = append(byPort[l.Port], l.Node)
	}
	var parts []string
	for _, p := range ports {
		parts = append(parts, fmt.Sprintf("%d on %s", p, strings.Join(byPort[p], ", ")))
	}
	f := analyzer.Finding{
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Subject:   subject("interface", dev, "setting", "dstport"),
		Facts:     map[string]any{"interface": dev, "ports": ports},
		Supports:  []string{fmt.Sprintf("ip -d link shows %s with dstport %s", dev, strings.Join(parts, "; "))},
		Contradicts: []string{"the nodes of different ports never exchange overlay traffic (separate clusters " +
			"or pools read into one bundle)"},
		Alternatives: []string{"the nodes' overlay agents were configured with different ports",
			"listings of nodes of different clusters read into one bundle"},
		Decide: "# on each node: the VXLAN port the kernel listens on, against the CNI's port setting " +
			"(FelixConfiguration vxlanPort, flannel's net-conf.json Backend.Port)\nss -ulpn",
	}
	for _, l := range links {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: l.Pos, Note: fmt.Sprintf("%s on %s: dstport %d", l.Dev, l.Node, l.Port)})
	}
	f.Title = fmt.Sprintf("%s uses different VXLAN ports on different nodes: %s", dev, strings.Join(parts, "; "))
	f.Summary = fmt.Sprintf("The VXLAN device %s has dstport %s. Each node sends to its own port and listens on it, "+
		"so the overlay's packets between nodes of different ports are dropped.", dev, strings.Join(parts, "; "))
	f.Cause = "The overlay agents of the nodes were configured with different VXLAN ports."
	f.Fix = fmt.Sprintf("Configure one VXLAN port for every node (the CNI's setting), restart its agent, and check "+
		"that `ip -d link show %s` shows the same dstport everywhere.", dev)
	return f
}
