package kube

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// rowObject holds what every kind's row gives.
type rowObject struct {
	name, ns string
	cells    map[string]string
	src      model.Source
}

func (t *tableReader) add(h *tableHeader, cells []string, aligned bool, line int) error {
	o := rowObject{cells: map[string]string{}, ns: t.cmd.namespace}
	for i, c := range h.cols {
		if cells[i] != "" {
			o.cells[c] = cells[i]
		}
	}
	o.name = o.cells["NAME"]
	if i := strings.LastIndexByte(o.name, '/'); i >= 0 {
		o.name = o.name[i+1:] // service/kube-dns, as kubectl get all prints it
	}
	if ns, ok := o.cells["NAMESPACE"]; ok {
		o.ns = ns
	}
	if h.kind == tkNode || h.kind == tkComponentStatus {
		o.ns = ""
	}
	kind := tableKindNames[h.kind]
	o.src = model.Source{
		Pos:       model.Pos{File: t.name, Line: line, Object: model.ObjectName(kind, o.ns, o.name)},
		Node:      t.node,
		FromTable: true,
		Cells:     o.cells,
	}
	t.counts[kind]++
	switch h.kind {
	case tkService:
		return t.addService(o)
	case tkPod:
		return t.addPod(o)
	case tkNode:
		t.addNode(o)
	case tkComponentStatus:
		t.addComponentStatus(o, h, aligned)
	case tkIngress:
		t.addIngress(o)
	case tkEndpoints:
		return t.addEndpoints(o)
	}
	return nil
}

func (o *rowObject) meta(kind, apiVersion string) (metav1.TypeMeta, metav1.ObjectMeta) {
	return metav1.TypeMeta{Kind: kind, APIVersion: apiVersion}, metav1.ObjectMeta{Name: o.name, Namespace: o.ns}
}

// cellList splits a comma-separated cell, without kubectl's placeholders.
func cellList(s string) []string {
	switch s {
	case "", "<none>", "<pending>", "<unknown>", "<invalid>":
		return nil
	}
	return strings.Split(s, ",")
}

func (t *tableReader) addService(o rowObject) error {
	var svc corev1.Service
	svc.TypeMeta, svc.ObjectMeta = o.meta("Service", "v1")
	svc.Spec.Type = corev1.ServiceType(o.cells["TYPE"])
	if ip := o.cells["CLUSTER-IP"]; ip == "None" || isIPCell(ip) && ip != "<none>" {
		svc.Spec.ClusterIP = ip
		svc.Spec.ClusterIPs = []string{ip}
	}
	ext := o.cells["EXTERNAL-IP"]
	switch svc.Spec.Type {
	case corev1.ServiceTypeExternalName:
		if ext != "<none>" {
			svc.Spec.ExternalName = ext
		}
	case corev1.ServiceTypeLoadBalancer:
		for _, a := range cellList(ext) {
			switch {
			case isIPCell(a):
				svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: a})
			case !strings.HasSuffix(a, "..."): // cut short by kubectl: unknown
				svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{Hostname: a})
			}
		}
	default:
		for _, a := range cellList(ext) {
			if isIPCell(a) {
				svc.Spec.ExternalIPs = append(svc.Spec.ExternalIPs, a)
			}
		}
	}
	if sel, ok := o.cells["SELECTOR"]; ok && sel != "<none>" {
		svc.Spec.Selector = map[string]string{}
		for _, kv := range strings.Split(sel, ",") {
			k, v, _ := strings.Cut(kv, "=")
			svc.Spec.Selector[k] = v
		}
	}
	var perr error
	for _, p := range cellList(o.cells["PORT(S)"]) {
		sp, err := parseServicePort(p)
		if err != nil {
			perr = err
			continue
		}
		svc.Spec.Ports = append(svc.Spec.Ports, sp)
	}
	t.k.Services = append(t.k.Services, model.Service{Service: svc, Source: o.src})
	return perr
}

// parseServicePort reads one entry of PORT(S): "80:32080/TCP" or "53/UDP".
func parseServicePort(s string) (corev1.ServicePort, error) {
	ports, proto, _ := strings.Cut(s, "/")
	port, node, hasNode := strings.Cut(ports, ":")
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return corev1.ServicePort{}, fmt.Errorf("%w: port %q in PORT(S): want 1-65535", format.ErrValue, s)
	}
	sp := corev1.ServicePort{Port: int32(p), Protocol: corev1.Protocol(proto)}
	if hasNode {
		np, err := strconv.ParseUint(node, 10, 16)
		if err != nil || np == 0 {
			return corev1.ServicePort{}, fmt.Errorf("%w: NodePort %q in PORT(S): want 1-65535", format.ErrValue, s)
		}
		sp.NodePort = int32(np)
	}
	return sp, nil
}

func (t *tableReader) addPod(o rowObject) error {
	var pod corev1.Pod
	pod.TypeMeta, pod.ObjectMeta = o.meta("Pod", "v1")
	var err error
	ready, total := 0, 0
	if r, tot, ok := strings.Cut(o.cells["READY"], "/"); ok {
		ready, _ = strconv.Atoi(r)
		total, _ = strconv.Atoi(tot)
	}
	if total > 64 {
		err = fmt.Errorf("%w: READY %q: more than 64 containers", format.ErrValue, o.cells["READY"])
		total = 0
	}
	restarts, _, _ := strings.Cut(o.cells["RESTARTS"], " ")
	nRestarts, rerr := strconv.ParseInt(restarts, 10, 32)
	if rerr != nil {
		err = fmt.Errorf("%w: RESTARTS %q: want a count", format.ErrValue, o.cells["RESTARTS"])
	}
	for i := 0; i < total; i++ {
		cs := corev1.ContainerStatus{Ready: i < ready}
		if i == 0 {
			cs.RestartCount = int32(nRestarts)
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, cs)
	}
	switch st := corev1.PodPhase(o.cells["STATUS"]); st {
	case corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown:
		pod.Status.Phase = st
	default:
		pod.Status.Reason = string(st) // CrashLoopBackOff, Completed, Init:0/1 ...
	}
	if ip := o.cells["IP"]; ip != "" && ip != "<none>" {
		pod.Status.PodIP = ip
		pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	}
	if n := o.cells["NODE"]; n != "" && n != "<none>" {
		pod.Spec.NodeName = n
	}
	if n := o.cells["NOMINATED NODE"]; n != "" && n != "<none>" {
		pod.Status.NominatedNodeName = n
	}
	t.k.Pods = append(t.k.Pods, model.Pod{Pod: pod, Source: o.src})
	return err
}

func (t *tableReader) addNode(o rowObject) {
	var node corev1.Node
	node.TypeMeta, node.ObjectMeta = o.meta("Node", "v1")
	for i, s := range strings.Split(o.cells["STATUS"], ",") {
		if i > 0 {
			if s == "SchedulingDisabled" {
				node.Spec.Unschedulable = true
			}
			continue
		}
		c := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}
		switch s {
		case "Ready":
			c.Status = corev1.ConditionTrue
		case "NotReady":
			c.Status = corev1.ConditionFalse
		}
		node.Status.Conditions = append(node.Status.Conditions, c)
	}
	for _, r := range cellList(o.cells["ROLES"]) {
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels["node-role.kubernetes.io/"+r] = ""
	}
	info := &node.Status.NodeInfo
	info.KubeletVersion = o.cells["VERSION"]
	known := func(s string) string {
		if s == "<none>" || s == "<unknown>" {
			return ""
		}
		return s
	}
	if ip := known(o.cells["INTERNAL-IP"]); ip != "" {
		node.Status.Addresses = append(node.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	if ip := known(o.cells["EXTERNAL-IP"]); ip != "" {
		node.Status.Addresses = append(node.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: ip})
	}
	info.OSImage = known(o.cells["OS-IMAGE"])
	info.KernelVersion = known(o.cells["KERNEL-VERSION"])
	info.ContainerRuntimeVersion = known(o.cells["CONTAINER-RUNTIME"])
	t.k.Nodes = append(t.k.Nodes, model.Node{Node: node, Source: o.src})
}

// addComponentStatus: kubectl prints the Healthy condition's message and
// error. When the row's spaces were collapsed, the two cannot be told
// apart: the text is the error of an Unhealthy component if the header has
// an ERROR column, else the message.
func (t *tableReader) addComponentStatus(o rowObject, h *tableHeader, aligned bool) {
	var cs corev1.ComponentStatus
	cs.TypeMeta, cs.ObjectMeta = o.meta("ComponentStatus", "v1")
	c := corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionUnknown,
		Message: o.cells["MESSAGE"], Error: o.cells["ERROR"]}
	switch o.cells["STATUS"] {
	case "Healthy":
		c.Status = corev1.ConditionTrue
	case "Unhealthy":
		c.Status = corev1.ConditionFalse
		hasErr := false
		for _, col := range h.cols {
			hasErr = hasErr || col == "ERROR"
		}
		if !aligned && hasErr && c.Error == "" {
			c.Message, c.Error = "", c.Message
			if c.Error != "" {
				o.cells["ERROR"] = c.Error
				delete(o.cells, "MESSAGE")
			}
		}
	}
	cs.Conditions = []corev1.ComponentCondition{c}
	t.k.ComponentStatuses = append(t.k.ComponentStatuses, model.ComponentStatus{ComponentStatus: cs, Source: o.src})
}

// addIngress: HOSTS become rules (a rule without a host for "*"; hosts
// kubectl elides are not kept), ADDRESS the load balancer status, and
// "80, 443" in PORTS a TLS section whose hosts are unknown.
func (t *tableReader) addIngress(o rowObject) {
	var ing networkingv1.Ingress
	ing.TypeMeta, ing.ObjectMeta = o.meta("Ingress", "networking.k8s.io/v1")
	if c, ok := o.cells["CLASS"]; ok && c != "<none>" {
		ing.Spec.IngressClassName = &c
	}
	hosts := o.cells["HOSTS"]
	if m := moreRe.FindStringSubmatch(hosts); m != nil {
		hosts = m[1]
	}
	for _, h := range strings.Split(hosts, ",") {
		if h == "*" {
			h = ""
		}
		ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: h})
	}
	for _, a := range cellList(o.cells["ADDRESS"]) {
		switch {
		case isIPCell(a):
			ing.Status.LoadBalancer.Ingress = append(ing.Status.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{IP: a})
		case !strings.HasSuffix(a, "..."):
			ing.Status.LoadBalancer.Ingress = append(ing.Status.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{Hostname: a})
		}
	}
	for _, p := range strings.Split(o.cells["PORTS"], ", ") {
		if p == "443" {
			ing.Spec.TLS = []networkingv1.IngressTLS{{}}
		}
	}
	t.k.Ingresses = append(t.k.Ingresses, model.Ingress{Ingress: ing, Source: o.src})
}

// addEndpoints: kubectl lists up to three address:port pairs, port by
// port, then "+ N more...". Each run of one port becomes a subset holding
// the addresses shown with it; the N elided pairs are added to the last
// subset as addresses without an IP, so that the pairs add up.
func (t *tableReader) addEndpoints(o rowObject) error {
	var ep corev1.Endpoints
	ep.TypeMeta, ep.ObjectMeta = o.meta("Endpoints", "v1")
	cell := o.cells["ENDPOINTS"]
	more := 0
	if m := moreRe.FindStringSubmatch(cell); m != nil {
		cell = m[1]
		more, _ = strconv.Atoi(m[2])
	}
	var err error
	if t.unknownAddrs+more > maxTableAddresses {
		err = fmt.Errorf("%w: ENDPOINTS %q: more than %d elided addresses in one input", format.ErrValue, o.cells["ENDPOINTS"], maxTableAddresses)
		more = 0
	}
	t.unknownAddrs += more
	// kubectl prints, subset by subset, each port with all its addresses:
	// a new port, or an address seen again with the same port (53/UDP then
	// 53/TCP), starts a new run.
	curPort, seen := -1, map[string]bool{}
	for _, e := range cellList(cell) {
		ip, port := e, 0
		if ap, perr := netip.ParseAddrPort(e); perr == nil {
			ip, port = ap.Addr().String(), int(ap.Port())
		}
		if port != curPort || seen[ip] {
			curPort, seen = port, map[string]bool{}
			var s corev1.EndpointSubset
			if port != 0 {
				s.Ports = []corev1.EndpointPort{{Port: int32(port)}}
			}
			ep.Subsets = append(ep.Subsets, s)
		}
		seen[ip] = true
		last := &ep.Subsets[len(ep.Subsets)-1]
		last.Addresses = append(last.Addresses, corev1.EndpointAddress{IP: ip})
	}
	if more > 0 && len(ep.Subsets) > 0 {
		last := &ep.Subsets[len(ep.Subsets)-1]
		last.Addresses = append(last.Addresses, make([]corev1.EndpointAddress, more)...)
	}
	t.k.Endpoints = append(t.k.Endpoints, model.Endpoints{Endpoints: ep, Source: o.src})
	return err
}

// addEndpointsCount records the length jq printed for the Endpoints the
// command named: that many addresses whose IPs are unknown.
func (t *tableReader) addEndpointsCount(n, line int) {
	var ep corev1.Endpoints
	ep.Kind, ep.APIVersion = "Endpoints", "v1"
	ep.Name, ep.Namespace = t.cmd.names[0], t.cmd.namespace
	s := corev1.EndpointSubset{}
	if t.cmd.countOf == "notReadyAddresses" {
		s.NotReadyAddresses = make([]corev1.EndpointAddress, n)
	} else {
		s.Addresses = make([]corev1.EndpointAddress, n)
	}
	if n > 0 {
		ep.Subsets = []corev1.EndpointSubset{s}
	}
	t.counts["Endpoints"]++
	t.k.Endpoints = append(t.k.Endpoints, model.Endpoints{Endpoints: ep, Source: model.Source{
		Pos:       model.Pos{File: t.name, Line: line, Object: model.ObjectName("Endpoints", ep.Namespace, ep.Name)},
		Node:      t.node,
		FromTable: true,
		Cells:     map[string]string{strings.ToUpper(t.cmd.countOf): strconv.Itoa(n)},
	}})
}
