package model

import "net/netip"

// ConnectTimes are the connect times a load test measured (ApacheBench's
// "Connection Times (ms)" table), in milliseconds.
type ConnectTimes struct {
	Node        string         `json:"node,omitempty"`
	Tool        string         `json:"tool"` // "ab"
	Host        string         `json:"host"` // the server as given: an address or a name
	Target      netip.AddrPort `json:"target,omitzero"`
	Concurrency int            `json:"concurrency,omitempty"`
	Requests    int            `json:"requests,omitempty"`
	Failed      int            `json:"failed,omitempty"`
	Min         int            `json:"min_ms"`
	Mean        int            `json:"mean_ms"`
	Median      int            `json:"median_ms"`
	Max         int            `json:"max_ms"`
	Pos         Pos            `json:"pos"` // the Connect: line
}
