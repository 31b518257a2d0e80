package model

import "net/netip"

// BGPPeer is one BGP session of a node as `calicoctl node status` lists
// it: a peer of Calico's BIRD (the node-to-node mesh, a global or a
// node-specific peer), its state and BIRD's word on it.
type BGPPeer struct {
	Node string `json:"node,omitempty"`
	// Family is the table's address family: IPv4 or IPv6.
	Family string     `json:"family"`
	Peer   netip.Addr `json:"peer"`
	// Type is the peer's kind: "node-to-node mesh", "global", "node
	// specific".
	Type string `json:"type,omitempty"`
	// State is BIRD's protocol state: "up", "start", "down", "passive".
	State string `json:"state"`
	// Since is when the state began, as printed (a time or a date).
	Since string `json:"since,omitempty"`
	// Info is BIRD's word on the session, its wrapped lines joined:
	// "Established", "Active Socket: Connection refused", "Connect",
	// "OpenSent", "Idle".
	Info string `json:"info,omitempty"`
	Pos  Pos    `json:"pos"`
}

// Established reports whether the session is up.
func (p *BGPPeer) Established() bool {
	return p.State == "up" && p.Info == "Established"
}
