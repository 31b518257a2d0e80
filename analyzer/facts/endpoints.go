package facts

import (
	"net/netip"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/model"
)

// EndpointSet is what Kubernetes says a Service port's ready endpoints are.
type EndpointSet struct {
	Addrs []string        // IPs, with the port when known ("10.244.1.5:8080")
	IPs   map[string]bool // the IPs
	Count int             // addresses, with or without IPs (a `jq length` gives only the count)
}

// Endpoints indexes the snapshot's Endpoints and EndpointSlices by
// Service.
type Endpoints struct {
	endpoints map[string][]*model.Endpoints     // by namespace/name
	slices    map[string][]*model.EndpointSlice // by namespace/service-name
}

// ServiceEndpoints gives each Service port's ready endpoints.
var ServiceEndpoints = &analyzer.Fact[*Endpoints]{
	Name: "service-endpoints",
	Doc:  "each Service port's ready endpoints, from Endpoints and EndpointSlices (kubectl get endpoints, endpointslices)",
	Compute: func(fs *analyzer.FactSet) *Endpoints {
		s := fs.Snapshot()
		x := &Endpoints{endpoints: map[string][]*model.Endpoints{}, slices: map[string][]*model.EndpointSlice{}}
		for i := range s.Kube.Endpoints {
			ep := &s.Kube.Endpoints[i]
			k := ep.Namespace + "/" + ep.Name
			x.endpoints[k] = append(x.endpoints[k], ep)
		}
		for i := range s.Kube.EndpointSlices {
			sl := &s.Kube.EndpointSlices[i]
			k := sl.Namespace + "/" + sl.Labels["kubernetes.io/service-name"]
			x.slices[k] = append(x.slices[k], sl)
		}
		return x
	},
}

// Of gathers the ready endpoints of the port portName of Service ns/name
// from its Endpoints (the subset's port of that name, or its only port),
// or else from its EndpointSlices. pos is the object read last; found is
// false when the snapshot has neither.
func (x *Endpoints) Of(ns, name, portName string) (set EndpointSet, pos model.Pos, found bool) {
	set.IPs = map[string]bool{}
	for _, ep := range x.endpoints[ns+"/"+name] {
		found = true
		pos = objectPos(ep.Source.Pos, "Endpoints", ns, name)
		for _, ss := range ep.Subsets {
			port := int32(0)
			matched := len(ss.Ports) == 0
			for _, pt := range ss.Ports {
				if pt.Name == portName || len(ss.Ports) == 1 {
					port, matched = pt.Port, true
				}
			}
			if !matched {
				continue
			}
			for _, a := range ss.Addresses {
				set.Count++
				if a.IP == "" {
					continue
				}
				set.IPs[a.IP] = true
				if port != 0 {
					ip, _ := netip.ParseAddr(a.IP)
					set.Addrs = append(set.Addrs, netip.AddrPortFrom(ip, uint16(port)).String())
				} else {
					set.Addrs = append(set.Addrs, a.IP)
				}
			}
		}
	}
	for _, sl := range x.slices[ns+"/"+name] {
		if found && len(set.IPs) > 0 {
			continue
		}
		found = true
		pos = sl.Source.Pos
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				set.Count++
				set.IPs[a] = true
				set.Addrs = append(set.Addrs, a)
			}
		}
	}
	return set, pos, found
}

// BackendIP returns the IP of a dataplane backend, as an EndpointSet holds
// IPs: from its DNAT target, or from what the dump showed of it; "" when
// neither gives one.
func BackendIP(b dataplane.Backend) string {
	if b.Addr.IsValid() {
		return b.Addr.Addr().String()
	}
	if ap, err := netip.ParseAddrPort(b.Address); err == nil {
		return ap.Addr().String()
	}
	if a, err := netip.ParseAddr(b.Address); err == nil {
		return a.String()
	}
	return ""
}
