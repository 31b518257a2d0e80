package rules

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// CNIWrongInterface finds a CNI that took the wrong interface or address
// of its node for the overlay.
var CNIWrongInterface = &analyzer.Rule{
	Name:        "cni-wrong-interface",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindLogs, model.KindKube},
	SubjectKeys: []string{"address", "interface", "component"},
	Run:         runCNIWrongInterface,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(270), DNSTimeouts.At(150)},
	Proof: "the CNI's own choice of address (flannel's \"Using interface with name X and address Y\", calico-node's " +
		"\"Using autodetected IPv4 address on interface X: Y\", or the node annotations flannel.alpha.coreos.com/public-ip " +
		"and projectcalico.org/IPv4Address) and the Kubernetes objects showing that address on two nodes at once (the " +
		"annotations, or the host-network CNI Pods at one address on two nodes): two kinds of evidence",
	Unproven: "one kind of evidence names the cause as likely: the CNI's line alone choosing the VirtualBox NAT address " +
		"10.0.2.15 or a container bridge (docker0, cni0), or one address on two nodes in the objects alone; the CNI Pods " +
		"alone at one address on two nodes show the nodes' own addresses, not what the CNI chose (unknown). The command " +
		"that prints each node's public-ip annotation decides",
	Doc: `the CNI took the wrong node interface for the overlay

A CNI that carries Pod traffic between nodes (flannel, Calico, Canal)
picks, at start, the node address its peers reach it at: the interface of
the default route unless told otherwise (flannel --iface, --public-ip;
Calico IP_AUTODETECTION_METHOD; Weave, Cilium devices). On a node with two
NICs it may pick the wrong one. In Vagrant and VirtualBox the first NIC is
the NAT interface, 10.0.2.15 on every VM: every node advertises 10.0.2.15,
the overlay's packets for another node go to the node itself, and Pods on
different nodes cannot reach each other (Services with a backend on another
node time out, DNS from a node without a CoreDNS Pod fails). A container
bridge (docker0, cni0) is never reachable from other nodes either.

Evidence: the CNI's own log line of its choice (flannel "Using interface
with name enp0s3 and address 10.0.2.15"; calico-node "Using autodetected
IPv4 address on interface eth0: 10.0.2.15/24"), the Nodes' annotations of
it (flannel.alpha.coreos.com/public-ip, projectcalico.org/IPv4Address), and
the host-network CNI Pods (kube-flannel, calico-node, canal, weave-net,
cilium) with their node and address (kubectl get pods -o wide).

Severity: error when the CNI's line and the objects agree (the address it
chose is that of two nodes at once); a warning of likely cause from one kind
of evidence (the line choosing 10.0.2.15 or a container bridge, or one
public-ip annotation on two nodes); a warning of unknown cause when only the
CNI Pods share one address across nodes. Nothing when every node has an
address of its own on a real interface.

Fix: tell the CNI which interface to use (flannel: --iface=enp0s8 in the
kube-flannel DaemonSet, or --iface-regex / --public-ip; Calico:
IP_AUTODETECTION_METHOD=interface=eth1 or can-reach=<another node>; Weave:
IPALLOC and the peers' addresses; Cilium: --devices), and give the kubelet
the node's routed address (--node-ip), then restart the CNI Pods.`,
}

// cniChoiceRes read the CNIs' lines saying which interface and address
// they use for the overlay: flannel's "Using interface with name enp0s3
// and address 10.0.2.15", calico-node's "Using autodetected IPv4 address
// on interface eth0: 10.0.2.15/24".
var cniChoiceRes = []struct {
	cni string
	re  *lazyre.Regexp
}{
	{"flannel", lazyre.New(`Using interface with name (\S+) and address ([0-9a-fA-F.:]+)`)},
	{"calico", lazyre.New(`Using autodetected IPv[46] address on interface (\S+): ([0-9a-fA-F.:]+)`)},
}

// cniAddrAnnotations are the Node annotations in which a CNI records the
// address it chose for the node.
var cniAddrAnnotations = map[string]string{
	"flannel.alpha.coreos.com/public-ip": "flannel",
	"projectcalico.org/IPv4Address":      "calico",
}

// cniAgentPodRe names the host-network Pods of the CNIs' node agents
// (kube-flannel-ds-amd64-x7k2p, calico-node-p4t8n), not their operators:
// their address is their node's.
var cniAgentPodRe = lazyre.New(`^(kube-flannel|calico-node|canal|weave-net|cilium|kube-router|antrea-agent)(?:-[a-z0-9]+){1,3}$`)

// unroutedIfaceRe names interfaces no other node can reach the node at:
// container bridges, tunnels, the CNIs' own devices and the dummy devices
// that hold one address on every node (kube-ipvs0, NodeLocal DNSCache's
// nodelocaldns).
var unroutedIfaceRe = lazyre.New(`^(?:docker\d*|cni\d*|br-[0-9a-f]{12}|virbr\d+|lxcbr\d+|podman\d+|flannel\.\d+|flannel-wg|cali[0-9a-f]+|tunl\d+|vxlan[.\w-]*|weave|cilium_\w+|kube-ipvs0|nodelocaldns|lo)$`)

// virtualBoxNAT is the address VirtualBox's NAT gives every VM's first NIC.
var virtualBoxNAT = netip.MustParseAddr("10.0.2.15")

// cniChoice is one piece of evidence of a node's overlay address: a CNI's
// line (log), its Node annotation (annotation), or a CNI Pod's address
// (pod, the node's own address).
type cniChoice struct {
	cni, from   string // from: log, annotation, pod
	iface, node string // node: the node, or "Pod ns/name" of the CNI Pod whose log does not name its node
	addr        netip.Addr
	pos         model.Pos
	text        string
}

// cniChoices reads every piece of evidence of the overlay addresses: the
// CNIs' lines, the Nodes' annotations and the CNI agents' Pods.
func cniChoices(s *model.Snapshot) []cniChoice {
	var out []cniChoice
	for i := range s.Logs {
		le := &s.Logs[i]
		for _, c := range cniChoiceRes {
			m := c.re.FindStringSubmatch(le.Message)
			if m == nil {
				continue
			}
			a, err := netip.ParseAddr(m[2])
			if err != nil {
				continue
			}
			node := le.Node
			if node == "" && le.Pod != "" {
				node = "Pod " + objectName(le.Namespace, le.Pod) // one Pod of a DaemonSet per node
			}
			out = append(out, cniChoice{cni: c.cni, from: "log", iface: m[1], node: node, addr: a, pos: le.Pos,
				text: strings.TrimSpace(m[0])})
		}
	}
	for _, n := range s.Kube.Nodes {
		for _, k := range slices.Sorted(maps.Keys(cniAddrAnnotations)) {
			v, ok := n.Annotations[k]
			if !ok {
				continue
			}
			a, err := netip.ParseAddr(strings.SplitN(strings.TrimSpace(v), "/", 2)[0])
			if err != nil {
				continue
			}
			out = append(out, cniChoice{cni: cniAddrAnnotations[k], from: "annotation", node: n.Name, addr: a,
				pos: n.Source.FieldPos("metadata.annotations"), text: k + ": " + v})
		}
	}
	for _, p := range s.Kube.Pods {
		m := cniAgentPodRe.FindStringSubmatch(p.Name)
		a, err := netip.ParseAddr(p.Status.PodIP)
		if m == nil || err != nil || p.Spec.NodeName == "" || strings.Contains(p.Name, "-operator-") {
			continue
		}
		cni := strings.TrimPrefix(m[1], "kube-")
		out = append(out, cniChoice{cni: strings.TrimSuffix(strings.TrimSuffix(cni, "-node"), "-net"), from: "pod",
			node: p.Spec.NodeName, addr: a, pos: p.Source.Pos, text: fmt.Sprintf("Pod %s on %s at %s",
				objectName(p.Namespace, p.Name), p.Spec.NodeName, a)})
	}
	return out
}

// cniAddrGroup is the evidence of one overlay address, and its judgement.
type cniAddrGroup struct {
	addr    netip.Addr
	choices []cniChoice
	nodes   []string // the distinct nodes the address is given to
	pods    []string // the CNI Pods whose log gives it, when the log does not name their node
	bad     string   // why the address or interface is not routed between nodes, "" when it may be
	iface   string
}

func runCNIWrongInterface(p *analyzer.Pass) error {
	choices := cniChoices(p.Snap)
	var groups []*cniAddrGroup
	byAddr := map[netip.Addr]*cniAddrGroup{}
	for _, c := range choices {
		g := byAddr[c.addr]
		if g == nil {
			g = &cniAddrGroup{addr: c.addr}
			byAddr[c.addr] = g
			groups = append(groups, g)
		}
		g.choices = append(g.choices, c)
		switch {
		case strings.HasPrefix(c.node, "Pod "):
			// Two Pods of a DaemonSet may be one node's, one after the
			// other: they name the Pods, not two nodes.
			if !slices.Contains(g.pods, c.node) {
				g.pods = append(g.pods, c.node)
			}
		case c.node != "" && !slices.Contains(g.nodes, c.node):
			g.nodes = append(g.nodes, c.node)
		}
		if g.iface == "" && c.iface != "" {
			g.iface = c.iface
		}
	}
	single := singleNodeCluster(p.Snap)
	for _, g := range groups {
		slices.Sort(g.nodes)
	}
	for _, g := range groups {
		for _, c := range g.choices {
			switch {
			case c.from != "log" || g.bad != "":
			case unroutedIfaceRe.MatchString(c.iface):
				g.bad = fmt.Sprintf("%s is a bridge or tunnel of the node itself, which other nodes do not reach", c.iface)
			case c.addr == virtualBoxNAT:
				g.bad = "10.0.2.15 is the address VirtualBox's NAT gives the first NIC of every VM"
			case c.addr.IsLoopback() || c.addr.IsLinkLocalUnicast():
				g.bad = fmt.Sprintf("%s is not routed off the node", c.addr)
			}
		}
		if len(g.nodes) < 2 && (g.bad == "" || single) {
			continue
		}
		f, ok := judgeCNIAddr(g)
		if ok {
			p.Report(withFinding(f, cniAddrWords(g)))
		}
	}
	return nil
}

// singleNodeCluster reports whether the objects show one node and no other:
// an overlay with no peer carries nothing between nodes.
func singleNodeCluster(s *model.Snapshot) bool {
	nodes := map[string]bool{}
	for _, n := range s.Kube.Nodes {
		nodes[n.Name] = true
	}
	for _, p := range s.Kube.Pods {
		if p.Spec.NodeName != "" {
			nodes[p.Spec.NodeName] = true
		}
	}
	return len(nodes) == 1
}

// judgeCNIAddr judges one overlay address: proven when the CNI's own choice
// (its line or annotation) and the objects show it on two nodes, from two
// kinds of evidence; likely from the CNI's choice alone (one address on two
// nodes, or an interface that is not routed); unknown when only the CNI
// Pods, that is the nodes' own addresses, are shown on two nodes.
func judgeCNIAddr(g *cniAddrGroup) (analyzer.Finding, bool) {
	var f analyzer.Finding
	kinds := map[string]bool{}
	var logc *cniChoice
	for i := range g.choices {
		c := &g.choices[i]
		kinds[c.from] = true
		if c.from == "log" && logc == nil {
			logc = c
		}
	}
	choice := kinds["log"] || kinds["annotation"]
	dup := len(g.nodes) >= 2
	switch {
	case dup && kinds["log"] && (kinds["annotation"] || kinds["pod"]):
		f.Certainty, f.Severity = analyzer.Proven, analyzer.Error
	case dup && choice, g.bad != "":
		f.Certainty, f.Severity = analyzer.Likely, analyzer.Warning
	case dup:
		f.Certainty, f.Severity = analyzer.Unknown, analyzer.Warning
		f.Alternatives = []string{
			"the kubelets took the same address for their nodes (--node-ip) while the CNI was told its interface: the " +
				"overlay may use the right one",
		}
	default:
		return f, false
	}
	if logc != nil {
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s chose interface %s, address %s (%s)", logc.pos, logc.cni,
			cmp.Or(logc.iface, "?"), logc.addr, logc.text))
	}
	if g.bad != "" {
		f.Supports = append(f.Supports, g.bad)
	}
	if dup {
		var on []string
		for _, c := range g.choices {
			if c.from != "log" {
				on = append(on, fmt.Sprintf("%s (%s)", c.pos, c.text))
			}
		}
		f.Supports = append(f.Supports, fmt.Sprintf("%s is the overlay address of %d nodes (%s): %s", g.addr,
			len(g.nodes), strings.Join(g.nodes, ", "), strings.Join(on, "; ")))
	}
	if f.Certainty != analyzer.Proven {
		if !dup {
			f.Alternatives = append(f.Alternatives, "the cluster has one node, or every node has this address on a "+
				"network of its own (no overlay peer needs to reach it)")
		}
		f.Decide = cniDecide(g.choices[0].cni)
		if kinds["annotation"] && !kinds["log"] {
			f.Decide = fmt.Sprintf("# on %s: the interface that holds %s, against the one of the "+
				"network the nodes reach each other on\nip -4 -o addr show", strings.Join(g.nodes, " and "), g.addr)
		}
	}
	return f, true
}

// cniAddrWords words the finding of g.
func cniAddrWords(g *cniAddrGroup) analyzer.Finding {
	cni, iface := "the CNI", g.iface
	var ev []analyzer.Evidence
	for _, c := range g.choices {
		if cni == "the CNI" && c.from != "pod" {
			cni = c.cni
		}
		note := fmt.Sprintf("%s: %s", c.cni, c.text)
		if c.from == "pod" {
			note = fmt.Sprintf("CNI Pod on %s at %s", c.node, c.addr)
		}
		if len(ev) < maxGroupEvidence {
			ev = append(ev, analyzer.Evidence{Pos: c.pos, Note: note})
		}
	}
	if cni == "the CNI" {
		cni = g.choices[0].cni
	}
	on := "its nodes"
	switch {
	case len(g.nodes) > 0:
		on = strings.Join(g.nodes, ", ")
	case len(g.pods) > 0:
		on = "the nodes of " + strings.Join(g.pods, ", ")
	}
	ifaceWords := ""
	if iface != "" {
		ifaceWords = fmt.Sprintf(" (interface %s)", iface)
	}
	title := fmt.Sprintf("%s uses %s%s as the overlay address of %s", cni, g.addr, ifaceWords, on)
	if len(g.nodes) < 2 {
		title = fmt.Sprintf("%s on %s uses %s%s for the overlay, which other nodes do not reach", cni, on, g.addr, ifaceWords)
	}
	summary := fmt.Sprintf("%s advertises %s%s as the node address its peers send Pod traffic to", cni, g.addr, ifaceWords)
	if len(g.nodes) >= 2 {
		summary += fmt.Sprintf(", and %d nodes (%s) have that one address: each node's overlay packets for another "+
			"node go to an address every node holds, so Pods on different nodes cannot reach each other.", len(g.nodes), on)
	} else {
		summary += ": other nodes cannot reach the node there, so Pods on different nodes cannot reach each other."
	}
	if g.bad != "" {
		summary += " " + strings.ToUpper(g.bad[:1]) + g.bad[1:] + "."
	}
	facts := map[string]any{"address": g.addr.String(), "cni": cni}
	if len(g.nodes) > 0 {
		facts["nodes"] = strings.Join(g.nodes, ", ")
	}
	if len(g.pods) > 0 {
		facts["pods"] = strings.Join(g.pods, ", ")
	}
	if iface != "" {
		facts["interface"] = iface
	}
	return analyzer.Finding{
		Subject: subject("address", g.addr.String(), "interface", iface, "component", cni),
		Title:   title,
		Summary: summary,
		Cause: "The CNI picked the node's address by itself, from the interface of the default route (flannel without " +
			"--iface, Calico's first-found autodetection): the NAT NIC of a Vagrant/VirtualBox VM (10.0.2.15 on every " +
			"VM), a container bridge, or the NIC of a network the other nodes are not on.",
		Fix: "Tell the CNI its interface: flannel --iface=<NIC of the node network> (or --iface-regex, --public-ip) in " +
			"the kube-flannel DaemonSet; Calico IP_AUTODETECTION_METHOD=interface=<NIC> or can-reach=<another node's " +
			"address>; set the kubelet's --node-ip to the same address; then restart the CNI Pods.",
		Facts:    facts,
		Evidence: dedupEvidence(ev),
	}
}

// cniDecide is the command that prints the address the CNI recorded for
// each node: one address on two nodes, or one no other node routes to, is
// the wrong interface.
func cniDecide(cni string) string {
	ann := `{.metadata.annotations.flannel\.alpha\.coreos\.com/public-ip}`
	switch cni {
	case "calico", "canal":
		ann = `{.metadata.annotations.projectcalico\.org/IPv4Address}`
	case "flannel":
	default:
		ann += ` ` + `{.metadata.annotations.projectcalico\.org/IPv4Address}`
	}
	return "# one address on two nodes, or one the other nodes do not route to, is the wrong interface\n" +
		`kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name} ` + ann + `{"\n"}{end}'`
}
