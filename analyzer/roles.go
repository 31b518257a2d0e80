package analyzer

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// addrRole is what an address (and port) is in the cluster, according to
// the Kubernetes objects of the snapshot: a Service's ClusterIP, a
// LoadBalancer ingress IP, an external IP, an endpoint of a Service, a Pod's
// IP, a Node's address.
type addrRole struct {
	Port uint16 // 0: any port
	What string
	Pos  model.Pos
}

// addrRoles indexes the snapshot's Kubernetes objects by address.
func addrRoles(s *model.Snapshot) map[netip.Addr][]addrRole {
	out := map[netip.Addr][]addrRole{}
	add := func(ip string, port int32, what string, pos model.Pos) {
		a, err := netip.ParseAddr(ip)
		if err != nil {
			return
		}
		out[a] = append(out[a], addrRole{Port: uint16(port), What: what, Pos: pos})
	}
	for _, svc := range s.Kube.Services {
		name := svc.Namespace + "/" + svc.Name
		pos := svc.Source.Pos
		if pos.Object == "" {
			pos.Object = model.ObjectName("Service", svc.Namespace, svc.Name)
		}
		ips := slices.Clone(svc.Spec.ClusterIPs)
		if svc.Spec.ClusterIP != "" && !slices.Contains(ips, svc.Spec.ClusterIP) {
			ips = append(ips, svc.Spec.ClusterIP)
		}
		for _, p := range svc.Spec.Ports {
			for _, ip := range ips {
				add(ip, p.Port, fmt.Sprintf("ClusterIP %s:%d of Service %s", ip, p.Port, name), pos)
			}
			for _, ing := range svc.Status.LoadBalancer.Ingress {
				add(ing.IP, p.Port, fmt.Sprintf("LoadBalancer IP %s:%d of Service %s", ing.IP, p.Port, name), pos)
			}
			if svc.Spec.LoadBalancerIP != "" {
				add(svc.Spec.LoadBalancerIP, p.Port, fmt.Sprintf("LoadBalancer IP %s:%d of Service %s", svc.Spec.LoadBalancerIP, p.Port, name), pos)
			}
			for _, ip := range svc.Spec.ExternalIPs {
				add(ip, p.Port, fmt.Sprintf("external IP %s:%d of Service %s", ip, p.Port, name), pos)
			}
		}
	}
	for _, ep := range s.Kube.Endpoints {
		name := ep.Namespace + "/" + ep.Name
		pos := ep.Source.Pos
		if pos.Object == "" {
			pos.Object = model.ObjectName("Endpoints", ep.Namespace, ep.Name)
		}
		for _, ss := range ep.Subsets {
			for _, a := range ss.Addresses {
				for _, p := range ss.Ports {
					add(a.IP, p.Port, fmt.Sprintf("ready endpoint %s:%d of Service %s", a.IP, p.Port, name), pos)
				}
			}
			for _, a := range ss.NotReadyAddresses {
				for _, p := range ss.Ports {
					add(a.IP, p.Port, fmt.Sprintf("not-ready endpoint %s:%d of Service %s", a.IP, p.Port, name), pos)
				}
			}
		}
	}
	for _, sl := range s.Kube.EndpointSlices {
		svc := sl.Labels["kubernetes.io/service-name"]
		pos := sl.Source.Pos
		for _, e := range sl.Endpoints {
			state := "ready"
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				state = "not-ready"
			}
			for _, a := range e.Addresses {
				for _, p := range sl.Ports {
					if p.Port != nil {
						add(a, *p.Port, fmt.Sprintf("%s endpoint %s:%d of Service %s/%s", state, a, *p.Port, sl.Namespace, svc), pos)
					}
				}
			}
		}
	}
	for _, pod := range s.Kube.Pods {
		pos := pod.Source.Pos
		for _, ip := range pod.Status.PodIPs {
			add(ip.IP, 0, fmt.Sprintf("IP of Pod %s/%s", pod.Namespace, pod.Name), pos)
		}
		if pod.Status.PodIP != "" && len(pod.Status.PodIPs) == 0 {
			add(pod.Status.PodIP, 0, fmt.Sprintf("IP of Pod %s/%s", pod.Namespace, pod.Name), pos)
		}
	}
	for _, n := range s.Kube.Nodes {
		for _, a := range n.Status.Addresses {
			add(a.Address, 0, fmt.Sprintf("%s of Node %s", a.Type, n.Name), n.Source.Pos)
		}
	}
	return out
}

// rolesOf returns the roles of addr:port (port 0 matches every role of
// the address).
func rolesOf(roles map[netip.Addr][]addrRole, addr netip.Addr, port uint16) []addrRole {
	var out []addrRole
	for _, r := range roles[addr.Unmap()] {
		if port == 0 || r.Port == 0 || r.Port == port {
			out = append(out, r)
		}
	}
	return out
}

// roleWords joins the roles' descriptions.
func roleWords(rs []addrRole) string {
	var w []string
	for _, r := range rs {
		if !slices.Contains(w, r.What) {
			w = append(w, r.What)
		}
	}
	return strings.Join(w, "; ")
}

// roleEvidence cites the objects that give the roles, once each.
func roleEvidence(rs []addrRole) []Evidence {
	var out []Evidence
	seen := map[string]bool{}
	for _, r := range rs {
		if k := r.Pos.String() + r.What; !seen[k] {
			seen[k] = true
			out = append(out, Evidence{Pos: r.Pos, Note: r.What})
		}
	}
	return out
}

// liveRole reports whether the roles say something should answer at the
// address: a Service address or a ready endpoint.
func liveRole(rs []addrRole) bool {
	for _, r := range rs {
		if !strings.HasPrefix(r.What, "not-ready") && !strings.HasPrefix(r.What, "IP of Pod") && !strings.Contains(r.What, " of Node ") {
			return true
		}
	}
	return false
}

// synOnlyCapture reports whether a capture's command or filter keeps only
// some TCP flags, so that missing replies prove nothing.
func synOnlyCapture(s *model.Snapshot, file string) bool {
	for _, c := range s.Captures {
		if c.File == file && strings.Contains(c.Command, "tcpflags") {
			return true
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
