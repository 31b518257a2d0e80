package facts

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// NetPolicies indexes the Pods, Namespaces and NetworkPolicies of the
// snapshot and evaluates, by the NetworkPolicy semantics, whether they let
// one connection through.
var NetPolicies = &analyzer.Fact[*PolicyIndex]{
	Name: "netpolicies",
	Doc: "the Pods by IP, the Namespaces' labels and the NetworkPolicies, to evaluate whether the policies admit " +
		"a connection (podSelector, namespaceSelector, ipBlock with except, ports with named ports and endPort, " +
		"policyTypes; the policies that select a Pod are a union)",
	Compute: func(fs *analyzer.FactSet) *PolicyIndex { return newPolicyIndex(fs.Snapshot()) },
}

// PolicyIndex holds what NetworkPolicy evaluation needs.
type PolicyIndex struct {
	podByIP  map[netip.Addr]*model.Pod
	ns       map[string]*model.Namespace
	policies []*model.NetworkPolicy
}

func newPolicyIndex(s *model.Snapshot) *PolicyIndex {
	x := &PolicyIndex{podByIP: map[netip.Addr]*model.Pod{}, ns: map[string]*model.Namespace{}}
	for i := range s.Kube.Pods {
		p := &s.Kube.Pods[i]
		if p.Spec.HostNetwork {
			continue // its IP is the node's
		}
		ips := []string{p.Status.PodIP}
		for _, ip := range p.Status.PodIPs {
			ips = append(ips, ip.IP)
		}
		for _, ip := range ips {
			if a, err := netip.ParseAddr(ip); err == nil {
				x.podByIP[a] = p
			}
		}
	}
	for i := range s.Kube.Namespaces {
		n := &s.Kube.Namespaces[i]
		x.ns[n.Name] = n
	}
	for i := range s.Kube.NetworkPolicies {
		x.policies = append(x.policies, &s.Kube.NetworkPolicies[i])
	}
	return x
}

// Any reports whether the snapshot holds NetworkPolicies.
func (x *PolicyIndex) Any() bool { return len(x.policies) > 0 }

// Pod returns the Pod whose IP is ip, or nil.
func (x *PolicyIndex) Pod(ip netip.Addr) *model.Pod { return x.podByIP[ip] }

// Namespace returns the Namespace object called name, or nil.
func (x *PolicyIndex) Namespace(name string) *model.Namespace { return x.ns[name] }

// PolicyRule names one rule of a policy: "shop/cart-allow ingress[0]".
type PolicyRule struct {
	Policy *model.NetworkPolicy
	Index  int
	// Why says why the rule does not admit the connection.
	Why string
}

// Pos returns the position of the rule in its policy's file.
func (r PolicyRule) Pos(dir string) model.Pos {
	return r.Policy.Source.FieldPos(fmt.Sprintf("spec.%s[%d]", dir, r.Index))
}

// PolicyDecision is what the NetworkPolicies decide for one direction
// (ingress to the server Pod, or egress from the client Pod) of a
// connection: allowed or denied, and by which rules.
type PolicyDecision struct {
	// Isolating are the policies that select the Pod for that direction;
	// none means the Pod is not isolated and the direction is allowed.
	Isolating []*model.NetworkPolicy
	// Allowed says a rule of an isolating policy admits the connection.
	Allowed bool
	// AllowedBy is that rule.
	AllowedBy *PolicyRule
	// Near are the rules that come closest: their ports match and their
	// peers do not, or the reverse; each says why it does not admit.
	Near []PolicyRule
	// Unknown says what the objects do not show that could change the
	// decision (a namespace's labels, the Pod behind an address).
	Unknown []string
}

// Denied reports whether the policies isolate the Pod and no rule admits
// the connection.
func (v PolicyDecision) Denied() bool { return len(v.Isolating) > 0 && !v.Allowed }

// Ingress evaluates whether the policies let a TCP or UDP connection from
// client (a Pod's address, or any other) reach port of the Pod server.
func (x *PolicyIndex) Ingress(server *model.Pod, client netip.Addr, proto corev1.Protocol, port uint16) PolicyDecision {
	return x.evaluate(server, networkingv1.PolicyTypeIngress, server, client, proto, port)
}

// Egress evaluates whether the policies let the Pod client open a
// connection to dst:port (a Pod's address or any other).
func (x *PolicyIndex) Egress(client *model.Pod, dst netip.Addr, proto corev1.Protocol, port uint16) PolicyDecision {
	return x.evaluate(client, networkingv1.PolicyTypeEgress, x.podByIP[dst], dst, proto, port)
}

// evaluate judges one direction for the Pod subject: peer is the other
// end (its address, its Pod when known), target the Pod whose named ports
// apply.
func (x *PolicyIndex) evaluate(subject *model.Pod, dir networkingv1.PolicyType, target *model.Pod, peer netip.Addr,
	proto corev1.Protocol, port uint16) PolicyDecision {
	var v PolicyDecision
	peerPod := x.podByIP[peer]
	if dir == networkingv1.PolicyTypeIngress {
		target = subject
	}
	for _, pol := range x.policies {
		if pol.Namespace != subject.Namespace || !hasType(pol, dir) {
			continue
		}
		if ok, _ := selects(&pol.Spec.PodSelector, subject.Labels); !ok {
			continue
		}
		v.Isolating = append(v.Isolating, pol)
		n := len(pol.Spec.Ingress)
		if dir == networkingv1.PolicyTypeEgress {
			n = len(pol.Spec.Egress)
		}
		for i := range n {
			var ports []networkingv1.NetworkPolicyPort
			var peers []networkingv1.NetworkPolicyPeer
			if dir == networkingv1.PolicyTypeIngress {
				ports, peers = pol.Spec.Ingress[i].Ports, pol.Spec.Ingress[i].From
			} else {
				ports, peers = pol.Spec.Egress[i].Ports, pol.Spec.Egress[i].To
			}
			portOK, portWhy := portsMatch(ports, target, proto, port)
			peerOK, peerWhy, unknown := x.peersMatch(peers, pol.Namespace, peer, peerPod)
			v.Unknown = append(v.Unknown, unknown...)
			switch {
			case portOK && peerOK:
				if !v.Allowed {
					v.Allowed, v.AllowedBy = true, &PolicyRule{Policy: pol, Index: i}
				}
			case portOK:
				v.Near = append(v.Near, PolicyRule{Policy: pol, Index: i, Why: peerWhy})
			case peerOK:
				v.Near = append(v.Near, PolicyRule{Policy: pol, Index: i, Why: portWhy})
			}
		}
	}
	if v.Allowed {
		v.Unknown = nil
	}
	return v
}

// hasType reports whether pol applies to dir: policyTypes, or when it is
// empty, Ingress always and Egress when the policy has egress rules.
func hasType(pol *model.NetworkPolicy, dir networkingv1.PolicyType) bool {
	if len(pol.Spec.PolicyTypes) == 0 {
		return dir == networkingv1.PolicyTypeIngress || len(pol.Spec.Egress) > 0
	}
	for _, t := range pol.Spec.PolicyTypes {
		if t == dir {
			return true
		}
	}
	return false
}

// selects reports whether sel selects a set of labels; a selector that
// cannot be read selects nothing, and says why.
func selects(sel *metav1.LabelSelector, l map[string]string) (bool, error) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, fmt.Errorf("bad selector: %w", err)
	}
	return s.Matches(labels.Set(l)), nil
}

// SelectorString formats a label selector: "app=cart", "{} (all)".
func SelectorString(sel *metav1.LabelSelector) string {
	if sel == nil {
		return "(none)"
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "(invalid)"
	}
	if s.Empty() {
		return "{} (all)"
	}
	return s.String()
}

// portsMatch reports whether ports (none: every port) admit proto/port of
// the Pod target, whose named ports apply; otherwise it says why not.
func portsMatch(ports []networkingv1.NetworkPolicyPort, target *model.Pod, proto corev1.Protocol, port uint16) (bool, string) {
	if len(ports) == 0 {
		return true, ""
	}
	var listed []string
	for _, p := range ports {
		pp := corev1.ProtocolTCP
		if p.Protocol != nil {
			pp = *p.Protocol
		}
		if p.Port == nil {
			listed = append(listed, string(pp))
			if pp == proto {
				return true, ""
			}
			continue
		}
		first, last := int(p.Port.IntVal), int(p.Port.IntVal)
		what := fmt.Sprintf("%s %s", pp, p.Port.String())
		if p.Port.Type == intstr.String { // a named port: the target's container port of that name
			first, last = namedPort(target, p.Port.StrVal, pp), -1
			if first > 0 {
				last = first
				what += fmt.Sprintf(" (%d)", first)
			} else {
				what += " (no such port on the Pod)"
			}
		} else if p.EndPort != nil {
			last = int(*p.EndPort)
			what += fmt.Sprintf("-%d", last)
		}
		listed = append(listed, what)
		if pp == proto && int(port) >= first && int(port) <= last {
			return true, ""
		}
	}
	return false, fmt.Sprintf("its ports are %s, not %s %d", strings.Join(listed, ", "), proto, port)
}

// namedPort returns the number of the container port called name of pod,
// or 0.
func namedPort(pod *model.Pod, name string, proto corev1.Protocol) int {
	if pod == nil {
		return 0
	}
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			pp := cp.Protocol
			if pp == "" {
				pp = corev1.ProtocolTCP
			}
			if cp.Name == name && pp == proto {
				return int(cp.ContainerPort)
			}
		}
	}
	return 0
}

// peersMatch reports whether peers (none: every peer) admit the address
// peer, whose Pod is peerPod when known, for a policy of namespace polNS;
// otherwise it says why not, and what the objects do not show.
func (x *PolicyIndex) peersMatch(peers []networkingv1.NetworkPolicyPeer, polNS string, peer netip.Addr,
	peerPod *model.Pod) (bool, string, []string) {
	if len(peers) == 0 {
		return true, "", nil
	}
	var whys, unknown []string
	for _, p := range peers {
		ok, why, unk := x.peerMatch(p, polNS, peer, peerPod)
		if ok {
			return true, "", nil
		}
		whys = append(whys, why)
		unknown = append(unknown, unk...)
	}
	return false, strings.Join(whys, "; "), unknown
}

func (x *PolicyIndex) peerMatch(p networkingv1.NetworkPolicyPeer, polNS string, peer netip.Addr,
	peerPod *model.Pod) (bool, string, []string) {
	if b := p.IPBlock; b != nil {
		what := "ipBlock " + b.CIDR
		if len(b.Except) > 0 {
			what += " except " + strings.Join(b.Except, ", ")
		}
		cidr, err := netip.ParsePrefix(b.CIDR)
		if err != nil || !cidr.Contains(peer) {
			return false, fmt.Sprintf("%s: %s is outside it", what, peer), nil
		}
		for _, e := range b.Except {
			if ex, err := netip.ParsePrefix(e); err == nil && ex.Contains(peer) {
				return false, fmt.Sprintf("%s: %s is in the except %s", what, peer, e), nil
			}
		}
		return true, "", nil
	}
	var what []string
	if p.NamespaceSelector != nil {
		what = append(what, "namespaceSelector "+SelectorString(p.NamespaceSelector))
	}
	if p.PodSelector != nil {
		what = append(what, "podSelector "+SelectorString(p.PodSelector))
	}
	desc := strings.Join(what, " and ")
	if peerPod == nil {
		return false, fmt.Sprintf("%s: %s is no Pod the objects list", desc, peer),
			[]string{fmt.Sprintf("which Pod, if any, has the address %s", peer)}
	}
	podName := peerPod.Namespace + "/" + peerPod.Name
	if p.NamespaceSelector == nil {
		if peerPod.Namespace != polNS {
			return false, fmt.Sprintf("%s: it selects Pods of namespace %s only, and %s is in %s", desc, polNS,
				podName, peerPod.Namespace), nil
		}
	} else {
		nsLabels := map[string]string{corev1.LabelMetadataName: peerPod.Namespace}
		n := x.ns[peerPod.Namespace]
		if n != nil {
			nsLabels = n.Labels
		}
		ok, _ := selects(p.NamespaceSelector, nsLabels)
		if !ok {
			if n == nil {
				return false, fmt.Sprintf("%s: the labels of namespace %s are not shown", desc, peerPod.Namespace),
					[]string{fmt.Sprintf("the labels of namespace %s", peerPod.Namespace)}
			}
			return false, fmt.Sprintf("%s: namespace %s has labels %s", desc, peerPod.Namespace,
				labels.Set(n.Labels).String()), nil
		}
	}
	if p.PodSelector != nil {
		if ok, _ := selects(p.PodSelector, peerPod.Labels); !ok {
			return false, fmt.Sprintf("%s: %s has labels %s", desc, podName, labels.Set(peerPod.Labels).String()), nil
		}
	}
	return true, "", nil
}
