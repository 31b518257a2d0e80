package facts

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// RoleKind is what kind of thing an address is in the cluster.
type RoleKind int

// The kinds of roles, from the Services, Endpoints, EndpointSlices, Pods
// and Nodes of the snapshot.
const (
	RoleClusterIP        RoleKind = iota + 1 // a Service's ClusterIP and port
	RoleLoadBalancerIP                       // a Service's LoadBalancer IP and port
	RoleExternalIP                           // a Service's external IP and port
	RoleEndpoint                             // a ready endpoint of a Service
	RoleNotReadyEndpoint                     // an endpoint of a Service that is not ready
	RolePodIP                                // a Pod's IP (any port)
	RoleNodeAddress                          // a Node's address (any port)
)

// AddrRole is what an address (and port) is in the cluster, according to
// the Kubernetes objects of the snapshot.
type AddrRole struct {
	Kind RoleKind
	Port uint16 // 0: any port
	// What says it in words: "ClusterIP 10.96.0.10:53 of Service
	// kube-system/kube-dns", "InternalIP of Node worker-1".
	What string
	Pos  model.Pos // the object that gives the role
}

// AddrIndex holds the roles of the snapshot's addresses.
type AddrIndex map[netip.Addr][]AddrRole

// AddrRoles indexes the snapshot's Kubernetes objects by address.
var AddrRoles = &analyzer.Fact[AddrIndex]{
	Name: "addr-roles",
	Doc: "what each address is in the cluster (a Service's ClusterIP, LoadBalancer or external IP, a ready or " +
		"not-ready endpoint, a Pod's or a Node's address), from the Kubernetes objects",
	Compute: func(fs *analyzer.FactSet) AddrIndex { return addrRoles(fs.Snapshot()) },
}

func addrRoles(s *model.Snapshot) AddrIndex {
	out := AddrIndex{}
	add := func(ip string, port int32, kind RoleKind, what string, pos model.Pos) {
		a, err := netip.ParseAddr(ip)
		if err != nil {
			return
		}
		out[a] = append(out[a], AddrRole{Kind: kind, Port: uint16(port), What: what, Pos: pos})
	}
	for _, svc := range s.Kube.Services {
		name := qualified(svc.Namespace, svc.Name)
		pos := objectPos(svc.Source.Pos, "Service", svc.Namespace, svc.Name)
		ips := slices.Clone(svc.Spec.ClusterIPs)
		if svc.Spec.ClusterIP != "" && !slices.Contains(ips, svc.Spec.ClusterIP) {
			ips = append(ips, svc.Spec.ClusterIP)
		}
		for _, p := range svc.Spec.Ports {
			for _, ip := range ips {
				add(ip, p.Port, RoleClusterIP, fmt.Sprintf("ClusterIP %s:%d of Service %s", ip, p.Port, name), pos)
			}
			for _, ing := range svc.Status.LoadBalancer.Ingress {
				add(ing.IP, p.Port, RoleLoadBalancerIP, fmt.Sprintf("LoadBalancer IP %s:%d of Service %s", ing.IP, p.Port, name), pos)
			}
			if lb := svc.Spec.LoadBalancerIP; lb != "" {
				add(lb, p.Port, RoleLoadBalancerIP, fmt.Sprintf("LoadBalancer IP %s:%d of Service %s", lb, p.Port, name), pos)
			}
			for _, ip := range svc.Spec.ExternalIPs {
				add(ip, p.Port, RoleExternalIP, fmt.Sprintf("external IP %s:%d of Service %s", ip, p.Port, name), pos)
			}
		}
	}
	for _, ep := range s.Kube.Endpoints {
		name := qualified(ep.Namespace, ep.Name)
		pos := objectPos(ep.Source.Pos, "Endpoints", ep.Namespace, ep.Name)
		for _, ss := range ep.Subsets {
			for _, a := range ss.Addresses {
				for _, p := range ss.Ports {
					add(a.IP, p.Port, RoleEndpoint, fmt.Sprintf("ready endpoint %s:%d of Service %s", a.IP, p.Port, name), pos)
				}
			}
			for _, a := range ss.NotReadyAddresses {
				for _, p := range ss.Ports {
					add(a.IP, p.Port, RoleNotReadyEndpoint, fmt.Sprintf("not-ready endpoint %s:%d of Service %s", a.IP, p.Port, name), pos)
				}
			}
		}
	}
	for _, sl := range s.Kube.EndpointSlices {
		svc := sl.Labels["kubernetes.io/service-name"]
		for _, e := range sl.Endpoints {
			kind, state := RoleEndpoint, "ready"
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				kind, state = RoleNotReadyEndpoint, "not-ready"
			}
			for _, a := range e.Addresses {
				for _, p := range sl.Ports {
					if p.Port != nil {
						add(a, *p.Port, kind, fmt.Sprintf("%s endpoint %s:%d of Service %s", state, a, *p.Port, qualified(sl.Namespace, svc)), sl.Source.Pos)
					}
				}
			}
		}
	}
	for _, pod := range s.Kube.Pods {
		what := fmt.Sprintf("IP of Pod %s", qualified(pod.Namespace, pod.Name))
		for _, ip := range pod.Status.PodIPs {
			add(ip.IP, 0, RolePodIP, what, pod.Source.Pos)
		}
		if pod.Status.PodIP != "" && len(pod.Status.PodIPs) == 0 {
			add(pod.Status.PodIP, 0, RolePodIP, what, pod.Source.Pos)
		}
	}
	for _, n := range s.Kube.Nodes {
		for _, a := range n.Status.Addresses {
			add(a.Address, 0, RoleNodeAddress, fmt.Sprintf("%s of Node %s", a.Type, n.Name), n.Source.Pos)
		}
	}
	return out
}

// qualified names a namespaced object "namespace/name", or "name" alone
// when its namespace is not known (a kubectl table without a NAMESPACE
// column, listed without -n).
func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// objectPos names the object in pos when the reader did not.
func objectPos(pos model.Pos, kind, ns, name string) model.Pos {
	if pos.Object == "" {
		pos.Object = model.ObjectName(kind, ns, name)
	}
	return pos
}

// Of returns the roles of addr:port; port 0 matches every role of the
// address, and a role of the address alone (a Pod's, a Node's) matches
// every port.
func (x AddrIndex) Of(addr netip.Addr, port uint16) Roles {
	var out Roles
	for _, r := range x[addr.Unmap()] {
		if port == 0 || r.Port == 0 || r.Port == port {
			out = append(out, r)
		}
	}
	return out
}

// Roles are the roles of one address.
type Roles []AddrRole

// Words joins the roles' descriptions, once each.
func (rs Roles) Words() string {
	var w []string
	for _, r := range rs {
		if !slices.Contains(w, r.What) {
			w = append(w, r.What)
		}
	}
	return strings.Join(w, "; ")
}

// AddrWords describes the roles of ip without their ports, once each: for
// what is about the address alone (ARP).
func (rs Roles) AddrWords(ip netip.Addr) []string {
	var out []string
	for _, r := range rs {
		w := r.What
		if r.Port != 0 {
			w = strings.ReplaceAll(w, netip.AddrPortFrom(ip, r.Port).String(), ip.String())
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// Evidence cites the objects that give the roles, once each.
func (rs Roles) Evidence() []analyzer.Evidence {
	var out []analyzer.Evidence
	seen := map[string]bool{}
	for _, r := range rs {
		if k := r.Pos.String() + r.What; !seen[k] {
			seen[k] = true
			out = append(out, analyzer.Evidence{Pos: r.Pos, Note: r.What})
		}
	}
	return out
}

// Live reports whether the roles say something should answer at the
// address and port: a Service address or a ready endpoint.
func (rs Roles) Live() bool {
	return slices.ContainsFunc(rs, func(r AddrRole) bool {
		switch r.Kind {
		case RoleClusterIP, RoleLoadBalancerIP, RoleExternalIP, RoleEndpoint:
			return true
		}
		return false
	})
}

// NamePort reports whether a role names the port itself (a Service port,
// an endpoint), not just the address (a Node's or a Pod's IP).
func (rs Roles) NamePort() bool {
	return slices.ContainsFunc(rs, func(r AddrRole) bool { return r.Port != 0 })
}

// OnLink reports whether the roles say a host should answer ARP for the
// address: a LoadBalancer or external IP, a ready endpoint, a Node's
// address. ClusterIPs are never on a link.
func (rs Roles) OnLink() bool {
	return slices.ContainsFunc(rs, func(r AddrRole) bool {
		switch r.Kind {
		case RoleLoadBalancerIP, RoleExternalIP, RoleEndpoint, RoleNodeAddress:
			return true
		}
		return false
	})
}

// VIP reports whether the roles make the address a Service's LoadBalancer
// or external IP.
func (rs Roles) VIP() bool {
	return slices.ContainsFunc(rs, func(r AddrRole) bool { return r.Kind == RoleLoadBalancerIP || r.Kind == RoleExternalIP })
}
