package facts

import (
	"slices"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// The sysctls that say which local ports a node's kernel picks as source
// ports.
const (
	sysctlPortRange     = "net.ipv4.ip_local_port_range"
	sysctlReservedPorts = "net.ipv4.ip_local_reserved_ports"
)

// NodeLocalPorts are one node's ephemeral port range and reserved ports,
// as its sysctl output gives them.
type NodeLocalPorts struct {
	// PortRange is net.ipv4.ip_local_port_range; HasRange is false when
	// the node's sysctls do not give it.
	PortRange model.Sysctl
	HasRange  bool
	// Range is PortRange's value read as a range: the zero range, with
	// RangeErr, when it cannot be read.
	Range    model.PortRange
	RangeErr error
	// Reserved is net.ipv4.ip_local_reserved_ports; HasReserved is false
	// when the node's sysctls do not give it.
	Reserved    model.Sysctl
	HasReserved bool
	// ReservedRanges are the reserved ports read from Reserved (as many as
	// could be read).
	ReservedRanges []model.PortRange
}

// LocalPortRanges are the ephemeral and reserved port ranges of the
// snapshot's nodes.
type LocalPortRanges struct {
	nodes        []string
	ranges, rsvd []model.Sysctl
	byNode       map[string]NodeLocalPorts
}

// LocalPorts gathers each node's ip_local_port_range and
// ip_local_reserved_ports.
var LocalPorts = &analyzer.Fact[*LocalPortRanges]{
	Name: "local-ports",
	Doc:  "each node's ephemeral port range (net.ipv4.ip_local_port_range) and reserved ports (net.ipv4.ip_local_reserved_ports), from sysctl output",
	Compute: func(fs *analyzer.FactSet) *LocalPortRanges {
		l := &LocalPortRanges{byNode: map[string]NodeLocalPorts{}}
		for _, sc := range fs.Snapshot().Sysctls {
			switch sc.Name {
			case sysctlPortRange:
				l.ranges = append(l.ranges, sc)
				if !slices.Contains(l.nodes, sc.Node) {
					l.nodes = append(l.nodes, sc.Node)
				}
			case sysctlReservedPorts:
				l.rsvd = append(l.rsvd, sc)
			}
		}
		for _, n := range l.nodes {
			l.byNode[n] = l.read(n)
		}
		return l
	},
}

// Nodes returns the nodes whose sysctls give an ephemeral port range, in
// the order the evidence first names them ("" for a node not named).
func (l *LocalPortRanges) Nodes() []string { return slices.Clone(l.nodes) }

// Of returns node's ports: its own sysctls and those of no node in
// particular, the last value of each winning as a later `sysctl -w`
// would; node "" takes any node's (model.Snapshot.Sysctl).
func (l *LocalPortRanges) Of(node string) NodeLocalPorts {
	if p, ok := l.byNode[node]; ok {
		return p
	}
	return l.read(node)
}

func (l *LocalPortRanges) read(node string) NodeLocalPorts {
	var p NodeLocalPorts
	p.PortRange, p.HasRange = lastFor(l.ranges, node)
	if p.HasRange {
		p.Range, p.RangeErr = model.ParsePortRange(p.PortRange.Value)
	}
	p.Reserved, p.HasReserved = lastFor(l.rsvd, node)
	if p.HasReserved {
		p.ReservedRanges, _ = model.ParsePortList(p.Reserved.Value)
	}
	return p
}

// lastFor is model.Snapshot.Sysctl over scs.
func lastFor(scs []model.Sysctl, node string) (model.Sysctl, bool) {
	var out model.Sysctl
	found := false
	for _, sc := range scs {
		if node == "" || sc.Node == node || sc.Node == "" {
			out, found = sc, true
		}
	}
	return out, found
}
