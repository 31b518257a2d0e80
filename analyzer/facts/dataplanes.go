package facts

import (
	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/dataplane"
)

// ServicePorts are Service ports as nodes' dataplanes implement them.
type ServicePorts []dataplane.ServicePort

// Dataplanes is what each node's NAT rules or IPVS table does with each
// Service port (dataplane.Build).
var Dataplanes = &analyzer.Fact[ServicePorts]{
	Name: "dataplanes",
	Doc: "each node's Service ports as its kube-proxy rules implement them (iptables, nftables or IPVS): frontends, " +
		"backends and their probabilities",
	Compute: func(fs *analyzer.FactSet) ServicePorts { return dataplane.Build(fs.Snapshot()) },
}

// OnNode returns the Service ports of node's dataplane and those of no
// node in particular; node "" takes every node's.
func (sps ServicePorts) OnNode(node string) ServicePorts {
	if node == "" {
		return sps
	}
	var out ServicePorts
	for _, sp := range sps {
		if sp.Node == "" || sp.Node == node {
			out = append(out, sp)
		}
	}
	return out
}
