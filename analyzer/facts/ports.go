package facts

import (
	"fmt"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// DefaultNodePortRange is kube-apiserver's default --service-node-port-range.
var DefaultNodePortRange = model.PortRange{First: 30000, Last: 32767}

// NodePorts is the NodePort range in force and where it came from.
type NodePorts struct {
	Range   model.PortRange
	Flag    *model.Arg // the --service-node-port-range flag, nil when defaulted
	Problem string     // why a flag present could not be used
	// Lost says why the default stands for a range the bundle may have
	// given in what was cut off (the apiserver's manifest in an archive
	// cut short): "" when no input that could give it was cut.
	Lost string
}

// LostReason says why the range is a default standing for what a cut
// lost, "" when it is not (analyzer.Lost).
func (n NodePorts) LostReason() string { return n.Lost }

// Source says where the range comes from: the apiserver's flag or its
// default.
func (n NodePorts) Source() string {
	if n.Flag == nil {
		return "kube-apiserver default"
	}
	return "kube-apiserver --service-node-port-range"
}

// Evidence cites the flag, when the range comes from one: a component's
// command line, whichever file (a static pod manifest, ps) holds it.
func (n NodePorts) Evidence() []analyzer.Evidence {
	if n.Flag == nil {
		return nil
	}
	return []analyzer.Evidence{{Pos: n.Flag.Pos, Note: "--service-node-port-range=" + n.Flag.Value, Kind: model.KindComponents}}
}

// NodePortRange is the apiserver's NodePort range: its flag if a manifest
// or command line gives it, the default otherwise.
var NodePortRange = &analyzer.Fact[NodePorts]{
	Name: "nodeport-range",
	Doc:  "the cluster's NodePort range: kube-apiserver's --service-node-port-range, or its default 30000-32767",
	Compute: func(fs *analyzer.FactSet) NodePorts {
		snap := fs.Snapshot()
		arg, _, ok := snap.ComponentFlag("kube-apiserver", "service-node-port-range")
		if !ok {
			np := NodePorts{Range: DefaultNodePortRange}
			if c, cut := snap.CutInput(model.KindComponents, model.KindKube); cut {
				// The manifest or command line that gives the flag may
				// be in what was cut off: the default is no proof.
				np.Lost = fmt.Sprintf("no --service-node-port-range was read and %s, so the default %s may not be the bundle's range",
					c.String(), DefaultNodePortRange)
			}
			return np
		}
		r, err := model.ParsePortRange(arg.Value)
		if err != nil {
			return NodePorts{Range: DefaultNodePortRange, Problem: err.Error()}
		}
		return NodePorts{Range: r, Flag: &arg}
	},
}

// PortOwner is something on a node that owns a port: an IPVS virtual
// service or a Service's NodePort.
type PortOwner struct {
	Port  uint16
	Proto string
	// What says it in words: "IPVS virtual service TCP 10.0.0.1:30080",
	// "NodePort 30080/TCP of Service ns/name".
	What string
	Pos  model.Pos
	// IPVS is true for an IPVS virtual service, false for a NodePort.
	IPVS bool
	// Node is the node of an IPVS virtual service ("" when unknown or for
	// a NodePort, which every node owns).
	Node string
	// Namespace and Service name the Service of a NodePort.
	Namespace, Service string
}

// Source is the kind of evidence that shows the owner: the IPVS table or
// the Services.
func (o PortOwner) Source() model.Kind {
	if o.IPVS {
		return model.KindIPVS
	}
	return model.KindKube
}

// Evidence cites the owner, of the kind Source says.
func (o PortOwner) Evidence() analyzer.Evidence {
	return analyzer.Evidence{Pos: o.Pos, Note: o.What, Kind: o.Source()}
}

// Owners are the ports owned on the nodes: IPVS virtual services (per
// node) and the Services' NodePorts (on every node).
type Owners struct {
	ipvs, nodePorts []PortOwner
}

// PortOwners indexes the ports that IPVS virtual services and Service
// NodePorts own.
var PortOwners = &analyzer.Fact[*Owners]{
	Name: "port-owners",
	Doc:  "the ports owned on each node: IPVS virtual services from ipvsadm -Ln, and the Services' NodePorts",
	Compute: func(fs *analyzer.FactSet) *Owners {
		s := fs.Snapshot()
		o := &Owners{}
		for _, vs := range s.IPVS {
			if vs.Proto == "FWM" || !vs.Addr.IsValid() {
				continue
			}
			p := vs.Addr.Port()
			o.ipvs = append(o.ipvs, PortOwner{Port: p, Proto: vs.Proto, IPVS: true, Node: vs.Node, Pos: vs.Pos,
				What: fmt.Sprintf("IPVS virtual service %s %s", vs.Proto, vs.Addr)})
		}
		for _, np := range s.Kube.NodePorts() {
			o.nodePorts = append(o.nodePorts, PortOwner{Port: np.Port, Proto: np.Protocol, Pos: np.Pos,
				Namespace: np.Namespace, Service: np.Service,
				What: fmt.Sprintf("NodePort %d/%s of Service %s", np.Port, np.Protocol, qualified(np.Namespace, np.Service))})
		}
		return o
	},
}

// On returns the owners of ports on node, by port: the IPVS virtual
// services of that node (or of an unknown node; node "" takes every
// node's) and every NodePort, IPVS first, each in the order of the
// evidence.
func (o *Owners) On(node string) map[uint16][]PortOwner {
	out := map[uint16][]PortOwner{}
	for _, v := range o.ipvs {
		if node != "" && v.Node != "" && v.Node != node {
			continue
		}
		out[v.Port] = append(out[v.Port], v)
	}
	for _, np := range o.nodePorts {
		out[np.Port] = append(out[np.Port], np)
	}
	return out
}
