package rules

import (
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/model"
)

// APIServerUnreachable finds components whose calls to the apiserver fail
// at the network level, and says which hop of the path is broken.
var APIServerUnreachable = &analyzer.Rule{
	Name:        "apiserver-unreachable",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindKube, model.KindNetfilter, model.KindIPVS},
	Requires:    []analyzer.FactKey{facts.KubeProxyLogs, facts.ServiceEndpoints, facts.Dataplanes},
	SubjectKeys: []string{"component", "node", "address"},
	Run:         runAPIServerUnreachable,
	Explains:    []*analyzer.Rule{KubeProxySyncErrors},
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(30), DNSTimeouts.At(70), ControlPlaneUnhealthy.At(20)},
	Proof: "the component's failing calls (logs) and the kubernetes Service's Endpoints or the node's NAT rules or IPVS " +
		"table showing the broken hop: no endpoints, no rule for the ClusterIP, targets that are no endpoint",
	Unproven: "from the logs alone the failure is shown but not the hop that breaks it (kube-proxy's rules, the CNI or " +
		"a firewall, the endpoint, a load balancer): the symptom with its cause unknown, the hops not ruled out, and the " +
		"nc -zv from the same Pod or host that decides; connection refused on the apiserver's own address is likely " +
		"the apiserver down",
	Doc: `a component cannot reach the apiserver

A Pod's or a node component's log shows its calls to the apiserver failing
before any HTTP answer: client-go's "Failed to watch *v1.Service: failed
to list ... dial tcp 10.96.0.1:443: i/o timeout", traefik's "could not
retrieve server version", the kubelet's "connect: connection refused" on
the apiserver's own address, also "no route to host", "connection reset by
peer" and "TLS handshake timeout". Pods reach the apiserver through the
kubernetes Service's ClusterIP (10.96.0.1, 10.43.0.1 ...: the first address
of the Service range): the node's kube-proxy rules DNAT it to an apiserver
endpoint. A timeout there means that path is broken (kube-proxy not running
or stale on that node, the CNI or a firewall dropping pod-to-host-network
traffic, a wrong endpoint); connection refused on the apiserver's own
address means the apiserver is down or restarting. kube-proxy's own
failures are kube-proxy-sync-errors'; kube-apiserver's own calls out (to
aggregated APIs, webhooks) are not counted.

Evidence: the failing log lines per component and address (their count,
first and last time, the resources listed); the kubernetes Service and its
Endpoints (the real apiserver addresses) and the node's NAT rules or IPVS
table for the ClusterIP when present, and kube-proxy's own list errors.

Severity: error when the Endpoints or the node's NAT rules prove the DNAT
broken (no endpoints, no rule for the ClusterIP, targets that are no
endpoint); warning from the logs alone.

Fix: kubectl get endpoints kubernetes; on the node, iptables -t nat -L
KUBE-SVC-NPX46M4PTMTKRN6Y -n (nftables mode: nft list table ip kube-proxy
and its default/kubernetes/tcp/https chains; IPVS: ipvsadm -Ln -t
CLUSTERIP:443); from a Pod on that node,
nc -zv 10.96.0.1 443 and nc -zv APISERVER 6443; check the kube-proxy and
CNI Pods on that node (kubectl -n kube-system get pods -o wide); for
connection refused on the apiserver's address, its container and log on
the control-plane node (crictl ps -a | grep kube-apiserver).`,
}

// What the address a client dialed is.
const (
	targetClusterIP = "kubernetes Service ClusterIP"
	targetEndpoint  = "apiserver endpoint"
	targetAPIServer = "apiserver address"
)

// kubernetesService finds the default/kubernetes Service and Endpoints.
func kubernetesService(p *analyzer.Pass) (svc *model.Service, eps facts.EndpointSet, epPos model.Pos, epFound bool) {
	s := p.Snap
	for i := range s.Kube.Services {
		if sv := &s.Kube.Services[i]; sv.Namespace == "default" && sv.Name == "kubernetes" {
			svc = sv
		}
	}
	eps, epPos, epFound = facts.ServiceEndpoints.Of(p).Of("default", "kubernetes", "https")
	return svc, eps, epPos, epFound
}

// firstOfServiceRange reports whether a is the kind of address Kubernetes
// gives the kubernetes Service: the first address of a private range
// (10.96.0.1, 10.43.0.1, 10.233.0.1, 172.20.0.1; fd00:10:96::1).
func firstOfServiceRange(a netip.Addr) bool {
	if a.Is4() {
		b := a.As4()
		private := b[0] == 10 || b[0] == 172 && b[1]&0xf0 == 16
		return private && b[2] == 0 && b[3] == 1
	}
	b := a.As16()
	return b[0]&0xfe == 0xfc && b[15] == 1 && slices.Equal(b[10:15], []byte{0, 0, 0, 0, 0})
}

// apiCalls are the failed calls of one component, on one node, to one address
// of the apiserver, and their judgement (judgeAPICalls): what the address is,
// what the bundle shows of the path, the hop it proves broken. apiWords words it.
type apiCalls struct {
	component, node, addr string
	failures              []string
	kinds                 []string // the resources listed
	lines                 []apiFailure

	ap             netip.AddrPort    // addr, when it parses
	target, how    string            // what addr is (targetClusterIP ...), and that in words
	span           span              // of the lines
	epFound        bool              // the kubernetes Service's Endpoints are in the bundle
	eps            facts.EndpointSet // and hold these
	dataplane      string            // what the node's rules do with the ClusterIP, "" when not shown
	kubeProxyStale bool              // kube-proxy's log shows it failing to list
	proven         string            // the broken hop the bundle shows, "" when none
}

func (g *apiCalls) refused() bool { return slices.Contains(g.failures, "connection refused") }

// apiPath is what the bundle shows of the way to the apiserver: the kubernetes
// Service and its endpoints, the nodes' rules, kube-proxy's failures to list.
type apiPath struct {
	svc             *model.Service
	eps             facts.EndpointSet
	epPos           model.Pos
	epFound         bool
	sps             []dataplane.ServicePort
	kubeProxyErrors []facts.ListError
}

func runAPIServerUnreachable(p *analyzer.Pass) error {
	s := p.Snap
	var groups []*apiCalls
	byKey := map[string]*apiCalls{}
	kubeProxy := facts.KubeProxyLogs.Of(p)
	for i := range s.Logs {
		le := &s.Logs[i]
		if kubeProxy.Own(i) || isAPIServerLog(le) {
			continue
		}
		f, ok := apiFailureOf(le)
		if !ok {
			continue
		}
		comp := le.Source
		if comp == "" {
			comp = path.Base(le.Pos.File)
		}
		// Per component, node and address: the rotated logs of one
		// component (traefik.log, traefik.log.1) are one problem.
		key := subjectComponent(comp, le.Pos.File) + "|" + le.Node + "|" + f.addr
		g := byKey[key]
		if g == nil {
			g = &apiCalls{component: comp, node: le.Node, addr: f.addr}
			byKey[key] = g
			groups = append(groups, g)
		}
		if !slices.Contains(g.failures, f.failure) {
			g.failures = append(g.failures, f.failure)
		}
		if f.kind != "" && !slices.Contains(g.kinds, f.kind) {
			g.kinds = append(g.kinds, f.kind)
		}
		g.lines = append(g.lines, f)
	}
	if len(groups) == 0 {
		return nil
	}
	for _, g := range groups {
		if slices.ContainsFunc(g.lines, func(l apiFailure) bool { return l.le.Pos.File != g.lines[0].le.Pos.File }) {
			// Several logs of the component (this run's and the previous
			// one's): the older log's lines first (by each log's first
			// line), each log's in its order.
			start := map[string]time.Time{}
			for _, l := range g.lines {
				if _, ok := start[l.le.Pos.File]; !ok {
					start[l.le.Pos.File] = l.le.Time
				}
			}
			slices.SortStableFunc(g.lines, func(a, b apiFailure) int {
				return start[a.le.Pos.File].Compare(start[b.le.Pos.File])
			})
		}
	}
	way := apiPath{sps: facts.Dataplanes.Of(p), kubeProxyErrors: kubeProxy.ListErrors}
	way.svc, way.eps, way.epPos, way.epFound = kubernetesService(p)
	for _, g := range groups {
		f := judgeAPICalls(s, g, way)
		f.Title, f.Summary, f.Cause, f.Fix = apiWords(g)
		p.Report(f)
	}
	return nil
}

// judgeAPICalls judges g: what the address is, what the bundle shows of
// the path to it (the kubernetes Service, its endpoints, the node's rules,
// kube-proxy's log), which hop that proves broken, and how firmly. It
// fills in g and returns the finding without its words.
func judgeAPICalls(s *model.Snapshot, g *apiCalls, way apiPath) analyzer.Finding {
	addr := g.addr
	ap, _ := netip.ParseAddrPort(addr)
	g.ap, g.target, g.epFound, g.eps = ap, targetAPIServer, way.epFound, way.eps
	var svcPos model.Pos
	switch svc := way.svc; {
	case svc != nil && ap.IsValid() && slices.Contains(append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs...), ap.Addr().String()):
		g.target, g.how = targetClusterIP, "the ClusterIP of the kubernetes Service"
		svcPos = svc.Source.Pos
		if svcPos.Object == "" {
			svcPos.Object = model.ObjectName("Service", "default", "kubernetes")
		}
	case ap.IsValid() && (slices.Contains(way.eps.Addrs, ap.String()) || way.eps.IPs[ap.Addr().String()]):
		g.target, g.how = targetEndpoint, "an endpoint of the kubernetes Service"
	case svc == nil && ap.IsValid() && ap.Port() == 443 && firstOfServiceRange(ap.Addr()):
		g.target, g.how = targetClusterIP, "the first address of a Service range, the kubernetes Service's ClusterIP"
		if other := sameRangeService(s, ap.Addr()); other != "" {
			g.how += " (" + other + " is in the same range)"
		}
	}
	dated, yearless := timeSpan(g.lines)
	g.span = dated
	if !g.span.ok {
		g.span = yearless
	}
	values := map[string]any{"component": g.component, "address": addr, "target": g.target,
		"failure": strings.Join(g.failures, ", "), "errors": len(g.lines)}
	if g.node != "" {
		values["node"] = g.node
	}
	if len(g.kinds) > 0 {
		values["resources"] = g.kinds
	}
	if g.span.ok {
		values["first"] = g.span.first.Format(logTime(g.span.first))
		values["last"] = g.span.last.Format(logTime(g.span.last))
	}
	var ev []analyzer.Evidence
	for i, l := range g.lines {
		if i < 3 || i == len(g.lines)-1 {
			ev = append(ev, analyzer.Evidence{Pos: l.le.Pos, Note: fmt.Sprintf("%s: %s to %s", g.component, l.failure, addr)})
		}
	}
	if svcPos.File != "" {
		ev = append(ev, analyzer.Evidence{Pos: svcPos, Note: "ClusterIP " + way.svc.Spec.ClusterIP})
	}
	eps := way.eps.Addrs
	if way.epFound {
		values["endpoints"] = eps
		note := "apiserver endpoints " + strings.Join(eps, ", ")
		if way.eps.Count == 0 {
			note, g.proven = "no addresses", "the kubernetes Service has no endpoints"
		}
		ev = append(ev, analyzer.Evidence{Pos: way.epPos, Note: note})
	}
	dnatOK := false // the node's rules send the ClusterIP to the endpoints
	if g.target == targetClusterIP {
		if note, pos, bad, ok := clusterIPDataplane(way.sps, g.node, addr, way.eps); ok {
			g.dataplane, dnatOK = note, bad == ""
			ev = append(ev, analyzer.Evidence{Pos: pos, Note: note})
			values["dataplane"] = "DNAT to the endpoints"
			if bad != "" {
				values["dataplane"] = bad
				if g.proven == "" {
					g.proven = bad
				}
			}
		}
	}
	for _, e := range way.kubeProxyErrors {
		if le := e.Event; g.node == "" || le.Node == "" || le.Node == g.node {
			ev = append(ev, analyzer.Evidence{Pos: le.Pos, Note: "kube-proxy cannot list " + e.Plural()})
			g.kubeProxyStale = true
			break
		}
	}
	where := addr
	if ap.IsValid() {
		where = ap.String()
	}
	f := analyzer.Finding{
		Subject:  subject("component", subjectComponent(g.component, g.lines[0].le.Pos.File), "node", g.node, "address", where),
		Severity: analyzer.Warning, Certainty: analyzer.Proven, Facts: values, Evidence: ev,
		Supports: []string{fmt.Sprintf("%s: %s: %s to %s", g.lines[0].le.Pos, g.component, g.lines[0].failure, addr)},
	}
	if g.proven != "" {
		f.Severity = analyzer.Error
		values["proven"] = g.proven
		f.Supports = append(f.Supports, g.proven)
	}
	if way.epFound && way.eps.Count > 0 {
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: the kubernetes Service has endpoints (%s)", way.epPos, strings.Join(eps, ", ")))
	}
	if dnatOK {
		f.Contradicts = append(f.Contradicts, "the node's rules DNAT "+addr+" to the endpoints: kube-proxy's rules are not the broken hop")
	}
	if g.target == targetClusterIP && !way.epFound {
		f.Contradicts = append(f.Contradicts, "no Endpoints of the kubernetes Service in the bundle: whether it has endpoints is not shown")
	}
	switch {
	case g.proven != "":
	case g.target == targetClusterIP:
		f.Certainty = analyzer.Unknown
		f.Alternatives = []string{"kube-proxy not running or its rules stale on that node", "the CNI or a firewall dropping " +
			"traffic from Pods to the host network, where the apiserver listens", "a wrong or dead apiserver endpoint"}
		f.Decide = fmt.Sprintf("# from a Pod on that node, then to each apiserver endpoint\nnc -zv %s %d", ap.Addr(), ap.Port())
		if slices.Contains(g.failures, "network is unreachable") { // ENETUNREACH: the sender's own routes refuse it
			f.Alternatives = append([]string{"the Pod's own routes: no usable route to the ClusterIP (no default route, or one " +
				"through a gateway it cannot reach), so the packets never reach the node's kube-proxy rules"}, f.Alternatives...)
			f.Decide = fmt.Sprintf("# POD is the component's Pod\nkubectl exec POD -- ip route get %s\n%s", ap.Addr(), f.Decide)
		}
		hostUnreachable(g, &f)
	case g.refused():
		f.Certainty = analyzer.Likely
		f.Alternatives = []string{"a load balancer in front of the apiservers has no healthy backend",
			"the apiserver listens on another address or port than the one dialed"}
		f.Decide = fmt.Sprintf("# on the control-plane node\ncrictl ps -a | grep kube-apiserver; ss -ltnp | grep %d", ap.Port())
	default:
		f.Certainty = analyzer.Unknown
		f.Alternatives = []string{"a firewall or security group", "routing between the host and the apiserver",
			"a dead load balancer or VIP in front of the apiservers", "an overloaded apiserver (TLS handshake timeout)"}
		f.Decide = fmt.Sprintf("# from the same host or Pod\nnc -zv %s %d", ap.Addr(), ap.Port())
		hostUnreachable(g, &f)
	}
	return f
}

// hostUnreachable puts a host firewall's REJECT first among f's
// alternatives when g's calls failed with "no route to host": EHOSTUNREACH
// is an ICMP host unreachable or prohibited that came back (or a next hop
// no one answered ARP for), and firewalld rejects what its zones do not
// allow with icmp-host-prohibited. kube-proxy's own REJECT, of a Service
// without endpoints, says port unreachable: "connection refused".
func hostUnreachable(g *apiCalls, f *analyzer.Finding) {
	if !slices.Contains(g.failures, "no route to host") {
		return
	}
	f.Alternatives = append([]string{"a host firewall's REJECT on the node that holds the endpoint or on the " +
		"Pod's node (firewalld rejects what its zones do not allow with icmp-host-prohibited, which a client reports " +
		"as \"no route to host\")"}, f.Alternatives...)
	f.Decide = "# on the Pod's node and the apiserver's: a running firewalld, and REJECT rules\n" +
		"firewall-cmd --state; iptables-save | grep -i reject\n" + f.Decide
}

// apiWords words the finding of g, as judgeAPICalls judged it: what the
// component logs, what the bundle shows of the path, and the cause it
// proves or the hops it cannot tell apart.
func apiWords(g *apiCalls) (title, summary, cause, fix string) {
	addr, ap, failures := g.addr, g.ap, strings.Join(g.failures, ", ")
	who := g.component
	if g.node != "" {
		who += " on " + g.node
	}
	logs := fmt.Sprintf("%s logs %d failed %s to the apiserver at %s (%s)", who, len(g.lines),
		plural(len(g.lines), "call", "calls"), addr, failures)
	switch first, last := g.span.first.Format(logTime(g.span.first)), g.span.last.Format(logTime(g.span.last)); {
	case g.span.ok && g.span.first.Equal(g.span.last):
		logs += " at " + first
	case g.span.ok:
		logs += fmt.Sprintf(" from %s to %s", first, last)
	}
	says := []string{logs + "."}
	if g.how != "" {
		says = append(says, fmt.Sprintf("%s is %s.", addr, g.how))
	}
	switch {
	case g.epFound && g.eps.Count == 0:
		says = append(says, "The kubernetes Service has no endpoints: nothing can answer on its ClusterIP.")
	case g.epFound:
		says = append(says, fmt.Sprintf("The apiserver endpoints are %s.", strings.Join(g.eps.Addrs, ", ")))
	}
	if g.dataplane != "" {
		says = append(says, g.dataplane+".")
	}
	if g.kubeProxyStale {
		says = append(says, "kube-proxy's log shows it failing to list Services or endpoints too: its rules may be stale.")
	}
	summary = strings.Join(says, " ")
	switch {
	case g.target == targetClusterIP:
		title = fmt.Sprintf("%s cannot reach the apiserver through the kubernetes Service %s (%s)", g.component, addr, failures)
		cause = "The path from the Pod to the apiserver through the ClusterIP is broken: the node's kube-proxy rules DNAT " +
			addr + " to an apiserver endpoint, and somewhere on pod -> DNAT -> endpoint the connection dies. Here " + g.proven + "."
		if g.proven == "" {
			cause = "Not shown which hop breaks: the calls through the ClusterIP " + addr + " fail (" + failures + "), but " +
				"the bundle does not show whether kube-proxy's rules, the network between the Pod and the apiserver, or " +
				"the endpoint drops them."
		}
		fix = fmt.Sprintf("Check the endpoints: `kubectl get endpoints kubernetes`. On the node, check the Service's rules: "+
			"`iptables -t nat -L KUBE-SVC-NPX46M4PTMTKRN6Y -n` (nftables mode: `nft list table ip kube-proxy | "+
			"grep -A6 default/kubernetes/tcp/https`; IPVS: `ipvsadm -Ln -t %s`). From a Pod on that node: "+
			"`nc -zv %s %d`, then `nc -zv` to each endpoint. Check the kube-proxy and CNI Pods on that node "+
			"(`kubectl -n kube-system get pods -o wide`) and restart kube-proxy there if its rules are stale.",
			addr, ap.Addr(), ap.Port())
	case g.refused():
		title = fmt.Sprintf("%s: the apiserver at %s refuses connections", g.component, addr)
		cause = "Nothing listens on the apiserver's own address: kube-apiserver is down, crash-looping or restarting " +
			"(or a load balancer in front of it has no healthy backend)."
		fix = fmt.Sprintf("On the control-plane node: `crictl ps -a | grep kube-apiserver`, `crictl logs CONTAINER`, "+
			"`ss -ltnp | grep %d`; check /etc/kubernetes/manifests/kube-apiserver.yaml and etcd; then "+
			"`curl -k https://%s/livez`.", ap.Port(), addr)
	default:
		title = fmt.Sprintf("%s cannot reach the apiserver at %s (%s)", g.component, addr, failures)
		cause = "The network between this component and the apiserver's address drops or resets the connection: a " +
			"firewall or security group, routing, a dead load balancer or VIP in front of the apiservers, or an " +
			"overloaded apiserver (TLS handshake timeout)."
		if g.proven == "" {
			cause = "Not shown where the connection dies: the calls to " + addr + " fail (" + failures + "), and the " +
				"bundle holds nothing of the path between the component and the apiserver."
		}
		fix = fmt.Sprintf("From the same host or Pod: `nc -zv %s %d` and `curl -k https://%s/livez`; check the "+
			"firewall and routes to it, and the apiserver's load balancer or VIP.", ap.Addr(), ap.Port(), addr)
	}
	if g.proven == "" && !g.refused() && slices.Contains(g.failures, "no route to host") {
		cause += " \"No route to host\" is what an ICMP host unreachable or prohibited makes a client say: " +
			"firewalld's REJECT of what its zones do not allow sends the latter."
		fix = "Look for a host firewall first, on the Pod's node and the apiserver's: `firewall-cmd --state`, " +
			"`iptables-save | grep -i reject`. " + fix
	}
	return title, summary, cause, fix
}

// sameRangeService names a Service whose ClusterIP is in the same /16 as
// a: "kube-system/kube-dns 10.96.0.10".
func sameRangeService(s *model.Snapshot, a netip.Addr) string {
	pfx, err := a.Prefix(16)
	if err != nil || !a.Is4() {
		return ""
	}
	for _, sv := range s.Kube.Services {
		if c, err := netip.ParseAddr(sv.Spec.ClusterIP); err == nil && c != a && pfx.Contains(c) {
			return fmt.Sprintf("%s %s", objectName(sv.Namespace, sv.Name), c)
		}
	}
	return ""
}

// clusterIPDataplane holds the node's NAT rules (or IPVS table) for the
// ClusterIP against the endpoints. bad says what is wrong, "" when the
// rules send the ClusterIP to the endpoints; ok is false when no dataplane
// of that node is in the bundle. The absence of a rule counts only in a
// dump that holds several Services (not one cut down with grep).
func clusterIPDataplane(sps []dataplane.ServicePort, node, addr string, eps facts.EndpointSet) (note string, pos model.Pos, bad string, ok bool) {
	services := map[string]bool{}
	var first *dataplane.ServicePort
	for i := range sps {
		sp := &sps[i]
		if node != "" && sp.Node != "" && sp.Node != node {
			continue
		}
		services[sp.Service+"|"+strings.Join(sp.Frontends, ",")] = true
		if first == nil {
			first = sp
		}
		if !slices.Contains(sp.Frontends, addr) {
			continue
		}
		var targets []string
		var stale []string
		for _, b := range sp.Backends {
			t := b.Address
			if b.Addr.IsValid() {
				t = b.Addr.String()
			}
			targets = append(targets, t)
			if ip := facts.BackendIP(b); len(eps.IPs) > 0 && ip != "" && !eps.IPs[ip] {
				stale = append(stale, t)
			}
		}
		switch {
		case len(sp.Backends) == 0:
			return fmt.Sprintf("The node's rules (%s) catch %s but send it nowhere", sp.Chain, addr), sp.Pos,
				"the node's rules for " + addr + " have no DNAT target", true
		case len(stale) > 0:
			return fmt.Sprintf("The node's rules (%s) DNAT %s to %s, of which %s %s no apiserver endpoint", sp.Chain, addr,
					strings.Join(targets, ", "), strings.Join(stale, ", "), plural(len(stale), "is", "are")), sp.Pos,
				"the node's rules DNAT " + addr + " to " + strings.Join(stale, ", ") + ", which no apiserver endpoint has (see stale-dnat)", true
		}
		return fmt.Sprintf("The node's rules (%s) DNAT %s to %s", sp.Chain, addr, strings.Join(targets, ", ")), sp.Pos, "", true
	}
	if first != nil && len(services) >= 3 && sameServiceRange(sps, node, addr) {
		return fmt.Sprintf("The node's rules hold %d Service ports but none for %s", len(services), addr), first.Pos,
			"the node's rules have no DNAT for " + addr, true
	}
	return "", model.Pos{}, "", false
}

// sameServiceRange tells whether the node's rules catch a Service address
// of addr's range (its /16, or /64 for IPv6): only the rules of the
// cluster whose ClusterIP failed can show that none catches it.
func sameServiceRange(sps []dataplane.ServicePort, node, addr string) bool {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return false
	}
	bits := 16
	if ap.Addr().Is6() {
		bits = 64
	}
	want, err := ap.Addr().Prefix(bits)
	if err != nil {
		return false
	}
	for _, sp := range sps {
		if node != "" && sp.Node != "" && sp.Node != node {
			continue
		}
		for _, fe := range sp.Frontends {
			if f, err := netip.ParseAddrPort(fe); err == nil && f.Addr() != ap.Addr() && want.Contains(f.Addr()) {
				return true
			}
		}
	}
	return false
}

// span is the first and last time of a set of log lines.
type span struct {
	first, last time.Time
	ok          bool
}

func (sp *span) add(t time.Time) {
	if !sp.ok || t.Before(sp.first) {
		sp.first = t
	}
	if !sp.ok || t.After(sp.last) {
		sp.last = t
	}
	sp.ok = true
}

// timeSpan returns the span of the dated lines and that of the lines
// without a year (klog), which cannot be compared.
func timeSpan(lines []apiFailure) (dated, yearless span) {
	for _, l := range lines {
		switch t := l.le.Time; {
		case t.IsZero():
		case t.Year() <= 1:
			yearless.add(t)
		default:
			dated.add(t)
		}
	}
	return dated, yearless
}
