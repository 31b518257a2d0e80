package model

import "time"

// LogEvent is one log line (or one multi-line entry) with what could be
// read from it. Time is in UTC when the line gives no zone, and in year 0
// when it gives no year (klog, syslog): nothing guesses the year.
//
// A container's log reads the same whether it comes from `kubectl logs`
// or from the container runtime's file on the node: Namespace, Pod and
// Container come from the kubectl command or from the file's path
// (/var/log/containers, /var/log/pods), the line inside the runtime's
// record is read as what it is, and Time is the line's own time when it
// has one (the runtime's or kubectl's timestamp otherwise).
type LogEvent struct {
	Node      string            `json:"node,omitempty"`
	Source    string            `json:"source,omitempty"` // component or program: kubelet, kube-proxy, etcd, nginx ...
	Namespace string            `json:"namespace,omitempty"`
	Pod       string            `json:"pod,omitempty"`
	Container string            `json:"container,omitempty"`
	Stream    string            `json:"stream,omitempty"` // stdout or stderr, when the container runtime's record says
	Time      time.Time         `json:"time,omitzero"`
	Level     string            `json:"level,omitempty"` // I, W, E, F for klog; info, warn, error ...
	Message   string            `json:"message"`
	Fields    map[string]string `json:"fields,omitempty"`
	Pos       Pos               `json:"pos"`
}
