package model

// Container is one row of a container listing (`docker ps -a`, `crictl ps
// -a`). For containers the kubelet started, the Kubernetes names are read
// from the container name (docker: k8s_<container>_<pod>_<namespace>_<uid>_<attempt>).
type Container struct {
	Node    string `json:"node,omitempty"`
	ID      string `json:"id"`
	Image   string `json:"image"`
	Command string `json:"command,omitempty"` // as printed, possibly cut short with "…"
	Created string `json:"created,omitempty"` // as printed: "11 months ago"
	Status  string `json:"status"`            // as printed: "Up 8 months", "Exited (0) 35 seconds ago"
	// State is up, exited, created, restarting, paused or dead.
	State string `json:"state"`
	// ExitCode is the exit status of an exited container, -1 when not shown.
	ExitCode int    `json:"exit_code"`
	Name     string `json:"name"`

	// Kubernetes names, when the container name carries them.
	KubeContainer string `json:"kube_container,omitempty"`
	Pod           string `json:"pod,omitempty"`
	Namespace     string `json:"namespace,omitempty"`
	// Attempt is the kubelet's restart attempt number (0 for the first run).
	Attempt int `json:"attempt,omitempty"`

	Pos Pos `json:"pos"`
}
