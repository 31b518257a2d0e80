package model

import "net/netip"

// The reachability of a node's path as Cilium's health checks report it.
const (
	HealthReachable   = "reachable"
	HealthUnreachable = "unreachable"
	HealthUnknown     = "unknown" // no probe has answered or failed yet (a node starting)
	// HealthPartial is a path whose primary address answers and a
	// secondary one (the other address family's) does not, or of whose
	// addresses Cilium 1.17's counts ("1/2") show some reachable.
	HealthPartial = "partial"
)

// CiliumNodeHealth is what a node's Cilium agent found of one node of the
// cluster (itself included) through its health checks, as `cilium status`
// (its Cluster health table) or `cilium-health status` prints it: every
// few minutes the agent probes each node's own address (the host path)
// and its health endpoint, an address of the Pod network (the endpoint
// path), with an ICMP echo and an HTTP request to port 4240.
type CiliumNodeHealth struct {
	// Node is the node whose agent reported, when the prompt or the file
	// names it.
	Node string `json:"node,omitempty"`
	// Peer is the node probed, as Cilium names it (cluster/name in a
	// cluster mesh).
	Peer string `json:"peer"`
	// Local tells that Peer is the reporting node itself ("(localhost)").
	Local bool `json:"local,omitempty"`
	// Table numbers the table or listing the record is of in its file,
	// from 1: two agents' output pasted one after the other are two.
	Table int `json:"table"`
	// Reachable and Total are the table's sum ("Cluster health: 4/6
	// reachable"), of every node while the table lists only those failing;
	// 0 and 0 where it is not shown.
	Reachable int `json:"reachable,omitempty"`
	Total     int `json:"total,omitempty"`
	// IP is the peer's primary host address; invalid where Cilium prints
	// "Unavailable".
	IP netip.Addr `json:"ip,omitzero"`
	// Host and Endpoint are the reachability of the two paths
	// (HealthReachable, HealthUnreachable, HealthUnknown, HealthPartial),
	// as the table prints it or as the probes below give it; "" when not
	// shown.
	Host     string `json:"host,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	// EndpointIP is the health endpoint's address, where the probes are
	// listed.
	EndpointIP netip.Addr `json:"endpoint_ip,omitzero"`
	// The probes of each path's primary address, where `cilium-health
	// status` lists them: "OK" or the failure as printed ("Connection timed
	// out", "Get \"http://10.0.0.2:4240/hello\": dial tcp 10.0.0.2:4240:
	// i/o timeout"); "" when not shown. A secondary address's failure
	// makes its path HealthPartial, its probes are not kept.
	HostICMP     string `json:"host_icmp,omitempty"`
	HostHTTP     string `json:"host_http,omitempty"`
	EndpointICMP string `json:"endpoint_icmp,omitempty"`
	EndpointHTTP string `json:"endpoint_http,omitempty"`
	Pos          Pos    `json:"pos"`
}
