package rules

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// The Pod network overlapping the Service network: a Pod given an
// address that is also a Service's, kube-proxy translating the Pod's
// traffic as the Service's, and replies from Services taken for Pods.

// kubeadmServiceCIDR is the Service network kubeadm, kind and minikube
// give a cluster when none is set.
var kubeadmServiceCIDR = netip.MustParsePrefix("10.96.0.0/12")

// serviceAddr is an address the bundle shows a Service holds.
type serviceAddr struct {
	addr netip.Addr
	what string // "Service default/kubernetes's ClusterIP", "the Pods' nameserver (the cluster DNS)"
	pos  model.Pos
}

// serviceAddrs returns the Services' ClusterIPs, and, with none, the
// cluster DNS address a Pod's resolv.conf names (its search path holding
// svc.cluster.local).
func serviceAddrs(s *model.Snapshot) []serviceAddr {
	var out []serviceAddr
	for _, svc := range s.Kube.Services {
		for _, ip := range svc.Spec.ClusterIPs {
			if a, err := netip.ParseAddr(ip); err == nil {
				out = append(out, serviceAddr{addr: a, pos: svc.Source.Pos,
					what: fmt.Sprintf("Service %s/%s's ClusterIP %s", svc.Namespace, svc.Name, a)})
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, rc := range s.ResolvConfs {
		pod := false
		for _, d := range rc.Search {
			pod = pod || strings.HasPrefix(d, "svc.")
		}
		if pod && len(rc.Nameservers) > 0 {
			ns := rc.Nameservers[0]
			out = append(out, serviceAddr{addr: ns.Addr, pos: ns.Pos,
				what: fmt.Sprintf("the Pods' nameserver %s (the cluster DNS Service)", ns.Addr)})
		}
	}
	return out
}

// podServiceOverlaps reports each Pod network setting that overlaps the
// Service network: as a Service network setting gives it, as the
// Services' own addresses show it, or, with neither, as kubeadm's default
// would make it, unless the Pod network's overlap with the nodes'
// networks (reported) already explains the failure.
func podServiceOverlaps(p *analyzer.Pass, settings []cidrSetting, reported map[netip.Prefix]bool) {
	var pods, svcs []cidrSetting
	for _, st := range groupSettings(settings) {
		if st[0].service {
			svcs = append(svcs, st[0])
		} else {
			pods = append(pods, st[0])
		}
	}
	addrs := serviceAddrs(p.Snap)
	for _, pod := range pods {
		switch what, ev, ok := serviceOverlap(pod, svcs, addrs); {
		case ok:
			p.Report(podServiceFinding(p, pod, what, ev))
		case len(svcs) == 0 && len(addrs) == 0 && pod.prefix.Addr().Is4() && pod.prefix.Overlaps(kubeadmServiceCIDR) &&
			!reported[pod.prefix]:
			p.Report(podDefaultServiceFinding(pod))
		}
	}
}

// serviceOverlap returns the first of the Service network's settings that
// pod overlaps, or, with none set, the first Service address inside pod:
// what it is, and the evidence that shows it.
func serviceOverlap(pod cidrSetting, svcs []cidrSetting, addrs []serviceAddr) (string, analyzer.Evidence, bool) {
	for _, svc := range svcs {
		if pod.prefix.Overlaps(svc.prefix) {
			return fmt.Sprintf("the Service network %s (%s)", svc.prefix, svc.name),
				analyzer.Evidence{Pos: svc.pos, Note: fmt.Sprintf("%s %s", svc.name, svc.prefix)}, true
		}
	}
	if len(svcs) > 0 {
		return "", analyzer.Evidence{}, false // the setting is the Service network: its addresses lie in it
	}
	for _, a := range addrs {
		if pod.prefix.Contains(a.addr) {
			return a.what, analyzer.Evidence{Pos: a.pos, Note: a.what}, true
		}
	}
	return "", analyzer.Evidence{}, false
}

// podServiceBase is what the findings of the Pod network pod overlapping
// the Service network say alike: its subject, cause, fix and the command
// that decides, with pod's setting as the first evidence.
func podServiceBase(pod cidrSetting, what string) analyzer.Finding {
	return analyzer.Finding{
		Subject:   subject("network", pod.prefix.String(), "setting", "pod", "with", "service"),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Cause: "The Pod network was chosen inside the Service network (kubeadm's --pod-network-cidr, the CNI's " +
			"IPAM subnet, set to a range the Services take, 10.96.0.0/12 by default).",
		Fix: "Choose a Pod network disjoint from the Service network (and from the nodes' networks), set it everywhere " +
			"alike (kubeadm --pod-network-cidr, the CNI's IPAM or pool), and recreate the Pods.",
		Supports: []string{fmt.Sprintf("%s: %s sets the Pod network to %s", pod.pos, pod.name, pod.prefix)},
		Decide: "kubectl get svc kubernetes -o jsonpath='{.spec.clusterIP}'; " +
			"kubectl cluster-info dump | grep -m1 -- --service-cluster-ip-range",
		Facts:    map[string]any{"network": pod.prefix.String(), "set_by": pod.name, "overlaps": what},
		Evidence: []analyzer.Evidence{{Pos: pod.pos, Note: fmt.Sprintf("%s %s", pod.name, pod.prefix)}},
	}
}

// podServiceFinding words the Pod network pod overlapping the Service
// network that what names, shown by ev.
func podServiceFinding(p *analyzer.Pass, pod cidrSetting, what string, ev analyzer.Evidence) analyzer.Finding {
	f := podServiceBase(pod, what)
	f.Title = fmt.Sprintf("the Pod network %s overlaps the Service network (%s)", pod.prefix, what)
	f.Summary = fmt.Sprintf("The Pod network is %s (%s), and %s lies in it: a Pod can get a Service's address, "+
		"kube-proxy translates traffic to that address as the Service's, and Pods cannot reach each other or "+
		"the Services whose addresses they share.", pod.prefix, pod.name, what)
	f.Supports = append(f.Supports, fmt.Sprintf("%s: %s", ev.Pos, what))
	f.Evidence = append(f.Evidence, ev)
	if p.Joins(f.Evidence) {
		f.Severity, f.Certainty, f.Decide = analyzer.Error, analyzer.Proven, ""
	}
	return f
}

// podDefaultServiceFinding words the Pod network pod inside kubeadm's
// default Service network, the bundle showing nothing of the cluster's
// own: the cause stays unknown.
func podDefaultServiceFinding(pod cidrSetting) analyzer.Finding {
	f := podServiceBase(pod, "kubeadm's default Service network 10.96.0.0/12")
	f.Certainty = analyzer.Unknown
	f.Title = fmt.Sprintf("the Pod network %s lies in kubeadm's default Service network 10.96.0.0/12", pod.prefix)
	f.Summary = fmt.Sprintf("The Pod network is %s (%s), inside the Service network kubeadm, kind and minikube "+
		"give a cluster by default, 10.96.0.0/12. If this cluster kept that default, a Pod can get a Service's "+
		"address: kube-proxy translates traffic to it as the Service's, and replies from Services look like a "+
		"Pod's.", pod.prefix, pod.name)
	f.Alternatives = []string{"the cluster's Service network was set to another range (--service-cluster-ip-range; " +
		"k3s's default is 10.43.0.0/16)"}
	return f
}
