package model

// Link is one network interface as `ip link`, `ip -d link`, `ip -j link` or
// `bridge -d link show` list it, or a bridge port's hairpin_mode file.
// Fields a listing does not show stay zero: MTU 0 and Kind "" are "not
// shown", not "none".
type Link struct {
	Node string `json:"node,omitempty"`
	Dev  string `json:"dev"` // without its @peer
	// MAC is the link's hardware address ("link/ether 02:42:..."), lower
	// case; "" when not shown.
	MAC string `json:"mac,omitempty"`
	// MTU is the link's MTU, 0 when not shown.
	MTU int `json:"mtu,omitempty"`
	// Kind is the link's type as `ip -d link` shows it: vxlan, geneve,
	// wireguard, veth, bridge, ipip ...; "" when not shown.
	Kind string `json:"kind,omitempty"`
	// Master is the bridge (or bond) the link is a port of.
	Master string `json:"master,omitempty"`
	// State is the operational state (UP, DOWN, UNKNOWN) or, in `bridge
	// link`, the port's state (forwarding, disabled ...).
	State string `json:"state,omitempty"`
	// Hairpin is the bridge port's hairpin mode (a frame may go back out
	// of the port it came in on), nil when not shown.
	Hairpin *bool `json:"hairpin,omitempty"`
	// VNI and Port are the VXLAN or Geneve link's id and UDP port.
	VNI  int `json:"vni,omitempty"`
	Port int `json:"port,omitempty"`
	Pos  Pos `json:"pos"`
}

// Overhead returns the bytes an overlay link of kind adds to each packet
// over IPv4 (outer IP, UDP and the overlay's header): VXLAN 50, Geneve 50
// (without options), WireGuard 60, IP-in-IP 20, GRE 24; 0 for other kinds.
func Overhead(kind string) int {
	switch kind {
	case "vxlan", "geneve":
		return 50
	case "wireguard":
		return 60
	case "ipip":
		return 20
	case "gre", "gretap":
		return 24
	}
	return 0
}

// LinksOf returns the links the snapshot lists for node (node "" matches
// any, and a link without a node matches every node), one per device: a
// later listing of a device fills in what an earlier one did not show.
func (s *Snapshot) LinksOf(node string) []Link {
	var out []Link
	idx := map[string]int{}
	for _, l := range s.Links {
		if node != "" && l.Node != "" && l.Node != node {
			continue
		}
		key := l.Node + "\x00" + l.Dev
		i, ok := idx[key]
		if !ok {
			idx[key] = len(out)
			out = append(out, l)
			continue
		}
		o := &out[i]
		if l.MTU != 0 {
			o.MTU = l.MTU
		}
		if l.Kind != "" {
			o.Kind, o.VNI, o.Port = l.Kind, l.VNI, l.Port
		}
		if l.Master != "" {
			o.Master = l.Master
		}
		if l.Hairpin != nil {
			o.Hairpin = l.Hairpin
		}
		if l.State != "" {
			o.State = l.State
		}
	}
	return out
}
