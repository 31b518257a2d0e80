package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/internal/shq"
	"github.com/netmortem/netmortem/model"
)

// ServiceNoEndpoints finds an Ingress controller that has no ready
// endpoint for a Service it routes to.
var ServiceNoEndpoints = &analyzer.Rule{
	Name:        "service-no-endpoints",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindLogs, model.KindKube},
	SubjectKeys: []string{"node", "component", "object", "host"},
	ObjectKinds: []string{"Service"},
	Run:         runServiceNoEndpoints,
	Symptoms:    []analyzer.SymptomRef{LoadBalancer502.At(20)},
	Proof: "the Ingress controller's own line that it has no active endpoint for the Service (or its placeholder " +
		"upstream, 127.0.0.1:8181, in nginx's error log), and the Service's Endpoints and Pods in the bundle saying " +
		"why: every address not ready, or no Pod of the namespace carrying the selector's labels",
	Unproven: "the controller's line alone says that it found no endpoint, not why: the selector matches no Pod, the " +
		"Pods are not ready, or the Ingress names a port the Service does not have; the Service's Endpoints and the " +
		"Pods its selector picks decide",
	Doc: `an Ingress controller has no endpoint for a Service

An Ingress controller sends each request to the ready endpoints of the
Service its Ingress rule names. When the Service has none, ingress-nginx
logs "Service "NS/NAME" does not have any active Endpoint." and answers
the requests 503 Service Unavailable; older ingress-nginx and NGINX Inc's
controller write the placeholder upstream 127.0.0.1:8181 instead, which
nothing listens on, and nginx's error log says "connect() failed (111:
Connection refused) while connecting to upstream, ..., upstream:
"http://127.0.0.1:8181/..."" with a 502. NGINX Inc's controller logs
"Error retrieving endpoints for the service NAME: ..." when the Ingress
names a port the Service does not have or a Service that does not exist.
The placeholder is read only in an Ingress controller's log (its file or
component names one): a plain nginx may proxy to a 127.0.0.1:8181 of its
own.

The line says the controller found no endpoint, not why. The Service's
Endpoints (or EndpointSlices) and Pods in the bundle tell: addresses all
not ready (the Pods fail their readiness probe or are starting), no
address and no Pod of the namespace carrying the selector's labels (the
selector matches nothing: a label typed differently, a chart whose
selector and Pod template disagree), or ready addresses (the controller's
line is older than the objects, or the Ingress names a port the Service
does not have, which has no endpoints even when the Service has).

Evidence: the controller's log lines, the first and the last; the
Service, its Endpoints or EndpointSlices and the Pods its selector picks,
when the bundle holds them.

Severity: a warning. Its cause is likely when the Service's Endpoints list
only addresses that are not ready, or when the bundle's Pods of the
namespace show none that carries the selector's labels; unknown otherwise,
with the command that decides.

Fix: make the Service's selector match the labels of the Pods it should
send to (kubectl get pods --show-labels), make them pass their readiness
probe, and make the Ingress name a port the Service has (its port, not the
targetPort or a NodePort).`,
}

var (
	// noActiveEndpointRe is ingress-nginx's warning: `Service
	// "cms/web" does not have any active Endpoint.`, before 0.10 `service
	// default/web does not have any active endpoints` (in 2016 "does no
	// have").
	noActiveEndpointRe = lazyre.New(`(?i)\bservice "?(?:([a-z0-9][a-z0-9.-]*)/)?([a-z0-9][a-z0-9.-]*)"? does not? have any active endpoints?\b`)
	// kicEndpointsRe is NGINX Inc's controller failing to find a
	// backend's endpoints: `Error retrieving endpoints for the service
	// jenkins: No port {0 8080 } in service jenkins`.
	kicEndpointsRe = lazyre.New(`Error retrieving endpoints for the service ([a-z0-9][a-z0-9.-]*): (.+)$`)
	// kicNoPortRe is its reason for a port the Service does not have,
	// the Ingress's servicePort as Go prints an IntOrString: {0 8080 }
	// for a number, {1 0 http} for a name.
	kicNoPortRe = lazyre.New(`^No port \{([01]) (\d+) ?([^}]*)\} in service `)
	// kicNoServiceRe is its reason for a Service missing: `service fabric8/fabric8 doesn't exists`.
	kicNoServiceRe = lazyre.New(`^service (?:([a-z0-9][a-z0-9.-]*)/)?[a-z0-9][a-z0-9.-]* doesn't exists?$`)
)

// placeholderUpstream is where ingress-nginx before 0.18 and NGINX Inc's controller send a backend
// without endpoints: nothing listens there, so nginx fails to connect and answers 502.
const placeholderUpstream = "127.0.0.1:8181"

// noEndpoints is what one controller said of one backend.
type noEndpoints struct {
	node, comp  string
	ns, name    string // the Service, when the line names it
	host        string // the request's host, for the placeholder's lines
	reason      string // what NGINX Inc's controller said, "" for the others
	first, last *model.LogEvent
	count       int
}

func runServiceNoEndpoints(p *analyzer.Pass) error {
	var groups []*noEndpoints
	byKey := map[string]*noEndpoints{}
	note := func(le *model.LogEvent, ns, name, host, reason string) {
		comp := subjectComponent(le.Source, le.Pos.File)
		k := strings.Join([]string{le.Node, comp, ns, name, host}, "\x00")
		g := byKey[k]
		if g == nil {
			g = &noEndpoints{node: le.Node, comp: comp, ns: ns, name: name, host: host, reason: reason, first: le}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.last = le
		g.count++
	}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		first := firstLine(le.Message)
		if m := noActiveEndpointRe.FindStringSubmatch(first); m != nil {
			note(le, m[1], m[2], "", "")
		} else if m := kicEndpointsRe.FindStringSubmatch(first); m != nil {
			note(le, "", m[1], "", strings.TrimSpace(m[2]))
		} else if strings.Contains(first, "while connecting to upstream") &&
			strings.Contains(le.Fields["upstream"], "://"+placeholderUpstream) && ingressLog(le) {
			host := le.Fields["host"]
			if host == "" {
				host = le.Fields["server"]
			}
			note(le, "", "", host, "")
		}
	}
	told := map[string]bool{} // the Services a controller's line is about
	for _, g := range groups {
		f := noEndpointsFinding(p.Snap, g)
		told[f.Subject["object"]] = true
		p.Report(f)
	}
	// Endpoints whose every address is not ready, which no line told.
	seen := map[string]bool{}
	report := func(ns, name string) {
		k := object("Service", ns, name)
		if seen[k] || told[k] {
			return
		}
		seen[k] = true
		if a := facts.ServiceAddresses(p.Snap, ns, name); a.Ready == 0 && len(a.NotReady) > 0 {
			p.Report(notReadyFinding(p.Snap, ns, name, a))
		}
	}
	for i := range p.Snap.Kube.Endpoints {
		report(p.Snap.Kube.Endpoints[i].Namespace, p.Snap.Kube.Endpoints[i].Name)
	}
	for i := range p.Snap.Kube.EndpointSlices {
		sl := &p.Snap.Kube.EndpointSlices[i]
		if name := sl.Labels["kubernetes.io/service-name"]; name != "" {
			report(sl.Namespace, name)
		}
	}
	return nil
}

// ingressLog reports whether le is an Ingress controller's: its
// component or file names one. A plain nginx may proxy to a local
// 127.0.0.1:8181 of its own.
func ingressLog(le *model.LogEvent) bool {
	for _, s := range []string{le.Source, le.Pos.File, le.Pod, le.Container} {
		if strings.Contains(strings.ToLower(s), "ingress") {
			return true
		}
	}
	return false
}

// notReadyFinding reports the Endpoints of Service ns/name, whose
// addresses a are none of them ready: no controller or kube-proxy sends
// to them.
func notReadyFinding(s *model.Snapshot, ns, name string, a facts.Addresses) analyzer.Finding {
	svcName := objectName(ns, name)
	n := len(a.NotReady)
	addrs := fmt.Sprintf("%d %s", n, plural(n, "address", "addresses"))
	f := analyzer.Finding{
		Subject:   subject("object", object("Service", ns, name)),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"not_ready": n},
		Title: fmt.Sprintf("Service %s has no ready endpoint: %s, none ready", svcName,
			plural(n, "its one address is not ready", "its "+addrs)),
		Summary: fmt.Sprintf("The endpoints of Service %s hold %s, none of them ready: no client reaches the "+
			"Service's Pods through it (kube-proxy rejects its connections, \"connection refused\", and an Ingress "+
			"controller answers 503).", svcName, addrs),
		Supports: []string{fmt.Sprintf("%s: no ready address, %s not ready", a.Pos, addrs)},
		Cause: fmt.Sprintf("The Pods of Service %s are not ready: they fail their readiness probe, or are starting "+
			"or restarting.", svcName),
		Alternatives: []string{"the Pods were starting or restarting when the endpoints were listed"},
		Evidence:     []analyzer.Evidence{{Pos: a.Pos, Note: fmt.Sprintf("%d not ready", n)}},
		Fix: "Find why the Pods fail their readiness probe (kubectl describe pod: the probe's events), and fix the " +
			"probe or what it checks.",
	}
	readyAtAddress(s, ns, a, &f)
	svc := findService(s, ns, name)
	if svc != nil {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: serviceObjectPos(svc), Note: "the Service"})
	}
	if svc == nil || len(svc.Spec.Selector) == 0 {
		var grep []string
		for _, ip := range a.NotReady[:min(n, 4)] {
			grep = append(grep, "-e "+shq.Quote(" "+ip+" "))
		}
		f.Decide = fmt.Sprintf("# the Pods at the addresses not ready: their READY, then the probe's failures in "+
			"`%s describe pod POD`\n%s get pods -o wide | grep -F %s", kubectlIn(ns), kubectlIn(ns), strings.Join(grep, " "))
		return f
	}
	pods := "-l " + shq.Quote(labelSelector(svc.Spec.Selector))
	f.Decide = fmt.Sprintf("# the Pods' READY, and the probe's failures in their events\n%s get pods %s -o wide\n"+
		"%s describe pods %s", kubectlIn(ns), pods, kubectlIn(ns), pods)
	return f
}

// readyAtAddress weighs the Pods of s at a's addresses not ready: one the
// bundle shows Ready makes f's cause unknown (the endpoints listed
// before it became ready, or a Pod of another Service at that address).
func readyAtAddress(s *model.Snapshot, ns string, a facts.Addresses, f *analyzer.Finding) {
	for i := range s.Kube.Pods {
		pod := &s.Kube.Pods[i]
		if pod.Status.PodIP == "" || !slices.Contains(a.NotReady, pod.Status.PodIP) || pod.Namespace != ns && pod.Namespace != "" {
			continue
		}
		if ready, known := facts.PodReadiness(pod); ready && known {
			f.Certainty = analyzer.Unknown
			f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: Pod %s at %s is Ready", pod.Source.Pos, pod.Name,
				pod.Status.PodIP))
			f.Alternatives = append(f.Alternatives, "the endpoints were listed before the Pods became ready")
			return
		}
	}
}

// noEndpointsFinding judges and words what one controller said of one
// backend, with the Service's objects when the bundle holds them.
func noEndpointsFinding(s *model.Snapshot, g *noEndpoints) analyzer.Finding {
	comp := g.comp
	if comp == "" {
		comp = "the Ingress controller"
	}
	span := ""
	if t0, t1 := g.first.Time, g.last.Time; !t0.IsZero() && !t1.IsZero() && t1.After(t0) {
		span = fmt.Sprintf(" over %s", t1.Sub(t0).Round(time.Second))
	}
	often := times(g.count)
	f := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Unknown, Facts: map[string]any{"lines": g.count}}
	f.Evidence = []analyzer.Evidence{{Pos: g.first.Pos, Note: "no endpoint"}}
	if g.last != g.first {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.last.Pos, Note: "the last"})
	}
	said := strings.TrimSpace(firstLine(g.first.Message))
	if up := g.first.Fields["upstream"]; up != "" {
		said += ", upstream " + up // the placeholder's
	}
	f.Supports = []string{fmt.Sprintf("%s: %s", g.first.Pos, said)}
	nginx := "nginx in " + comp
	if comp == "nginx" {
		nginx = "nginx"
	}
	ns, name := g.ns, g.name
	if g.reason != "" {
		if m := kicNoServiceRe.FindStringSubmatch(g.reason); m != nil && m[1] != "" {
			ns = m[1]
		}
	}
	if name == "" {
		ns, name = hostService(s, g.host)
	}
	ns, ambiguous := serviceNamespace(s, ns, name)
	svc := findService(s, ns, name)
	svcName := objectName(ns, name)
	f.Subject = subject("node", g.node, "component", g.comp, "object", object("Service", ns, name))
	to503 := "get 503 Service Unavailable (502 Bad Gateway from controllers that send them to the placeholder " +
		placeholderUpstream + " instead)"
	switch {
	case name == "":
		f.Subject = subject("node", g.node, "component", g.comp, "host", g.host)
		f.Title = fmt.Sprintf("%s sends host %s to its placeholder for a backend without endpoints", comp, g.host)
		f.Summary = fmt.Sprintf("%s failed to connect to upstream %s %s%s for host %s: the placeholder an "+
			"Ingress controller names for a backend that has no endpoint, where nothing listens. Its requests get 502 "+
			"Bad Gateway.", nginx, placeholderUpstream, often, span, g.host)
	case g.reason != "":
		f.Title = fmt.Sprintf("%s cannot find the endpoints of Service %s", comp, svcName)
		f.Summary = fmt.Sprintf("%s could not find the endpoints of Service %s %s%s: %s. The backend gets the "+
			"placeholder upstream %s, and its requests 502 Bad Gateway.", comp, svcName, often, span, g.reason, placeholderUpstream)
	case g.host != "":
		f.Title = fmt.Sprintf("%s has no endpoint for host %s, Service %s", comp, g.host, svcName)
		f.Summary = fmt.Sprintf("%s failed to connect to upstream %s %s%s for host %s, whose Ingress "+
			"sends it to Service %s: the placeholder for a backend without endpoints, where nothing listens. "+
			"Its requests get 502 Bad Gateway.", nginx, placeholderUpstream, often, span, g.host, svcName)
	default:
		f.Title = fmt.Sprintf("%s has no active endpoint for Service %s", comp, svcName)
		f.Summary = fmt.Sprintf("%s said %s%s that Service %s does not have any active endpoint: the requests its "+
			"Ingress rules send there %s.", comp, often, span, svcName, to503)
	}
	f.Cause = "The Service has no ready endpoint when the controller builds its configuration."
	f.Fix = "Make the Service's selector match the labels of the Pods it should send to, make them pass their " +
		"readiness probe, and make the Ingress name a port the Service has (its port, not the targetPort)."
	pods := kubectlIn(ns) + " get pods"
	if ns == "" {
		pods = "kubectl get pods -A"
	}
	f.Decide = fmt.Sprintf("# its ready addresses (ENDPOINTS <none>: none), then the Pods its selector picks and their READY\n"+
		"%s\n%s -l %s -o wide --show-labels", endpointsCommand(ns, name), pods, shq.Quote(selectorOf(svc)))
	if name == "" {
		f.Decide = fmt.Sprintf("# the Services the Ingress of host %s sends to, then their ready addresses\n"+
			"kubectl get ingress -A -o yaml | grep -A20 %s\nkubectl get endpoints -A -o wide", g.host, shq.Quote("host: "+g.host))
	}
	switch {
	case ambiguous:
		f.Alternatives = slices.Clone(notReadyOrUnmatched)
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("the line names no namespace, and the bundle holds a "+
			"Service %s in more than one", name))
	case g.reason != "":
		kicReason(g.reason, ns, name, svc, &f)
	default:
		judgeServiceEndpoints(s, ns, name, svc, &f)
	}
	return f
}

// endpointsCommand lists the endpoints of Service ns/name, of every
// namespace when ns is not known.
func endpointsCommand(ns, name string) string {
	if name == "" {
		return "kubectl get endpoints -A -o wide"
	}
	if ns == "" {
		return "kubectl get endpoints -A -o wide | grep -w " + shq.Quote(name)
	}
	return fmt.Sprintf("%s get endpoints %s -o wide", kubectlIn(ns), shq.Quote(name))
}

// kicReason weighs what NGINX Inc's controller said it checked and found
// missing, reason, against Service ns/name, svc when the bundle holds
// it, into f.
func kicReason(reason, ns, name string, svc *model.Service, f *analyzer.Finding) {
	svcName := objectName(ns, name)
	f.Cause = "The Ingress names a Service, or a port of it, that the controller cannot find endpoints for: " + reason + "."
	f.Alternatives = []string{"the Ingress names a port the Service does not have (its servicePort must be the " +
		"Service's port or port name, not the targetPort or a NodePort)", "the Service does not exist in the " +
		"Ingress's namespace", "the Service has no ready endpoint"}
	ingresses := "kubectl get ingress -A -o yaml"
	if ns != "" {
		ingresses = kubectlIn(ns) + " get ingress -o yaml"
	}
	f.Decide = fmt.Sprintf("# the ports the Service has, beside the servicePort its Ingress names\n"+
		"%s get svc %s -o yaml\n%s", kubectlIn(ns), shq.Quote(name), ingresses)
	if svc != nil {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: serviceObjectPos(svc), Note: "the Service"})
	}
	if m := kicNoPortRe.FindStringSubmatch(reason); m != nil {
		port := intstr.FromString(m[3])
		if m[1] == "0" {
			n, _ := strconv.Atoi(m[2])
			port = intstr.FromInt32(int32(n))
		}
		if svc != nil && slices.ContainsFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool {
			return port.Type == intstr.Int && sp.Port == port.IntVal || port.Type == intstr.String && sp.Name == port.StrVal
		}) {
			f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: Service %s has port %s", serviceObjectPos(svc),
				svcName, port.String()))
			f.Alternatives = append(f.Alternatives, "the Service's port was added since the controller looked")
			return
		}
		f.Certainty = analyzer.Likely
		f.Cause = fmt.Sprintf("The Ingress names port %s of Service %s, which does not have it: its servicePort must "+
			"be the Service's port or port name, not the targetPort or a NodePort.", port.String(), svcName)
		f.Alternatives = f.Alternatives[1:]
		f.Fix = "Make the Ingress's servicePort the Service's port (or its name), as `kubectl get svc` lists it."
		return
	}
	if kicNoServiceRe.MatchString(reason) {
		if svc != nil {
			f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: the bundle holds Service %s", serviceObjectPos(svc), svcName))
			f.Alternatives = append(f.Alternatives, "the Service was created since the controller looked")
			return
		}
		f.Certainty = analyzer.Likely
		f.Decide = fmt.Sprintf("# the namespace's Services (%s not among them decides), beside the serviceName its "+
			"Ingress names\n%s get svc\n%s", name, kubectlIn(ns), ingresses)
		f.Cause = fmt.Sprintf("The Ingress names Service %s, which does not exist in its namespace (%s).", svcName, reason)
		f.Alternatives = []string{"the Service was being created or replaced when the controller looked"}
		f.Fix = "Create the Service in the Ingress's namespace, or make the Ingress's serviceName one that exists there."
	}
}

// notReadyOrUnmatched lists the causes a controller's line leaves open.
var notReadyOrUnmatched = []string{
	"the Service's selector matches no Pod (a label typed differently, a chart whose selector and Pod template disagree)",
	"the Pods it selects are not ready (a readiness probe failing, Pods starting or crashing)",
	"the Ingress names a port the Service does not have, which has no endpoints even when the Service has",
}

// judgeServiceEndpoints weighs the objects in s of Service ns/name, svc
// when the bundle holds it, into f's cause.
func judgeServiceEndpoints(s *model.Snapshot, ns, name string, svc *model.Service, f *analyzer.Finding) {
	f.Alternatives = slices.Clone(notReadyOrUnmatched)
	svcName := objectName(ns, name)
	var pods facts.SelectedPods
	if svc != nil {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: serviceObjectPos(svc), Note: "the Service"})
		switch {
		case svc.Spec.Type == corev1.ServiceTypeExternalName:
			f.Alternatives = []string{fmt.Sprintf("the Service is of type ExternalName: the controller sends to the "+
				"name it gives, %s, which has no endpoints to list; that name not resolving from the controller's Pod",
				svc.Spec.ExternalName)}
			f.Decide = fmt.Sprintf("# the name the Service gives, then its answer from the controller's Pod\n"+
				"%s get svc %s -o jsonpath='{.spec.externalName}'\nkubectl exec -n INGRESS-NAMESPACE CONTROLLER-POD -- "+
				"nslookup %s", kubectlIn(ns), shq.Quote(name), shq.Quote(svc.Spec.ExternalName))
			f.Cause = fmt.Sprintf("Service %s is of type ExternalName: it has no endpoints, and the controller's "+
				"backend is the name it gives.", svcName)
			f.Fix = "Make the name the Service gives resolve from the controller's Pod, or send the Ingress to a " +
				"Service with a selector."
			return
		case len(svc.Spec.Selector) == 0:
			f.Alternatives = append([]string{"the Service has no selector: its Endpoints are written by hand or by " +
				"another controller, and hold no ready address (or a port name the Service's port does not have)"},
				f.Alternatives[1:]...)
		default:
			pods = facts.PodsSelected(s, ns, svc.Spec.Selector)
		}
	}
	a := facts.ServiceAddresses(s, ns, name)
	switch {
	case a.Found && a.Ready > 0:
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: a.Pos, Note: fmt.Sprintf("%d ready", a.Ready)})
		f.Cause = "The controller found no endpoint for the Service while its endpoints list ready ones: it looks " +
			"for them under another port, or did not see them."
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: the Service's endpoints list %d ready %s", a.Pos,
			a.Ready, plural(a.Ready, "address", "addresses")))
		f.Alternatives = []string{"the Ingress names a port the Service does not have (its servicePort must be the " +
			"Service's port or port name), which has no endpoints even when the Service has",
			"the endpoints were not ready when the controller logged and are now (a rollout, a restart)",
			"the controller does not see them (it cannot list EndpointSlices, or watches other namespaces)"}
		for _, pt := range servicePorts(svc) {
			if pt.TargetPort.Type == intstr.String {
				// ingress-nginx and NGINX Inc's controller of 2016-2017
				// did not resolve a named targetPort (ingress-nginx#121).
				f.Alternatives = slices.Insert(f.Alternatives, 1, fmt.Sprintf("the controller does not resolve "+
					"the Service's named targetPort %q to the endpoints' port (ingress controllers of 2016 and 2017 "+
					"did not): a number in its place decides", pt.TargetPort.StrVal))
				break
			}
		}
		f.Decide = fmt.Sprintf("# the Service's ports beside the port its Ingress names\n%s get svc %s -o yaml\n"+
			"%s get ingress -o yaml", kubectlIn(ns), shq.Quote(name), kubectlIn(ns))
	case a.Found && len(a.NotReady) > 0:
		n := len(a.NotReady)
		f.Certainty = analyzer.Likely
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: a.Pos, Note: fmt.Sprintf("%d not ready", n)})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the Service's endpoints list %d %s, none ready", a.Pos, n,
			plural(n, "address", "addresses")))
		f.Cause = fmt.Sprintf("The Pods of Service %s are not ready: its endpoints hold %d %s, none ready, and the "+
			"controller sends to ready ones only.", svcName, n, plural(n, "address", "addresses"))
		f.Alternatives = []string{"the Pods were starting or restarting when the controller logged"}
		f.Fix = "Find why the Pods fail their readiness probe (kubectl describe pod: the probe's events), and fix the " +
			"probe or what it checks."
		f.Decide = fmt.Sprintf("# the Pods' READY and the probe's failures in their events\n%s describe pods -l %s",
			kubectlIn(ns), shq.Quote(selectorOf(svc)))
		readyAtAddress(s, ns, a, f)
	case pods.Listed > 0 && pods.Listing && pods.Matching == 0:
		f.Certainty = analyzer.Likely
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: pods.First, Note: "the namespace's Pods"})
		none := fmt.Sprintf("none of the %d Pods the bundle lists in namespace %s carries", pods.Listed, ns)
		if pods.Listed == 1 {
			none = fmt.Sprintf("the one Pod the bundle lists in namespace %s does not carry", ns)
		}
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s the labels of the Service's selector, %s", pods.First, none,
			labelSelector(svc.Spec.Selector)))
		f.Cause = fmt.Sprintf("Service %s's selector, %s, matches no Pod: no endpoint is made for it.", svcName,
			labelSelector(svc.Spec.Selector))
		f.Alternatives = []string{"the matching Pods are in a part of the namespace the bundle does not list"}
		f.Fix = "Make the Service's selector the labels of its Pods' template (or the template's labels the selector)."
	case pods.Matching > 0 && pods.Ready == 0 && pods.Unknown == 0:
		f.Certainty = analyzer.Likely
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: pods.FirstMatching, Note: "not ready"})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the %s that %s the selector's labels (%s) %s not ready",
			pods.FirstMatching, plural(pods.Matching, "Pod", fmt.Sprintf("%d Pods", pods.Matching)),
			plural(pods.Matching, "carries", "carry"), labelSelector(svc.Spec.Selector), plural(pods.Matching, "is", "are")))
		f.Cause = fmt.Sprintf("The Pods of Service %s are not ready: %s its selector matches %s its readiness, and "+
			"the controller sends to ready ones only.", svcName, plural(pods.Matching, "the one", fmt.Sprintf("the %d", pods.Matching)),
			plural(pods.Matching, "fails", "all fail"))
		f.Alternatives = []string{"the Pods were starting or restarting when the controller logged"}
		f.Decide = fmt.Sprintf("# the Pods' READY and the probe's failures in their events\n%s describe pods -l %s",
			kubectlIn(ns), shq.Quote(selectorOf(svc)))
	}
}

// hostService returns the Service the Ingresses of s send host to, when
// every path of the host's rules goes to the same one.
func hostService(s *model.Snapshot, host string) (ns, name string) {
	if host == "" {
		return "", ""
	}
	for i := range s.Kube.Ingresses {
		ing := &s.Kube.Ingresses[i]
		for _, r := range ing.Spec.Rules {
			if r.Host != host || r.HTTP == nil {
				continue
			}
			for _, path := range r.HTTP.Paths {
				b := path.Backend.Service
				if b == nil {
					continue
				}
				if name != "" && (name != b.Name || ns != ing.Namespace) {
					return "", "" // several backends: the line does not say which
				}
				ns, name = ing.Namespace, b.Name
			}
		}
	}
	return ns, name
}

// serviceNamespace returns ns, or, when it is empty, the one namespace
// whose Service, Endpoints or EndpointSlices of s are called name;
// ambiguous when there are several.
func serviceNamespace(s *model.Snapshot, ns, name string) (string, bool) {
	if ns != "" || name == "" {
		return ns, false
	}
	var found []string
	add := func(objNS, objName string) {
		if objName == name && objNS != "" && !slices.Contains(found, objNS) {
			found = append(found, objNS)
		}
	}
	for i := range s.Kube.Services {
		add(s.Kube.Services[i].Namespace, s.Kube.Services[i].Name)
	}
	for i := range s.Kube.Endpoints {
		add(s.Kube.Endpoints[i].Namespace, s.Kube.Endpoints[i].Name)
	}
	for i := range s.Kube.EndpointSlices {
		add(s.Kube.EndpointSlices[i].Namespace, s.Kube.EndpointSlices[i].Labels["kubernetes.io/service-name"])
	}
	if len(found) == 1 {
		return found[0], false
	}
	return "", len(found) > 1
}

// findService returns the Service ns/name of s, nil when there is none.
func findService(s *model.Snapshot, ns, name string) *model.Service {
	for i := range s.Kube.Services {
		if svc := &s.Kube.Services[i]; svc.Name == name && name != "" && facts.InNamespace(svc.Namespace, ns) {
			return svc
		}
	}
	return nil
}

// labelSelector writes a selector as kubectl's -l takes it.
func labelSelector(sel map[string]string) string { return labels.Set(sel).String() }

// serviceObjectPos is the position of svc's selector, naming the Service.
func serviceObjectPos(svc *model.Service) model.Pos {
	pos := svc.Source.FieldPos("spec.selector")
	if pos.Object == "" {
		pos.Object = model.ObjectName("Service", svc.Namespace, svc.Name)
	}
	return pos
}

// servicePorts returns svc's ports, none when svc is nil.
func servicePorts(svc *model.Service) []corev1.ServicePort {
	if svc == nil {
		return nil
	}
	return svc.Spec.Ports
}

// selectorOf is svc's selector as kubectl's -l takes it, SELECTOR when
// the bundle does not give it.
func selectorOf(svc *model.Service) string {
	if svc == nil || len(svc.Spec.Selector) == 0 {
		return "SELECTOR"
	}
	return labelSelector(svc.Spec.Selector)
}
