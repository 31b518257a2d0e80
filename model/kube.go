package model

import (
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// Kube holds the Kubernetes objects of a snapshot, decoded into the
// k8s.io/api types. Each object carries the Pos of its first line and the
// node that reported it (empty for cluster-wide dumps). Objects read from
// `kubectl get` text tables carry only the columns the table showed and have
// FromTable set.
type Kube struct {
	Services          []Service         `json:"services,omitempty"`
	Endpoints         []Endpoints       `json:"endpoints,omitempty"`
	EndpointSlices    []EndpointSlice   `json:"endpointslices,omitempty"`
	Pods              []Pod             `json:"pods,omitempty"`
	Nodes             []Node            `json:"nodes,omitempty"`
	ComponentStatuses []ComponentStatus `json:"componentstatuses,omitempty"`
	Leases            []Lease           `json:"leases,omitempty"`
	Events            []Event           `json:"events,omitempty"`
	ConfigMaps        []ConfigMap       `json:"configmaps,omitempty"`
	DaemonSets        []DaemonSet       `json:"daemonsets,omitempty"`
	Ingresses         []Ingress         `json:"ingresses,omitempty"`
	Namespaces        []Namespace       `json:"namespaces,omitempty"`
	NetworkPolicies   []NetworkPolicy   `json:"networkpolicies,omitempty"`
}

// Source says where a Kubernetes object came from.
type Source struct {
	Pos       Pos    `json:"pos"`
	Node      string `json:"node,omitempty"`
	FromTable bool   `json:"from_table,omitempty"` // read from a `kubectl get` text table: partial
	// Cells holds, for an object read from a `kubectl get` table, every
	// cell of its row as printed, by column header ("AGE": "193d",
	// "RESTARTS": "183 (5m ago)"): what the table showed that the object's
	// fields cannot hold.
	Cells map[string]string `json:"cells,omitempty"`
	// Lines gives the line of some fields inside the object, by field
	// path ("spec.containers[0].livenessProbe"), for evidence that points
	// at the field rather than the object.
	Lines map[string]int `json:"lines,omitempty"`
}

// FieldPos returns the position of a field of the object: its own line
// when known, the object's otherwise.
func (s Source) FieldPos(path string) Pos {
	p := s.Pos
	if l, ok := s.Lines[path]; ok {
		p.Line = l
		p.Path = path
	}
	return p
}

// Service is a core/v1 Service with its source.
type Service struct {
	corev1.Service
	Source Source `json:"source"`
}

// Endpoints is a core/v1 Endpoints with its source.
type Endpoints struct {
	corev1.Endpoints
	Source Source `json:"source"`
}

// EndpointSlice is a discovery/v1 EndpointSlice with its source.
type EndpointSlice struct {
	discoveryv1.EndpointSlice
	Source Source `json:"source"`
}

// Pod is a core/v1 Pod with its source. Static pod manifests are Pods too.
type Pod struct {
	corev1.Pod
	Source Source `json:"source"`
}

// Node is a core/v1 Node with its source.
type Node struct {
	corev1.Node
	Source Source `json:"source"`
}

// ComponentStatus is a core/v1 ComponentStatus with its source.
type ComponentStatus struct {
	corev1.ComponentStatus
	Source Source `json:"source"`
}

// Lease is a coordination/v1 Lease with its source.
type Lease struct {
	coordinationv1.Lease
	Source Source `json:"source"`
}

// Event is a core/v1 Event with its source.
type Event struct {
	corev1.Event
	Source Source `json:"source"`
}

// ConfigMap is a core/v1 ConfigMap with its source.
type ConfigMap struct {
	corev1.ConfigMap
	Source Source `json:"source"`
}

// DaemonSet is an apps/v1 DaemonSet with its source.
type DaemonSet struct {
	appsv1.DaemonSet
	Source Source `json:"source"`
}

// Ingress is a networking.k8s.io/v1 Ingress with its source.
type Ingress struct {
	networkingv1.Ingress
	Source Source `json:"source"`
}

// Namespace is a core/v1 Namespace with its source.
type Namespace struct {
	corev1.Namespace
	Source Source `json:"source"`
}

// NetworkPolicy is a networking.k8s.io/v1 NetworkPolicy with its source.
// Its Source.Lines give the line of each rule ("spec.ingress[0]",
// "spec.egress[1]").
type NetworkPolicy struct {
	networkingv1.NetworkPolicy
	Source Source `json:"source"`
}

// Merge appends every object of o to k.
func (k *Kube) Merge(o *Kube) {
	k.Services = append(k.Services, o.Services...)
	k.Endpoints = append(k.Endpoints, o.Endpoints...)
	k.EndpointSlices = append(k.EndpointSlices, o.EndpointSlices...)
	k.Pods = append(k.Pods, o.Pods...)
	k.Nodes = append(k.Nodes, o.Nodes...)
	k.ComponentStatuses = append(k.ComponentStatuses, o.ComponentStatuses...)
	k.Leases = append(k.Leases, o.Leases...)
	k.Events = append(k.Events, o.Events...)
	k.ConfigMaps = append(k.ConfigMaps, o.ConfigMaps...)
	k.DaemonSets = append(k.DaemonSets, o.DaemonSets...)
	k.Ingresses = append(k.Ingresses, o.Ingresses...)
	k.Namespaces = append(k.Namespaces, o.Namespaces...)
	k.NetworkPolicies = append(k.NetworkPolicies, o.NetworkPolicies...)
}

// Len returns the number of objects held.
func (k *Kube) Len() int {
	return len(k.Services) + len(k.Endpoints) + len(k.EndpointSlices) + len(k.Pods) +
		len(k.Nodes) + len(k.ComponentStatuses) + len(k.Leases) + len(k.Events) +
		len(k.ConfigMaps) + len(k.DaemonSets) + len(k.Ingresses) + len(k.Namespaces) + len(k.NetworkPolicies)
}

// ObjectName formats a Pos.Object value: "Kind namespace/name", or
// "Kind name" for cluster-scoped objects.
func ObjectName(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// NodePort is one NodePort allocation: a Service port exposed on every
// node's addresses.
type NodePort struct {
	Port      uint16 `json:"port"`
	Protocol  string `json:"protocol"` // TCP, UDP, SCTP
	Namespace string `json:"namespace"`
	Service   string `json:"service"`
	PortName  string `json:"port_name,omitempty"`
	Pos       Pos    `json:"pos"`
}

// NodePorts lists the NodePorts allocated by the snapshot's Services.
func (k *Kube) NodePorts() []NodePort {
	var out []NodePort
	for _, svc := range k.Services {
		for _, p := range svc.Spec.Ports {
			if p.NodePort == 0 {
				continue
			}
			proto := string(p.Protocol)
			if proto == "" {
				proto = "TCP"
			}
			pos := svc.Source.Pos
			if pos.Object == "" {
				pos.Object = ObjectName("Service", svc.Namespace, svc.Name)
			}
			out = append(out, NodePort{
				Port:      uint16(p.NodePort),
				Protocol:  proto,
				Namespace: svc.Namespace,
				Service:   svc.Name,
				PortName:  p.Name,
				Pos:       pos,
			})
		}
	}
	return out
}
