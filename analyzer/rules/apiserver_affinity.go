package rules

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// APIServerAffinity explains ComponentStatus "Unhealthy" reports that come
// from an apiserver checking components that run on another node.
var APIServerAffinity = &analyzer.Rule{
	Name:        "apiserver-affinity",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindKube},
	Uses:        []model.Kind{model.KindSockets, model.KindCapture, model.KindNetfilter},
	Requires:    []analyzer.FactKey{facts.ShadowedServices},
	SubjectKeys: []string{"component", "check"},
	Run:         runAPIServerAffinity,
	Symptoms:    []analyzer.SymptomRef{ControlPlaneUnhealthy.At(10)},
	Proof: "ComponentStatus refused on 127.0.0.1 (kube) and the listening sockets of the nodes showing the refused ports " +
		"open on another node only (ss -lntp, netstat -lntup)",
	Unproven: "with the leader records alone it is likely (the components may also be down where the apiserver " +
		"answered); with neither leaders nor sockets, the symptom with its cause unknown: the components may be down. " +
		"A warning, with ss -lntp on the control-plane nodes or the Leases to decide",
	Doc: `componentstatus Unhealthy from a non-leader apiserver

kubectl get componentstatuses asks whichever apiserver answers the request,
and that apiserver checks the controller-manager and the scheduler at
127.0.0.1 (ports 10252 and 10251, or 10257 and 10259 on newer versions) on
its own node. With several control-plane nodes, those components may run, or
listen, on one node only (the leader's), so every other apiserver reports them
Unhealthy with "connection refused" while they work. ComponentStatus is
deprecated since Kubernetes 1.19 for this reason.

Evidence: the ComponentStatuses and their messages, the leader election
records (the control-plane.alpha.kubernetes.io/leader annotation or the
Leases), listening sockets per node (netstat -lntup, ss -lntp), a capture
of connections to the apiserver when present, and a rule outside kube-proxy's
chains that pins the node's connections to the kubernetes Service to one
apiserver (the rule itself is service-rule-shadowed's finding). The
kubernetes Service's ClientIP session affinity (kube-proxy's "-m recent
--rcheck --seconds 10800" rules, or the Service's sessionAffinity) keeps
each client on the apiserver it first reached: with a capture whose
connections all go to one apiserver, the finding names the apiserver,
and its node, that the client is pinned to.

ComponentStatus probes the insecure ports 10251 and 10252 over plain HTTP
on older apiservers. Components started with --port=0 (kubeadm's default
since v1.17.9, v1.18.6 and v1.19) serve only their secure ports, and the
probe is refused on a healthy node too: with nothing in the bundle to say
where the components run, that false alarm is a candidate beside the
components running elsewhere and the components being down when the
refused ports are 10251 and 10252, and the listening sockets of the
control-plane node (ss -lntup) decide.

Severity: info when the false alarm is proven (the cluster is healthy; the
check is what misleads), warning otherwise: the components may be down.

Fix: check the components where they run (their /healthz on the leader's node,
or kubectl get --raw='/readyz?verbose' and the Leases in kube-system); stop
alerting on ComponentStatus. If the components must answer on every node, run
them on every control-plane node.`,
}

var (
	csRefusedRe  = lazyre.New(`127\.0\.0\.1:(\d+)\S*:? connect: connection refused|dial tcp 127\.0\.0\.1:(\d+)`)
	holderRe     = lazyre.New(`"holderIdentity"\s*:\s*"([^"]+)"`)
	leaderAnnKey = "control-plane.alpha.kubernetes.io/leader"
)

// csUnhealthy is one component ComponentStatus reports Unhealthy, refused
// on 127.0.0.1.
type csUnhealthy struct {
	name string
	port int
	msg  string
	pos  model.Pos
}

// csCheck is what ComponentStatus's check of the components and the bundle
// show, and its judgement (judgeComponentStatus): where the components
// run, which apiserver answers. csWords words it.
type csCheck struct {
	bad       []csUnhealthy
	leaders   map[string]string // the node of each component's leader
	leaderEv  []analyzer.Evidence
	listening map[int][]string // the nodes that listen on each refused port
	listenEv  []analyzer.Evidence
	seenNodes []string // the nodes whose sockets are in the bundle

	names, leaderNodes, listenNodes []string
	pinned                          *facts.Shadow // a rule that pins the node's connections to one apiserver
	affinity                        *kubeAffinity // the kubernetes Service's ClientIP session affinity
	shown                           bool          // where the components run explains the refusal
	insecure                        bool          // every refused check is of an insecure port (10251, 10252)
}

func runAPIServerAffinity(p *analyzer.Pass) error {
	s := p.Snap
	var bad []csUnhealthy
	for _, cs := range s.Kube.ComponentStatuses {
		for _, c := range cs.Conditions {
			if c.Type != "Healthy" || c.Status == "True" {
				continue
			}
			m := csRefusedRe.FindStringSubmatch(c.Message + " " + c.Error)
			if m == nil {
				continue
			}
			port, _ := strconv.Atoi(m[1] + m[2])
			bad = append(bad, csUnhealthy{name: cs.Name, port: port, msg: strings.TrimSpace(c.Message + " " + c.Error), pos: cs.Source.Pos})
		}
	}
	if len(bad) == 0 {
		return nil
	}
	// Leaders, by component.
	leaders := map[string]string{}
	var leaderEv []analyzer.Evidence
	addLeader := func(name, holder string, pos model.Pos) {
		node, _, _ := strings.Cut(holder, "_")
		if node == "" {
			return
		}
		key := strings.TrimPrefix(name, "kube-")
		leaders[key] = node
		leaderEv = append(leaderEv, analyzer.Evidence{Pos: pos, Note: fmt.Sprintf("%s leader: %s", name, holder)})
	}
	for _, ep := range s.Kube.Endpoints {
		if m := holderRe.FindStringSubmatch(ep.Annotations[leaderAnnKey]); m != nil && ep.Namespace == "kube-system" {
			addLeader(ep.Name, m[1], ep.Source.Pos)
		}
	}
	for _, l := range s.Kube.Leases {
		if l.Namespace == "kube-system" && l.Spec.HolderIdentity != nil {
			addLeader(l.Name, *l.Spec.HolderIdentity, l.Source.Pos)
		}
	}
	// Who listens on the refused ports, among the nodes whose sockets are
	// in the bundle.
	listening := map[int][]string{}
	var listenEv []analyzer.Evidence
	var seenNodes []string
	for _, so := range s.Sockets {
		if so.Node != "" && !slices.Contains(seenNodes, so.Node) {
			seenNodes = append(seenNodes, so.Node)
		}
		if so.State != "LISTEN" {
			continue
		}
		for _, b := range bad {
			if int(so.Local.Port()) == b.port && !slices.Contains(listening[b.port], so.Node) {
				listening[b.port] = append(listening[b.port], so.Node)
				listenEv = append(listenEv, analyzer.Evidence{Pos: so.Pos, Note: fmt.Sprintf("%s listens on %d on %s", so.Process, b.port, nodeName(so.Node))})
			}
		}
	}
	c := &csCheck{bad: bad, leaders: leaders, leaderEv: leaderEv, listening: listening, listenEv: listenEv, seenNodes: seenNodes}
	f := judgeComponentStatus(p, c)
	f.Title, f.Summary, f.Cause, f.Fix = csWords(c)
	p.Report(f)
	return nil
}

// judgeComponentStatus judges c: where the components' leaders run and who
// listens on the refused ports, the apiserver a capture or a rule shows
// answering, and how firmly that explains the refusal. It fills in c and
// returns the finding without its words.
func judgeComponentStatus(p *analyzer.Pass, c *csCheck) analyzer.Finding {
	var details []string
	ev := []analyzer.Evidence{}
	for _, b := range c.bad {
		c.names = append(c.names, b.name)
		d := fmt.Sprintf("%s: %s", b.name, b.msg)
		if l := c.leaders[b.name]; l != "" {
			d += fmt.Sprintf("; leader on %s", l)
		}
		if ns := c.listening[b.port]; len(ns) > 0 {
			d += fmt.Sprintf("; port %d listens on %s only", b.port, strings.Join(ns, ", "))
		}
		details = append(details, d)
		ev = append(ev, analyzer.Evidence{Pos: b.pos, Note: b.msg})
	}
	ev = append(ev, c.leaderEv...)
	ev = append(ev, c.listenEv...)
	values := map[string]any{"unhealthy": details}
	c.leaderNodes = slices.Compact(slices.Sorted(maps.Values(c.leaders)))
	if len(c.leaderNodes) > 0 {
		values["leader_nodes"] = c.leaderNodes
	}
	for _, ns := range c.listening {
		c.listenNodes = append(c.listenNodes, ns...)
	}
	slices.Sort(c.listenNodes)
	c.listenNodes = slices.Compact(c.listenNodes)
	if len(c.listenNodes) > 0 {
		values["listening_on"] = c.listenNodes
		var without []string
		for _, n := range c.seenNodes {
			if !slices.Contains(c.listenNodes, n) {
				without = append(without, n)
			}
		}
		slices.Sort(without)
		if len(without) > 0 {
			values["not_listening_on"] = without
		}
	}
	// The apiserver that answers, from a capture of new connections to it.
	srv, n, first := busiestServer(p.Snap, 6443)
	if n > 0 {
		values["apiserver_connections"] = fmt.Sprintf("%d new connections to port 6443, all to %s", n, srv)
		ev = append(ev, analyzer.Evidence{Pos: first, Note: fmt.Sprintf("%d new connections to port 6443, all to %s", n, srv)})
	}
	if aff, ok := kubernetesAffinity(p.Snap); ok {
		c.affinity = &aff
		values["session_affinity"] = fmt.Sprintf("ClientIP, %ds", aff.seconds)
		if pos, ok := aff.checks[srv]; ok && n > 0 {
			aff.pos = pos // the check that sends the client back to that apiserver
		}
		ev = append(ev, analyzer.Evidence{Pos: aff.pos, Note: aff.note})
		if n > 0 {
			aff.pinnedTo = srv
			if node := apiserverNode(p.Snap, srv); node != "" {
				aff.pinnedTo += " (" + node + ")"
			}
			values["apiserver_pinned_to"] = aff.pinnedTo
		}
	}
	// A rule outside kube-proxy's chains that pins the node's connections
	// to the kubernetes Service decides which apiserver answers; the rule
	// itself is service-rule-shadowed's finding.
	for _, sh := range facts.ShadowedServices.Of(p) {
		if sh.Port.Namespace() == "default" && sh.Port.ServiceName() == "kubernetes" && sh.Target.IsValid() {
			c.pinned = &sh
			values["apiserver_pinned_to"] = sh.Target.String()
			ev = append(ev, analyzer.Evidence{Pos: sh.Rule.Pos, Note: fmt.Sprintf("%s: %s", sh.Hook, sh.Action)})
			break
		}
	}
	f := analyzer.Finding{
		// One problem whichever components the bundle shows failing: the
		// check that kubectl get componentstatuses makes.
		Subject:  subject("component", "kube-apiserver", "check", "componentstatuses"),
		Severity: analyzer.Warning, Certainty: analyzer.Proven, Facts: values, Evidence: ev,
	}
	for _, b := range c.bad {
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s refused on 127.0.0.1:%d", b.pos, b.name, b.port))
	}
	for _, e := range append(slices.Clip(c.leaderEv), c.listenEv...) {
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s", e.Pos, e.Note))
	}
	if sh := c.pinned; sh != nil {
		f.Supports = append(f.Supports, fmt.Sprintf("%s (%s): %s of the node's connections to the kubernetes Service",
			sh.Rule.Pos, sh.Hook, sh.Action))
	}
	if a := c.affinity; a != nil {
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s", a.pos, a.note))
	}
	_, listensOnAll := values["not_listening_on"]
	listensOnAll = len(c.listenNodes) > 0 && !listensOnAll
	switch {
	case listensOnAll:
		f.Certainty = analyzer.Unknown
		f.Contradicts = append(f.Contradicts, "every node whose sockets are in the bundle listens on the refused ports: where "+
			"the components run does not explain the refusal")
	case len(c.listenNodes) > 0:
	case len(c.leaderNodes) > 0:
		f.Certainty = analyzer.Likely
		f.Contradicts = append(f.Contradicts, "no listening sockets of the control-plane nodes in the bundle: that the "+
			"components listen on the leader's node only is not shown")
		f.Alternatives = []string{"the components are down on the node of the apiserver that answered, or everywhere"}
		f.Decide = collected("ss-lntup", "on each control-plane node: who listens on the refused ports")
	default:
		f.Certainty = analyzer.Unknown
	}
	if f.Certainty == analyzer.Proven {
		// A false alarm shown as such: nothing is broken.
		f.Severity = analyzer.Info
	}
	if c.shown = f.Certainty != analyzer.Unknown; !c.shown {
		f.Contradicts = append(f.Contradicts, "neither the components' leader records nor where they listen explain the refusal")
		f.Alternatives = []string{"the components run on another control-plane node than the apiserver that answered, " +
			"or in another network namespace (a false alarm of ComponentStatus)", "the controller-manager or the scheduler is down"}
		f.Decide = "kubectl -n kube-system get lease kube-controller-manager kube-scheduler"
		if c.insecure = insecurePorts(c.bad); c.insecure {
			// The probe of the insecure ports fails the same way when the
			// components serve their secure ports only, as on kubeadm's
			// clusters since July 2020: the ports they listen on on the
			// apiserver's node tell the three apart.
			f.Alternatives = slices.Insert(f.Alternatives, 1, "the components run on the apiserver's node but serve "+
				"only their secure ports (10259, 10257): --port=0, which kubeadm sets since v1.17.9, v1.18.6 and v1.19, "+
				"turns off the insecure ports ComponentStatus probes (a false alarm)")
			f.Decide = collected("ss-lntup", "on the control-plane node: whether kube-scheduler and "+
				"kube-controller-manager run there, and on which ports they listen")
		}
	}
	return f
}

// Insecure ports of the scheduler and the controller-manager: plain HTTP,
// which --port=0 turns off.
const (
	schedulerInsecurePort = 10251
	cmInsecurePort        = 10252
)

// insecurePorts reports whether every refused check is of a component's
// insecure port: the apiserver probed http://127.0.0.1:10251 and 10252.
func insecurePorts(bad []csUnhealthy) bool {
	for _, b := range bad {
		if !(b.name == "scheduler" && b.port == schedulerInsecurePort || b.name == "controller-manager" && b.port == cmInsecurePort) {
			return false
		}
	}
	return len(bad) > 0
}

// csWords words the finding of c, as judgeComponentStatus judged it.
func csWords(c *csCheck) (title, summary, cause, fix string) {
	summary = fmt.Sprintf("ComponentStatus reports %s Unhealthy with connection refused on 127.0.0.1. The apiserver "+
		"that answered checks those ports on its own node.", strings.Join(c.names, " and "))
	if c.shown {
		title = fmt.Sprintf("%s Unhealthy is a false alarm: checked on a node where they do not run", strings.Join(c.names, ", "))
		if a := c.affinity; a != nil && a.pinnedTo != "" && c.pinned == nil {
			title = fmt.Sprintf("%s Unhealthy is a false alarm: ClientIP affinity pins the check to %s, where they do "+
				"not run", strings.Join(c.names, ", "), a.pinnedTo)
		}
		cause = "kubectl get componentstatuses is answered by one apiserver, which probes 127.0.0.1 on its own node; the " +
			"controller-manager and scheduler listen on the leader's node only."
		summary += fmt.Sprintf(" The components run (as leaders: %s; listening: %s) on another node, so the check fails "+
			"although they work: a false alarm.", orNone(c.leaderNodes), orNone(c.listenNodes))
	} else {
		title = fmt.Sprintf("%s Unhealthy: connection refused on 127.0.0.1, cause not shown", strings.Join(c.names, ", "))
		cause = "Not shown: the bundle does not say where the components run, so a false alarm of ComponentStatus and " +
			"components that are down cannot be told apart."
		if c.insecure {
			cause = "Not shown: ComponentStatus probed the components' insecure ports (http 10251, 10252) on the " +
				"apiserver's own node, and the bundle does not say where the components run nor on which ports they " +
				"listen: components serving their secure ports only (--port=0), running elsewhere, or down look the same."
		}
	}
	if sh := c.pinned; sh != nil {
		summary += fmt.Sprintf(" The node's connections to the kubernetes Service all go to %s, pinned by %s outside "+
			"kube-proxy's chains (service-rule-shadowed): that apiserver is the one that answers.", sh.Target, sh.Rule.Pos)
	}
	if a := c.affinity; a != nil && c.pinned == nil {
		summary += fmt.Sprintf(" The kubernetes Service has ClientIP session affinity (%ds): each client keeps "+
			"reaching the apiserver it first reached", a.seconds)
		if a.pinnedTo != "" {
			summary += fmt.Sprintf("; the captured connections all go to %s, so kubectl get cs keeps asking that "+
				"apiserver, which does not run the leaders, and keeps failing", a.pinnedTo)
		}
		summary += "."
	}
	summary += " ComponentStatus is deprecated since Kubernetes 1.19."
	fix = "Check the components where they run: `curl -k https://127.0.0.1:10257/healthz` (controller-manager) and " +
		"`:10259` (scheduler) on the leader's node, or `kubectl -n kube-system get lease`; stop alerting on " +
		"ComponentStatus."
	return title, summary, cause, fix
}

// busiestServer returns the server address that received all the
// captured attempts to port, their number, and the capture that shows the
// first (the file: what the finding rests on is all of them, not one
// frame), when there is only one.
func busiestServer(s *model.Snapshot, port uint16) (string, int, model.Pos) {
	servers := map[string]bool{}
	seen := map[string]bool{}
	n := 0
	var first model.Pos
	for _, a := range s.Attempts {
		if a.Server.Port() != port {
			continue
		}
		k := a.Client.String() + ">" + a.Server.String()
		if seen[k] { // the same connection seen on two nodes
			continue
		}
		seen[k] = true
		servers[a.Server.Addr().String()] = true
		if n == 0 {
			first = model.Pos{File: a.Pos.File}
		}
		n++
	}
	for _, st := range s.EndpointStats { // attempts counted, not kept, in summary mode
		if st.Server.Port() == port && st.Attempts > 0 {
			servers[st.Server.Addr().String()] = true
			if first.IsZero() {
				first = model.Pos{File: st.File}
			}
			n += st.Attempts
		}
	}
	if len(servers) != 1 {
		return "", 0, model.Pos{}
	}
	for srv := range servers {
		return srv, n, first
	}
	return "", 0, model.Pos{}
}

// kubeAffinity is the kubernetes Service's ClientIP session affinity.
type kubeAffinity struct {
	seconds  int
	pos      model.Pos
	note     string
	pinnedTo string // the apiserver the captured connections all go to, and its node
	// checks are kube-proxy's affinity checks by the endpoint's address.
	checks map[string]model.Pos
}

// kubernetesAffinity finds the kubernetes Service's ClientIP session
// affinity: kube-proxy's -m recent check in the Service chain of
// default/kubernetes, or the Service's sessionAffinity.
func kubernetesAffinity(s *model.Snapshot) (kubeAffinity, bool) {
	var a kubeAffinity
	for _, rs := range s.Netfilter {
		for _, t := range rs.Tables {
			for _, c := range t.Chains {
				for _, r := range c.Rules {
					if r.Recent == nil || r.Recent.Set || !strings.HasPrefix(r.Comment, "default/kubernetes:") {
						continue
					}
					if a.checks == nil {
						a = kubeAffinity{seconds: r.Recent.Seconds, pos: r.Pos, checks: map[string]model.Pos{},
							note: fmt.Sprintf("session affinity: a client on the list of its endpoint for %ds goes back "+
								"to it", r.Recent.Seconds)}
					}
					// kube-proxy's comment names the endpoint: "... -> 10.0.0.1:6443".
					if _, ep, ok := strings.Cut(r.Comment, "-> "); ok {
						if host, _, ok := strings.Cut(ep, ":"); ok {
							a.checks[host] = r.Pos
						}
					}
				}
			}
		}
	}
	if a.checks != nil {
		return a, true
	}
	for _, svc := range s.Kube.Services {
		if svc.Namespace != "default" || svc.Name != "kubernetes" || svc.Spec.SessionAffinity != "ClientIP" {
			continue
		}
		secs := 10800
		if cfg := svc.Spec.SessionAffinityConfig; cfg != nil && cfg.ClientIP != nil && cfg.ClientIP.TimeoutSeconds != nil {
			secs = int(*cfg.ClientIP.TimeoutSeconds)
		}
		return kubeAffinity{seconds: secs, pos: svc.Source.FieldPos("spec.sessionAffinity"),
			note: fmt.Sprintf("sessionAffinity ClientIP, %ds", secs)}, true
	}
	return kubeAffinity{}, false
}

// apiserverNode names the node whose apiserver listens on addr: a listening
// socket on addr:6443 of a node, or a Node with that address.
func apiserverNode(s *model.Snapshot, addr string) string {
	for _, so := range s.Sockets {
		if so.State == "LISTEN" && so.Node != "" && so.Local.Port() == 6443 && so.Local.Addr().String() == addr {
			return so.Node
		}
	}
	for _, n := range s.Kube.Nodes {
		for _, a := range n.Status.Addresses {
			if a.Address == addr {
				return n.Name
			}
		}
	}
	return ""
}
