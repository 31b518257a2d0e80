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
	Proof: "the node's interfaces as ip addr or ip link list them: the Pods' links (Calico's cali*, the veths on cni0) with a larger MTU than the overlay's device (vxlan.calico, flannel.1), or the overlay's MTU with its " +
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

Evidence: ip addr, ip link (-d shows each overlay's kind), per node. Each
CNI's Pods are compared with its own overlay: Calico's cali* links with
vxlan.calico and wireguard.cali, the veths on cni0 or cbr0 with flannel.N
and flannel-wg (not the bridges themselves, which fall back to 1500 when
they have no port, nor docker0's veths), so that an overlay another CNI
left behind is not read. IPv6 overlays (flannel-v6.N, whose MTU the
kernel sets 20 bytes below the IPv4 one's), Cilium's and OVS's devices,
and tunl0 (which the kernel makes whenever the ipip module is loaded,
used or not), are not read. Without an overlay, the node's link is read
only where the listing shows one physical link (eth*, ens*, enp*, eno*,
bond*), or several of one MTU. A file listing a device twice for one
node holds several hosts' listings, none named: it is not judged.

Severity: a warning, of likely cause: the listing shows the mismatch,
not that it is what hangs the connections.

Fix: set the CNI's MTU to the node's MTU less the overlay's overhead
(Calico: veth_mtu in the calico-config ConfigMap, or FelixConfiguration's
mtuIfacePattern and autodetection; flannel: its net-conf's MTU), then
recreate the Pods, which keep the MTU they were created with.`,
}

var (
	// mtuOverlayNameRe names the overlays' devices by their CNI's names.
	mtuOverlayNameRe = lazyre.New(`^(?:vxlan\.calico|wireguard\.cali|flannel\.\d+|flannel-wg)$`)
	// mtuPodLinkRe names the links of Pods on the node's side: a bridge
	// they hang on is not one, since a bridge without ports falls back
	// to 1500.
	mtuPodLinkRe = lazyre.New(`^(?:cali[0-9a-f]{6,}|veth[0-9a-zA-Z]{4,})$`)
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
		if mtuListingsMerged(p.Snap.Links, node) {
			continue // several hosts' listings in one file, none named: whose link is whose is not shown
		}
		judgeMTUNode(p, node, p.Snap.LinksOf(node))
	}
	return nil
}

// mtuListingsMerged reports whether a file lists a device twice for node:
// the listings of several hosts pasted under no prompt that names them.
func mtuListingsMerged(links []model.Link, node string) bool {
	type fileDev struct{ file, dev string }
	seen := map[fileDev]bool{}
	for _, l := range links {
		if l.Node != node {
			continue
		}
		k := fileDev{l.Pos.File, l.Dev}
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// mtuCNI is a CNI's links on a node: the Pods' and the overlay's.
type mtuCNI struct {
	pods, overlays []*model.Link
}

// judgeMTUNode reports the mismatches of one node's links: each CNI's
// Pods against its own overlay (Calico's cali* against vxlan.calico and
// wireguard.cali, the veths on cni0 or cbr0 against flannel's devices),
// so that an overlay another CNI left behind is not read; and, where the
// node has no overlay, the Pods against its one link.
func judgeMTUNode(p *analyzer.Pass, node string, links []model.Link) {
	var calico, flannel mtuCNI
	var phys []*model.Link
	for i := range links {
		l := &links[i]
		switch {
		case l.MTU == 0:
		case mtuOverlayKind(l) != "" && strings.HasPrefix(l.Dev, "flannel"):
			flannel.overlays = append(flannel.overlays, l)
		case mtuOverlayKind(l) != "":
			calico.overlays = append(calico.overlays, l)
		case strings.HasPrefix(l.Dev, "cali") && mtuPodLinkRe.MatchString(l.Dev):
			calico.pods = append(calico.pods, l)
		case mtuPodLinkRe.MatchString(l.Dev) && (l.Master == "cni0" || l.Master == "cbr0"):
			// A veth of a Pod hangs on the CNI's bridge; one on docker0
			// is a container's, off the overlay.
			flannel.pods = append(flannel.pods, l)
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
	for _, c := range []mtuCNI{calico, flannel} {
		big, tight := mtuLargest(c.pods), mtuSmallest(c.overlays)
		switch {
		case big == nil:
		case tight != nil && big.MTU > tight.MTU:
			p.Report(mtuPodFinding(node, big, tight, c.pods, "the overlay's device"))
		case len(calico.overlays)+len(flannel.overlays) == 0 && wire != nil && big.MTU > wire.MTU:
			p.Report(mtuPodFinding(node, big, wire, c.pods, "the node's link"))
		}
	}
}

// mtuLargest returns the link of the largest MTU of ls, the first of
// those; nil for none.
func mtuLargest(ls []*model.Link) *model.Link {
	var big *model.Link
	for _, l := range ls {
		if big == nil || l.MTU > big.MTU {
			big = l
		}
	}
	return big
}

// mtuSmallest returns the link of the smallest MTU of ls, the first of
// those; nil for none.
func mtuSmallest(ls []*model.Link) *model.Link {
	var small *model.Link
	for _, l := range ls {
		if small == nil || l.MTU < small.MTU {
			small = l
		}
	}
	return small
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
