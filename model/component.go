package model

// Component is the command line of a cluster component (kube-apiserver,
// kubelet, kube-proxy, etcd ...), from a static pod manifest, a process
// listing or a config file.
type Component struct {
	Node string `json:"node,omitempty"`
	Name string `json:"name"` // kube-apiserver, kube-controller-manager, etcd ...
	Args []Arg  `json:"args"`
	Pos  Pos    `json:"pos"`
}

// Arg is one command-line flag of a Component: --name=value.
type Arg struct {
	Name  string `json:"name"` // without the leading dashes
	Value string `json:"value"`
	Pos   Pos    `json:"pos"`
}

// Flag returns the last value of flag name (without dashes).
func (c *Component) Flag(name string) (Arg, bool) {
	var out Arg
	found := false
	for _, a := range c.Args {
		if a.Name == name {
			out, found = a, true
		}
	}
	return out, found
}

// ComponentFlag returns the value of flag name of the first component called
// component that sets it.
func (s *Snapshot) ComponentFlag(component, name string) (Arg, *Component, bool) {
	for i := range s.Components {
		c := &s.Components[i]
		if c.Name != component {
			continue
		}
		if a, ok := c.Flag(name); ok {
			return a, c, true
		}
	}
	return Arg{}, nil, false
}
