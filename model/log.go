package model

import "time"

// LogEvent is one log line (or one multi-line entry) with what could be
// read from it. Time is in UTC when the line gives no zone, and in year 0
// when it gives no year (klog, syslog): nothing guesses the year.
type LogEvent struct {
	Node    string            `json:"node,omitempty"`
	Source  string            `json:"source,omitempty"` // component or program: kubelet, kube-proxy, etcd, nginx ...
	Time    time.Time         `json:"time,omitzero"`
	Level   string            `json:"level,omitempty"` // I, W, E, F for klog; info, warn, error ...
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
	Pos     Pos               `json:"pos"`
}
