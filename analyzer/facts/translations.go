package facts

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// ServiceBackend is one endpoint that a Service's frontend translates
// connections to.
type ServiceBackend struct {
	Addr netip.AddrPort
	Pos  model.Pos // the Endpoints, EndpointSlice or DNAT rule that names it
}

// Translation is where connections to one frontend of a Service (a
// ClusterIP, LoadBalancer or external IP and port) go after the Service
// translation: its ready endpoints, with their ports.
type Translation struct {
	Service  string // "namespace/name", or "" when the rules do not say
	Frontend netip.AddrPort
	Proto    corev1.Protocol
	Backends []ServiceBackend
	Pos      model.Pos // the Service, or the rule that catches the frontend
	// By says what tells the translation: "the Endpoints of Service
	// shop/cart", "node-1's iptables rules".
	By string
}

type translationKey struct {
	proto    corev1.Protocol
	frontend netip.AddrPort
}

// TranslationIndex holds the snapshot's Service translations by frontend.
type TranslationIndex struct {
	by map[translationKey]*Translation
}

// Of returns the translation of connections of proto to frontend, or nil
// when no Service (and no node's NAT rules or IPVS table) has that
// frontend or its endpoints are not known.
func (x *TranslationIndex) Of(proto corev1.Protocol, frontend netip.AddrPort) *Translation {
	return x.by[translationKey{proto, frontend}]
}

// ServiceTranslations gives, for each Service frontend, the endpoints
// connections to it are translated to.
var ServiceTranslations = &analyzer.Fact[*TranslationIndex]{
	Name: "service-translations",
	Doc: "where a connection to a Service's ClusterIP, LoadBalancer or external IP and port goes: its ready " +
		"endpoints with their ports, from the Service and its Endpoints or EndpointSlices, or else from a " +
		"node's NAT rules or IPVS table",
	Compute: func(fs *analyzer.FactSet) *TranslationIndex {
		x := &TranslationIndex{by: map[translationKey]*Translation{}}
		x.addObjects(fs.Snapshot())
		x.addDataplanes(Dataplanes.Get(fs))
		return x
	},
}

// addObjects adds the translations the Services and their Endpoints or
// EndpointSlices give.
func (x *TranslationIndex) addObjects(s *model.Snapshot) {
	for i := range s.Kube.Services {
		svc := &s.Kube.Services[i]
		name := qualified(svc.Namespace, svc.Name)
		ips := slices.Clone(svc.Spec.ClusterIPs)
		if svc.Spec.ClusterIP != "" && !slices.Contains(ips, svc.Spec.ClusterIP) {
			ips = append(ips, svc.Spec.ClusterIP)
		}
		ips = append(ips, svc.Spec.ExternalIPs...)
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			ips = append(ips, ing.IP)
		}
		for _, sp := range svc.Spec.Ports {
			proto := sp.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			backends, by := endpointsOf(s, svc, sp)
			if len(backends) == 0 {
				continue
			}
			for _, ip := range ips {
				a, err := netip.ParseAddr(ip)
				if err != nil {
					continue
				}
				k := translationKey{proto, netip.AddrPortFrom(a, uint16(sp.Port))}
				if x.by[k] == nil {
					x.by[k] = &Translation{Service: name, Frontend: k.frontend, Proto: proto, Backends: backends,
						Pos: objectPos(svc.Source.Pos, "Service", svc.Namespace, svc.Name), By: by}
				}
			}
		}
	}
}

// endpointsOf gives the ready endpoints of the Service port sp, with
// their ports, from its Endpoints or else its EndpointSlices, and says
// which.
func endpointsOf(s *model.Snapshot, svc *model.Service, sp corev1.ServicePort) ([]ServiceBackend, string) {
	var out []ServiceBackend
	for i := range s.Kube.Endpoints {
		ep := &s.Kube.Endpoints[i]
		if ep.Namespace != svc.Namespace || ep.Name != svc.Name {
			continue
		}
		pos := objectPos(ep.Source.Pos, "Endpoints", ep.Namespace, ep.Name)
		for _, ss := range ep.Subsets {
			for _, pt := range ss.Ports {
				if pt.Name != sp.Name && len(ss.Ports) > 1 {
					continue
				}
				for _, a := range ss.Addresses {
					if ip, err := netip.ParseAddr(a.IP); err == nil && pt.Port > 0 {
						out = append(out, ServiceBackend{Addr: netip.AddrPortFrom(ip, uint16(pt.Port)), Pos: pos})
					}
				}
			}
		}
	}
	if len(out) > 0 {
		return out, "the Endpoints of Service " + qualified(svc.Namespace, svc.Name)
	}
	for i := range s.Kube.EndpointSlices {
		sl := &s.Kube.EndpointSlices[i]
		if sl.Namespace != svc.Namespace || sl.Labels["kubernetes.io/service-name"] != svc.Name {
			continue
		}
		for _, pt := range sl.Ports {
			if pt.Port == nil || (pt.Name != nil && *pt.Name != sp.Name && len(sl.Ports) > 1) {
				continue
			}
			for _, e := range sl.Endpoints {
				if e.Conditions.Ready != nil && !*e.Conditions.Ready {
					continue
				}
				for _, a := range e.Addresses {
					if ip, err := netip.ParseAddr(a); err == nil {
						out = append(out, ServiceBackend{Addr: netip.AddrPortFrom(ip, uint16(*pt.Port)), Pos: sl.Source.Pos})
					}
				}
			}
		}
	}
	return out, "the EndpointSlices of Service " + qualified(svc.Namespace, svc.Name)
}

// addDataplanes adds the frontends the objects do not translate, from the
// nodes' NAT rules or IPVS tables.
func (x *TranslationIndex) addDataplanes(sps ServicePorts) {
	for _, sp := range sps {
		proto := corev1.Protocol(strings.ToUpper(sp.Proto))
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		var backends []ServiceBackend
		for _, b := range sp.Backends {
			if b.Addr.IsValid() {
				backends = append(backends, ServiceBackend{Addr: b.Addr, Pos: b.Pos})
			}
		}
		if len(backends) == 0 {
			continue
		}
		by := fmt.Sprintf("the %s rules", sp.Mode)
		if sp.Node != "" {
			by = fmt.Sprintf("%s's %s rules", sp.Node, sp.Mode)
		}
		svc, _, _ := strings.Cut(sp.Service, ":")
		for _, fe := range sp.Frontends {
			ap, err := netip.ParseAddrPort(fe)
			if err != nil {
				continue
			}
			k := translationKey{proto, ap}
			if x.by[k] == nil {
				x.by[k] = &Translation{Service: svc, Frontend: ap, Proto: proto, Backends: backends, Pos: sp.Pos, By: by}
			}
		}
	}
}

// EndpointDecision is the policies' decision on a connection to one
// endpoint of a Service, after the Service translation.
type EndpointDecision struct {
	Endpoint ServiceBackend
	Server   *model.Pod // the endpoint's Pod
	In, Out  PolicyDecision
}

// DeniedEndpoints judges a connection of proto from ca (client, when a
// Pod) to the frontend tr translates: NetworkPolicies select Pods, and the
// dataplane enforces them after the translation, on the endpoint's
// address and port. It returns the decisions when the policies deny the
// connection at every endpoint (a connection goes to one of them, and a
// capture before the translation does not say which), and nil when one
// endpoint admits it or is no Pod the objects list.
func (x *PolicyIndex) DeniedEndpoints(tr *Translation, client *model.Pod, ca netip.Addr, proto corev1.Protocol) []EndpointDecision {
	var out []EndpointDecision
	for _, b := range tr.Backends {
		d := EndpointDecision{Endpoint: b, Server: x.Pod(b.Addr.Addr())}
		if d.Server == nil {
			return nil
		}
		d.In = x.Ingress(d.Server, ca, proto, b.Addr.Port())
		if client != nil {
			d.Out = x.Egress(client, b.Addr.Addr(), proto, b.Addr.Port())
		}
		if !d.In.Denied() && !d.Out.Denied() {
			return nil
		}
		out = append(out, d)
	}
	return out
}

// Goes words where tr sends connections: "10.96.86.20:80 goes to
// 10.86.2.20:8080 (the Endpoints of Service shop/cart)".
func (tr *Translation) Goes() string {
	var bs []string
	for _, b := range tr.Backends {
		bs = append(bs, b.Addr.String())
	}
	return fmt.Sprintf("%s goes to %s (%s)", tr.Frontend, strings.Join(bs, ", "), tr.By)
}

// PolicyNames names policies as namespace/name.
func PolicyNames(ps []*model.NetworkPolicy) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Namespace + "/" + p.Name
	}
	return out
}

// Named names the Service of tr: "Service shop/cart", or "a Service" when
// the rules do not say.
func (tr *Translation) Named() string {
	if tr.Service == "" {
		return "a Service"
	}
	return "Service " + tr.Service
}

// Each words all of tr's endpoints: "its only endpoint", "each of its 3
// endpoints".
func (tr *Translation) Each() string {
	if len(tr.Backends) == 1 {
		return "its only endpoint"
	}
	return fmt.Sprintf("each of its %d endpoints", len(tr.Backends))
}
