package model

import (
	"net/netip"
	"time"
)

// PodCheck is one pod-to-pod connectivity check of a mesh checker such as
// goldpinger: a checker pod's HTTP request to another checker pod, and how
// it went. A mesh of them says which nodes' pods can reach which.
type PodCheck struct {
	// Tool is the checker: "goldpinger".
	Tool string `json:"tool"`
	// From is the pod that checked, on the host at FromHost.
	From     string     `json:"from"`
	FromIP   netip.Addr `json:"from_ip,omitzero"`
	FromHost netip.Addr `json:"from_host,omitzero"`
	// To is the pod checked, at ToIP on the host at ToHost.
	To     string     `json:"to"`
	ToIP   netip.Addr `json:"to_ip,omitzero"`
	ToHost netip.Addr `json:"to_host,omitzero"`
	// OK says the check succeeded.
	OK bool `json:"ok"`
	// Status is the HTTP status the checker recorded (goldpinger writes 504
	// for a request that timed out); 0 when not shown.
	Status int `json:"status,omitempty"`
	// Error is the checker's error text: `Get "http://10.44.1.2:80/ping":
	// context deadline exceeded`.
	Error string `json:"error,omitempty"`
	// Latency is the check's response time, 0 when not shown.
	Latency time.Duration `json:"latency,omitempty"`
	// Time is when the check ran, zero when not shown.
	Time time.Time `json:"time,omitzero"`
	Pos  Pos       `json:"pos"`
}
