package rules

import (
	"fmt"
	"github.com/netmortem/netmortem/internal/shq"
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// StaleVTEPNeighbor finds a node's neighbour entry on its VXLAN device
// that names another MAC than the VTEP at that address has: overlay
// traffic to that node's Pods goes to a MAC nobody answers to.
var StaleVTEPNeighbor = &analyzer.Rule{
	Name:     "stale-vtep-neighbor",
	Severity: analyzer.Error,
	Needs:    []model.Kind{model.KindNeighbors},
	NeedsAny: []model.Kind{model.KindAddrs, model.KindKube},
	Uses:     []model.Kind{model.KindLinks},
	Proof: "a neighbour entry (ip neigh, arp -na) on a VXLAN device (flannel.1, vxlan.calico, a vxlan link) " +
		"maps a VTEP address to a MAC, and the ip addr of the VXLAN device that holds that address shows " +
		"another MAC: the entry is stale",
	Unproven: "with Nodes but without the VTEP's own ip addr, a permanent neighbour entry for an address in no " +
		"Node's podCIDR is likely a gone node's (a warning), and `bridge fdb show dev flannel.1` (the underlay " +
		"address the entry's MAC leads to, against the Nodes' addresses) decides",
	SubjectKeys: []string{"node", "address", "interface"},
	Run:         runStaleVTEPNeighbor,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(200), ConnectionsTimeOut.At(110)},
	Doc: `a VXLAN neighbour entry points at a VTEP MAC that is gone

Overlay networks in VXLAN mode (flannel's vxlan backend, Calico's VXLAN,
Cilium's tunnel) tell each node the other nodes' tunnel endpoints: a
permanent neighbour entry (ip neigh: the remote VTEP's address on the
VXLAN device to its MAC) and a forwarding entry (bridge fdb: that MAC to
the node's underlay address). When a node's VXLAN device gets a new MAC
(a reboot where systemd's MACAddressPolicy=random reassigns it after the
agent published the first one, a node replaced under the same subnet) or
a node goes away, entries that still name the old MAC send the overlay's
packets to a MAC no device has: the receiving kernel drops them, and
every Pod of that node is unreachable from the others, while the nodes
themselves reach each other.

Evidence: neighbour entries on a VXLAN device (ip neigh, arp -na); the
VXLAN device of the node holding that address (ip addr or ip link: its
link/ether); Nodes (kubectl get nodes -o json: their podCIDRs).

Severity: error when the VXLAN device that holds the address shows
another MAC than the neighbour entry (proven by the two outputs); a
warning of likely cause when only the Nodes show that no node's podCIDR
holds a permanent entry's address (a gone node's VTEP).

Fix: restart the overlay's agent on the node whose MAC changed (flanneld,
calico-node) so that it publishes the device's MAC again (flannel's
flannel.alpha.coreos.com/backend-data VtepMAC annotation); make the MAC
stable (MACAddressPolicy=none for the VXLAN device in a systemd .link
file); delete the stale entries on the other nodes (ip neigh del ADDR dev
flannel.1; bridge fdb del MAC dev flannel.1) if the agent does not.`,
}

// vxlanDevNames are the VXLAN devices of the common CNIs, for bundles
// whose link listing does not give the kind.
var vxlanDevNames = []string{"flannel.1", "flannel-v6.1", "vxlan.calico", "vxlan-v6.calico", "cilium_vxlan"}

// isVXLANDev tells whether dev is a VXLAN device: by its kind when a
// link listing gives it, by its name otherwise.
func isVXLANDev(s *model.Snapshot, node, dev string) bool {
	for _, l := range s.LinksOf(node) {
		if l.Dev == dev && l.Kind != "" {
			return l.Kind == "vxlan"
		}
	}
	for _, n := range vxlanDevNames {
		if dev == n {
			return true
		}
	}
	return false
}

func runStaleVTEPNeighbor(p *analyzer.Pass) error {
	s := p.Snap
	for i := range s.Neighbors {
		n := &s.Neighbors[i]
		if n.MAC == "" || !n.IP.IsValid() || !isVXLANDev(s, n.Node, n.Dev) {
			continue
		}
		if a := vtepAddr(s, n); a != nil {
			if !strings.EqualFold(a.MAC, n.MAC) {
				p.Report(staleVTEPFinding(n, a))
			}
			continue
		}
		if n.State == "PERMANENT" && len(s.Kube.Nodes) > 0 && !podCIDRHolds(s, n.IP) {
			p.Report(goneVTEPFinding(s, n))
		}
	}
	return nil
}

// vtepAddr returns the address of a VXLAN device, on another node than
// the neighbour entry's (or of a bundle that does not say), that is the
// entry's address and shows its device's MAC.
func vtepAddr(s *model.Snapshot, n *model.Neighbor) *model.IfAddr {
	for i := range s.Addrs {
		a := &s.Addrs[i]
		if a.Prefix.Addr() != n.IP || a.MAC == "" || a.Dev != n.Dev {
			continue
		}
		if a.Node != "" && a.Node == n.Node {
			continue // the node's own address: not a neighbour's
		}
		return a
	}
	return nil
}

// podCIDRHolds tells whether a Node's podCIDR holds ip.
func podCIDRHolds(s *model.Snapshot, ip netip.Addr) bool {
	for _, node := range s.Kube.Nodes {
		cidrs := append([]string{node.Spec.PodCIDR}, node.Spec.PodCIDRs...)
		for _, c := range cidrs {
			if pr, err := netip.ParsePrefix(c); err == nil && pr.Contains(ip) {
				return true
			}
		}
	}
	return false
}

func staleVTEPFinding(n *model.Neighbor, a *model.IfAddr) analyzer.Finding {
	on, owner := "", "the node that holds it"
	if n.Node != "" {
		on = " on " + n.Node
	}
	if a.Node != "" {
		owner = a.Node
	}
	state := strings.ToLower(n.State)
	f := analyzer.Finding{
		Severity:  analyzer.Error,
		Certainty: analyzer.Proven,
		Subject:   subject("node", n.Node, "address", n.IP.String(), "interface", n.Dev),
		Facts: map[string]any{"address": n.IP.String(), "interface": n.Dev, "neighbor_mac": n.MAC,
			"vtep_mac": a.MAC, "state": n.State},
		Evidence: []analyzer.Evidence{
			{Pos: n.Pos, Note: fmt.Sprintf("%s at %s on %s, %s", n.IP, n.MAC, n.Dev, n.State)},
			{Pos: a.Pos, Note: fmt.Sprintf("%s on %s, link/ether %s", a.Prefix, a.Dev, a.MAC)},
		},
		Supports: []string{
			fmt.Sprintf("%s: the neighbour entry%s maps %s on %s to %s (%s)", n.Pos, on, n.IP, n.Dev, n.MAC, n.State),
			fmt.Sprintf("%s: %s's %s holds %s with link/ether %s", a.Pos, owner, a.Dev, a.Prefix, a.MAC),
		},
		Contradicts: []string{fmt.Sprintf("bridge fdb show dev %s naming %s: the VXLAN forwarding follows the "+
			"device's MAC, and the neighbour entry alone is old", n.Dev, a.MAC)},
	}
	if n.Node != "" {
		f.Facts["node"] = n.Node
	}
	if a.Node != "" {
		f.Facts["vtep_node"] = a.Node
	}
	f.Title = fmt.Sprintf("the %s neighbour entry of %s%s names %s, but that VTEP's MAC is %s",
		n.Dev, n.IP, on, n.MAC, a.MAC)
	f.Summary = fmt.Sprintf("The %s neighbour entry%s for the VTEP %s says %s, while %s's %s, which holds %s, "+
		"has the MAC %s. Overlay packets to the Pods behind %s are sent to a MAC no device has, and the receiving "+
		"kernel drops them.", state, on, n.IP, n.MAC, owner, a.Dev, n.IP, a.MAC, n.IP)
	f.Cause = fmt.Sprintf("%s's VXLAN device changed its MAC to %s after the overlay agent published %s (a reboot "+
		"where systemd's MACAddressPolicy=random reassigns it, a device recreated), and the other nodes kept the "+
		"old VTEP MAC in their neighbour (and FDB) entries.", owner, a.MAC, n.MAC)
	f.Fix = fmt.Sprintf("Restart the overlay agent (flanneld, calico-node) on %s so it publishes %s again, and "+
		"check the entries on the other nodes (ip neigh show dev %s; bridge fdb show dev %s); make the MAC stable "+
		"with MACAddressPolicy=none in a systemd .link file for %s.", owner, a.MAC, n.Dev, n.Dev, n.Dev)
	return f
}

func goneVTEPFinding(s *model.Snapshot, n *model.Neighbor) analyzer.Finding {
	on := ""
	if n.Node != "" {
		on = " on " + n.Node
	}
	first := s.Kube.Nodes[0]
	f := analyzer.Finding{
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Subject:   subject("node", n.Node, "address", n.IP.String(), "interface", n.Dev),
		Facts: map[string]any{"address": n.IP.String(), "interface": n.Dev, "neighbor_mac": n.MAC,
			"nodes": len(s.Kube.Nodes)},
		Evidence: []analyzer.Evidence{
			{Pos: n.Pos, Note: fmt.Sprintf("%s at %s on %s, %s", n.IP, n.MAC, n.Dev, n.State)},
			{Pos: first.Source.Pos, Note: "the Nodes' podCIDRs"},
		},
		Supports: []string{
			fmt.Sprintf("%s: the permanent neighbour entry%s maps %s on %s to %s", n.Pos, on, n.IP, n.Dev, n.MAC),
			fmt.Sprintf("none of the %d Nodes listed has a podCIDR that holds %s", len(s.Kube.Nodes), n.IP),
		},
		Contradicts:  []string{"a Node not in the listing (a partial kubectl get nodes) whose podCIDR holds " + n.IP.String()},
		Alternatives: []string{"a node removed from the cluster whose VTEP entries the overlay agent did not delete", "a Node listing that leaves out the node of " + n.IP.String()},
		Decide: fmt.Sprintf("# the underlay address of that VTEP, against the Nodes' addresses\n"+
			"bridge fdb show dev %s | grep %s", shq.Quote(n.Dev), n.MAC),
	}
	if n.Node != "" {
		f.Facts["node"] = n.Node
	}
	f.Title = fmt.Sprintf("the %s neighbour entry of %s%s belongs to no node's podCIDR: a gone node's VTEP", n.Dev, n.IP, on)
	f.Summary = fmt.Sprintf("A permanent neighbour entry%s maps the VTEP %s on %s to %s, but no Node's podCIDR holds "+
		"%s: the node it stood for is most likely gone, and a new node given that subnet later would be sent to the "+
		"old MAC.", on, n.IP, n.Dev, n.MAC, n.IP)
	f.Cause = "Most likely the overlay agent did not remove the entries of a node that left the cluster."
	f.Fix = fmt.Sprintf("Delete the stale entries (ip neigh del %s dev %s; bridge fdb del %s dev %s) or restart the "+
		"overlay agent so it rebuilds them from the current Nodes.", n.IP, n.Dev, n.MAC, n.Dev)
	return f
}
