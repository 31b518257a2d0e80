package kube

import (
	"io"
	"net/netip"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// KubectlDescribe reads `kubectl describe endpoints` and `kubectl describe
// service` output: "Name:", "Namespace:", "Labels:", "Annotations:" (with
// values continued on indented lines, as kubectl wraps and cuts long
// annotations), and for Endpoints the "Subsets:" addresses and ports, for
// Services the type, cluster IP, ports, NodePorts and endpoints. Several
// objects may follow each other. The kind is taken from the pasted command
// line when there is one ("$ kubectl -n kube-system describe endpoints
// kube-scheduler"), else from the fields shown.
//
// The objects are partial (Source.FromTable is set): kubectl cuts long
// annotation values short with "...", and they are kept as printed.
func KubectlDescribe(r io.Reader, name string) (*model.Kube, error) {
	var errs model.ErrorList
	k := readDescribe(r, &format.File{Name: name}, &errs)
	return k, errs.Err()
}

var (
	describeCmdRe   = lazyre.New(`\bkubectl\b.*\bdescribe\s+(endpoints|ep|services?|svc)\b`)
	describeFieldRe = lazyre.New(`^([A-Z][A-Za-z -]*):(?:\s+(.*))?$`)
	// kubectlStderrRe matches kubectl's own klog lines on stderr
	// ("E1008 13:30:47.434013    8209 describe.go:616] ..."), pasted with
	// the output.
	kubectlStderrRe = lazyre.New(`^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\] `)
	// describePortRe matches "Port:  https  443/TCP" and "NodePort:  http  32080/TCP".
	describePortRe = lazyre.New(`^(\S+)?\s*(\d+)/(TCP|UDP|SCTP)$`)
)

// describeObj is one object being read.
type describeObj struct {
	kind        string // "Endpoints", "Service", or "" until known
	pos         model.Pos
	name, ns    string
	labels      map[string]string
	annotations map[string]string
	fields      map[string]string
	ports       []corev1.ServicePort
	epAddrs     []corev1.EndpointAddress
	epNotReady  []corev1.EndpointAddress
	epPorts     []corev1.EndpointPort
}

// readDescribe reads kubectl describe output, counting the objects of each
// kind in the source's details.
func readDescribe(r io.Reader, src *format.File, errs *model.ErrorList) *model.Kube {
	name := src.Name
	k := &model.Kube{}
	node := src.Node
	cmdKind := ""
	var cur *describeObj
	var section string // Labels, Annotations, Subsets, Events ...
	var lastAnno string
	// events reads the object's Events table, as describe-events reads
	// a Pod's.
	var events *describeEventsReader
	kindOf := func(o *describeObj) {
		if o.kind == "" {
			o.kind = cmdKind
		}
		if o.kind == "" {
			if _, ok := o.fields["Subsets"]; ok {
				o.kind = "Endpoints"
			} else if _, ok := o.fields["Type"]; ok {
				o.kind = "Service"
			}
		}
	}
	flush := func() {
		if events != nil {
			k.Events = append(k.Events, events.out...)
			events = nil
		}
		if cur == nil {
			return
		}
		kindOf(cur)
		addDescribed(k, cur, node)
		cur = nil
	}
	l := text.NewLines(r, name, errs)
	for l.Next() {
		line := l.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if host, cmd, ok := text.Prompt(line); ok {
			flush()
			if host != "" {
				node = host
			}
			cmdKind = ""
			if m := describeCmdRe.FindStringSubmatch(cmd); m != nil {
				cmdKind = "Service"
				if strings.HasPrefix(m[1], "e") {
					cmdKind = "Endpoints"
				}
			}
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		if !indented && kubectlStderrRe.MatchString(line) {
			continue
		}
		if !indented {
			m := describeFieldRe.FindStringSubmatch(line)
			if m == nil {
				l.Errorf("%w: expected a \"Field:  value\" line of kubectl describe", format.ErrSyntax)
				continue
			}
			key, val := m[1], strings.TrimSpace(m[2])
			if key == "Name" {
				flush()
				cur = &describeObj{pos: l.Pos(), name: val, labels: map[string]string{}, annotations: map[string]string{}, fields: map[string]string{}}
				section = ""
				continue
			}
			if cur == nil {
				l.Errorf("%w: expected \"Name:\" to start an object", format.ErrSyntax)
				continue
			}
			cur.fields[key] = val
			section = key
			if key == "Events" && events == nil {
				kindOf(cur)
				events = &describeEventsReader{from: -1, kind: cur.kind, name: cur.name, ns: cur.ns}
			}
			switch key {
			case "Namespace":
				cur.ns = val
			case "Labels", "Annotations":
				lastAnno = ""
				describeKV(cur, key, val, &lastAnno)
			case "Port", "NodePort", "TargetPort":
				describeServicePort(cur, key, val)
			}
			continue
		}
		if cur == nil {
			l.Errorf("%w: expected \"Name:\" to start an object", format.ErrSyntax)
			continue
		}
		t := strings.TrimSpace(line)
		switch section {
		case "Labels", "Annotations", "Selector":
			describeKV(cur, section, t, &lastAnno)
		case "Subsets":
			describeSubset(cur, t)
		case "Events":
			events.line(&text.Line{Lines: l, Trimmed: t, Node: node})
		}
	}
	flush()
	src.Count("Endpoints", len(k.Endpoints))
	src.Count("Service", len(k.Services))
	if len(k.Events) > 0 {
		src.Count("Events", len(k.Events))
	}
	return k
}

// describeKV reads one "key=value" label or "key: value" annotation line;
// a line without a separator continues the previous annotation's value.
func describeKV(o *describeObj, section, t string, last *string) {
	if t == "" || t == "<none>" {
		return
	}
	switch section {
	case "Labels", "Selector":
		if section != "Labels" {
			return
		}
		if k, v, ok := strings.Cut(t, "="); ok {
			o.labels[k] = v
		}
	case "Annotations":
		if k, v, ok := strings.Cut(t, ": "); ok && !strings.HasPrefix(t, "{") && !strings.Contains(k, " ") {
			o.annotations[k] = strings.TrimSpace(v)
			*last = k
			return
		}
		if k, ok := strings.CutSuffix(t, ":"); ok && !strings.Contains(k, " ") {
			o.annotations[k] = ""
			*last = k
			return
		}
		if *last != "" {
			o.annotations[*last] += t
		}
	}
}

// describeSubset reads the indented lines of an Endpoints' Subsets.
func describeSubset(o *describeObj, t string) {
	key, val, _ := strings.Cut(t, ":")
	val = strings.TrimSpace(val)
	switch key {
	case "Addresses", "NotReadyAddresses":
		if val == "<none>" || val == "" {
			return
		}
		for _, a := range strings.Split(val, ",") {
			addr := corev1.EndpointAddress{IP: strings.TrimSpace(a)}
			if key == "Addresses" {
				o.epAddrs = append(o.epAddrs, addr)
			} else {
				o.epNotReady = append(o.epNotReady, addr)
			}
		}
	default:
		// Port rows under "Ports:": "https  6443  TCP" or "<unset>  53  UDP".
		f := strings.Fields(t)
		if len(f) == 3 {
			if n, err := strconv.Atoi(f[1]); err == nil {
				name := f[0]
				if name == "<unset>" {
					name = ""
				}
				o.epPorts = append(o.epPorts, corev1.EndpointPort{Name: name, Port: int32(n), Protocol: corev1.Protocol(f[2])})
			}
		}
	}
}

// describeServicePort reads a Service's Port, TargetPort and NodePort lines.
func describeServicePort(o *describeObj, key, val string) {
	m := describePortRe.FindStringSubmatch(val)
	if m == nil {
		return
	}
	name := m[1]
	if name == "<unset>" {
		name = ""
	}
	n, _ := strconv.Atoi(m[2])
	switch key {
	case "Port":
		o.ports = append(o.ports, corev1.ServicePort{Name: name, Port: int32(n), Protocol: corev1.Protocol(m[3])})
	case "NodePort":
		for i := range o.ports {
			if o.ports[i].Name == name {
				o.ports[i].NodePort = int32(n)
			}
		}
	}
}

func addDescribed(k *model.Kube, o *describeObj, node string) {
	pos := o.pos
	src := model.Source{Node: node, FromTable: true}
	meta := func(obj *metav1.ObjectMeta) {
		obj.Name, obj.Namespace = o.name, o.ns
		if len(o.labels) > 0 {
			obj.Labels = o.labels
		}
		if len(o.annotations) > 0 {
			obj.Annotations = o.annotations
		}
	}
	switch o.kind {
	case "Endpoints":
		var ep corev1.Endpoints
		ep.Kind, ep.APIVersion = "Endpoints", "v1"
		meta(&ep.ObjectMeta)
		if len(o.epAddrs) > 0 || len(o.epNotReady) > 0 || len(o.epPorts) > 0 {
			ep.Subsets = []corev1.EndpointSubset{{Addresses: o.epAddrs, NotReadyAddresses: o.epNotReady, Ports: o.epPorts}}
		}
		pos.Object = model.ObjectName("Endpoints", o.ns, o.name)
		src.Pos = pos
		k.Endpoints = append(k.Endpoints, model.Endpoints{Endpoints: ep, Source: src})
	case "Service":
		var svc corev1.Service
		svc.Kind, svc.APIVersion = "Service", "v1"
		meta(&svc.ObjectMeta)
		svc.Spec.Type = corev1.ServiceType(o.fields["Type"])
		ip := o.fields["IP"]
		if ip == "" {
			ip = o.fields["IPs"]
		}
		if _, err := netip.ParseAddr(ip); err == nil {
			svc.Spec.ClusterIP = ip
		}
		svc.Spec.Ports = o.ports
		// "LoadBalancer Ingress:  203.0.113.7" or an ELB's hostname, comma
		// separated when several.
		for _, a := range strings.Split(o.fields["LoadBalancer Ingress"], ",") {
			a = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(a), " (VIP)"))
			switch _, err := netip.ParseAddr(a); {
			case a == "" || a == "<none>":
			case err == nil:
				svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: a})
			default:
				svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{Hostname: a})
			}
		}
		pos.Object = model.ObjectName("Service", o.ns, o.name)
		src.Pos = pos
		k.Services = append(k.Services, model.Service{Service: svc, Source: src})
	}
}

// sniffDescribe scores kubectl describe output: a "Name:" line followed by
// "Namespace:" and the other aligned fields.
func sniffDescribe(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	lines := text.HeadLines(head, 60)
	seen := map[string]bool{}
	for _, line := range lines {
		if _, cmd, ok := text.Prompt(line); ok && describeCmdRe.MatchString(cmd) {
			seen["cmd"] = true
			continue
		}
		if m := describeFieldRe.FindStringSubmatch(line); m != nil {
			seen[m[1]] = true
		}
	}
	if !seen["Name"] || !seen["Namespace"] {
		return 0
	}
	switch {
	case seen["cmd"]:
		return 90
	case seen["Subsets"] || seen["Type"] && seen["Port"]:
		return 80
	case seen["Labels"] && seen["Annotations"]:
		return 50
	}
	return 0
}

// DescribeFormat reads kubectl describe of Services and Endpoints.
var DescribeFormat = &format.Format{
	Name:    "kubectl-describe",
	Kind:    model.KindKube,
	Command: "kubectl describe endpoints NAME, kubectl describe service NAME",
	Doc: "annotations (leader election records), subsets, ports and NodePorts, a Service's LoadBalancer Ingress; objects are marked " +
		"as read from a table (partial); the Events table at the end, as describe-events reads a Pod's, its " +
		"events involving the object described",
	Sniff: sniffDescribe,
	Parse: objects(readDescribe),
}
