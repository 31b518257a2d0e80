package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// MTUMismatch finds a node whose Pods' interfaces have a larger MTU than
// the overlay or the node's own link carries.
var MTUMismatch = &analyzer.Rule{
	Name:        "mtu-mismatch",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindLinks, model.KindAddrs}, // ip addr's link lines give the MTUs
	SubjectKeys: []string{"node", "link"},
	Run:         runMTUMismatch,
	Explains:    []*analyzer.Rule{MTUBlackhole},
	Symptoms:    []analyzer.SymptomRef{ConnectionsTimeOut.At(165), ServiceUnreachable.At(278)},
	Proof: "the node's interfaces as ip addr or ip link list them: the Pods' links (cali*, veth*, cni0) with a larger MTU than the overlay's device (vxlan.calico, flannel.1), or the overlay's MTU with its " +
		"encapsulation larger than the node's only physical link's, which names the MTU the CNI set as the likely cause",
	Unproven: "that the mismatch is what hangs the connections of the ticket: packets larger than the path only get " +
		"lost where path MTU discovery fails; `ping -M do` at the Pods' MTU to a Pod on another node decides",
	Doc: `the Pods' MTU is larger than the overlay or the node carries

A Pod's interface sends packets up to its MTU, which the CNI plugin sets
when it creates the Pod: the node's MTU less the overlay's encapsulation
(VXLAN 50 bytes, WireGuard 60, IP-in-IP 20), so that a full packet still
fits once wrapped. A Pod created with a larger MTU than the overlay's
device carries (its veth at 1500 beside vxlan.calico at 1392), or an
overlay whose packets, wrapped, no longer fit the node's own link
(flannel.1 at 1450 on a link of 1450), sends full-size packets that the
path drops or has to fragment: small requests work, large responses and
TLS handshakes hang, unless path MTU discovery brings each sender down.

It happens when the CNI plugin cannot read the MTU it should use (Calico
reads the autodetected one from /var/lib/calico/mtu), when the node's
MTU is below 1500 (OpenStack, VPNs, some clouds) and the CNI was set for
1500, and when the MTU was changed and the Pods created before keep the
old one.

Evidence: ip addr, ip link (-d shows each overlay's kind), per node. The
overlay's devices are known by their CNI's names: vxlan.calico,
vxlan-v6.calico, wireguard.cali, flannel.N, flannel-wg; Cilium's and
OVS's devices, and tunl0 (which the kernel makes whenever the ipip module
is loaded, used or not), are not read. The Pods' links are Calico's
cali* and the veths on the CNI's bridge (cni0, cbr0), not those on
docker0. Without an overlay, the node's link is read only where the
listing shows one physical link (eth*, ens*, enp*, eno*, bond*), or
several of one MTU.

Severity: a warning, of likely cause: the listing shows the mismatch,
not that it is what hangs the connections.

Fix: set the CNI's MTU to the node's MTU less the overlay's overhead
(Calico: veth_mtu in the calico-config ConfigMap, or FelixConfiguration's
mtuIfacePattern and autodetection; flannel: its net-conf's MTU), then
recreate the Pods, which keep the MTU they were created with.`,
}

var (
	// mtuOverlayNameRe names the overlays' devices by their CNI's names.
	mtuOverlayNameRe = lazyre.New(`^(?:vxlan\.calico|vxlan-v6\.calico|wireguard\.cali|wg-v6\.cali|flannel\.\d+|flannel-v6\.\d+|flannel-wg(?:-v6)?)$`)
	// mtuPodLinkRe names the links of Pods on the node's side, and the
	// bridges they hang on.
	mtuPodLinkRe = lazyre.New(`^(?:cali[0-9a-f]{6,}|veth[0-9a-zA-Z]{4,}|cni0|cbr0)$`)
	// mtuPhysRe names the node's physical links.
	mtuPhysRe = lazyre.New(`^(?:eth\d+|ens\d+\w*|enp\d+\w*|eno\d+\w*|enx[0-9a-f]+|em\d+|bond\d+)$`)
)

// mtuOverlayKind is the overlay kind of a link its CNI's name marks as an
// overlay's device (its kind where ip -d link shows it), "" for any other.
func mtuOverlayKind(l *model.Link) string {
	if !mtuOverlayNameRe.MatchString(l.Dev) {
		return ""
	}
	switch {
	case l.Kind != "":
		return l.Kind
	case strings.Contains(l.Dev, "wireguard") || strings.Contains(l.Dev, "wg"):
		return "wireguard"
	}
	return "vxlan"
}

func runMTUMismatch(p *analyzer.Pass) error {
	var nodes []string
	seen := map[string]bool{}
	for _, l := range p.Snap.Links {
		if !seen[l.Node] {
			seen[l.Node] = true
			nodes = append(nodes, l.Node)
		}
	}
	if len(nodes) > 1 && seen[""] {
		nodes = slices.DeleteFunc(nodes, func(n string) bool { return n == "" }) // node-less links go with each node
	}
	for _, node := range nodes {
		judgeMTUNode(p, node, p.Snap.LinksOf(node))
	}
	return nil
}

// judgeMTUNode reports the mismatches of one node's links.
func judgeMTUNode(p *analyzer.Pass, node string, links []model.Link) {
	var overlays, pods, phys []*model.Link
	for i := range links {
		l := &links[i]
		switch {
		case l.MTU == 0:
		case mtuOverlayKind(l) != "":
			overlays = append(overlays, l)
		case mtuPodLinkRe.MatchString(l.Dev) && (!strings.HasPrefix(l.Dev, "veth") || l.Master == "cni0" || l.Master == "cbr0"):
			// A veth of a Pod hangs on the CNI's bridge; one on docker0
			// is a container's, off the overlay.
			pods = append(pods, l)
		case mtuPhysRe.MatchString(l.Dev):
			phys = append(phys, l)
		}
	}
	var wire *model.Link // the node's one link, or the first of several of one MTU
	for _, l := range phys {
		if wire == nil {
			wire = l
		} else if l.MTU != wire.MTU {
			wire = nil
			break
		}
	}
	// The Pods' largest MTU against the smallest a Pod's packet meets.
	var big *model.Link // a Pod's own link before the bridge, at the same MTU
	bridge := func(l *model.Link) bool { return l.Dev == "cni0" || l.Dev == "cbr0" }
	for _, l := range pods {
		if big == nil || l.MTU > big.MTU || l.MTU == big.MTU && bridge(big) && !bridge(l) {
			big = l
		}
	}
	var tight *model.Link
	for _, o := range overlays {
		if tight == nil || o.MTU < tight.MTU {
			tight = o
		}
	}
	switch {
	case big != nil && tight != nil && big.MTU > tight.MTU:
		p.Report(mtuPodFinding(node, big, tight, pods, "the overlay's device"))
	case big != nil && tight == nil && wire != nil && big.MTU > wire.MTU:
		p.Report(mtuPodFinding(node, big, wire, pods, "the node's link"))
	}
}

// mtuPodFinding reports Pods' links larger than the smaller link (an
// overlay's device, or the node's link) their packets go through.
func mtuPodFinding(node string, big, small *model.Link, pods []*model.Link, what string) analyzer.Finding {
	on := onNode(node)
	var over []string
	for _, l := range pods {
		if l.MTU > small.MTU {
			over = append(over, l.Dev)
		}
	}
	f := analyzer.Finding{
		Subject:   subject("node", node, "link", small.Dev),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title:     fmt.Sprintf("Pods%s have MTU %d, larger than %s %s (%d)", on, big.MTU, what, small.Dev, small.MTU),
		Summary: fmt.Sprintf("%s%s %s MTU %d, but %s %s carries %d: a Pod's full-size packets to other nodes do not "+
			"fit, and are dropped or fragmented; small requests work while large responses and TLS handshakes hang "+
			"where path MTU discovery does not bring the senders down.", plural(len(over), "A Pod's link", "Pods' links"),
			on, plural(len(over), "has", "have"), big.MTU, what, small.Dev, small.MTU),
		Cause: fmt.Sprintf("The CNI gave the Pods an MTU of %d, larger than the %d of %s: it did not apply the "+
			"overlay's or the node's MTU (Calico reads the autodetected one from /var/lib/calico/mtu), or the Pods "+
			"were created before it was lowered.", big.MTU, small.MTU, small.Dev),
		Alternatives: []string{"the Pods' traffic does not leave through " + small.Dev + " (a node of another " +
			"route, or Pods not on this overlay)"},
		Fix: fmt.Sprintf("Set the CNI's MTU to %d or less (Calico: veth_mtu in calico-config; flannel: its net-conf), "+
			"then recreate the Pods.", small.MTU),
		Decide: fmt.Sprintf("# from a Pod%s to a Pod on another node: fails at the Pods' MTU, passes at %d\n"+
			"ping -M do -s %d OTHER_POD_IP; ping -M do -s %d OTHER_POD_IP", on, small.MTU, big.MTU-28, small.MTU-28),
		Facts: map[string]any{"pod_mtu": big.MTU, "link": small.Dev, "link_mtu": small.MTU, "pod_links": over},
		Evidence: []analyzer.Evidence{
			{Pos: big.Pos, Note: fmt.Sprintf("%s mtu %d", big.Dev, big.MTU)},
			{Pos: small.Pos, Note: fmt.Sprintf("%s mtu %d", small.Dev, small.MTU)},
		},
		Supports: []string{fmt.Sprintf("%s: %s mtu %d", big.Pos, big.Dev, big.MTU),
			fmt.Sprintf("%s: %s mtu %d", small.Pos, small.Dev, small.MTU)},
	}
	return f
}
