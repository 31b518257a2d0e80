package model

// IPVSTimeouts are the timeouts IPVS gives its connection entries
// (`ipvsadm -l --timeout`), in seconds: an established TCP connection idle
// that long is forgotten, and its next packet is not forwarded.
type IPVSTimeouts struct {
	Node   string `json:"node,omitempty"`
	TCP    int    `json:"tcp"`
	TCPFin int    `json:"tcpfin"`
	UDP    int    `json:"udp"`
	Pos    Pos    `json:"pos"`
}
