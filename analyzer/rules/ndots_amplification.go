package rules

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	corev1 "k8s.io/api/core/v1"
)

// NdotsAmplification finds CoreDNS queries that are a name with one of the
// Pod's search domains appended: the resolver's ndots:5 expanding a name
// that was already complete.
var NdotsAmplification = &analyzer.Rule{
	Name:     "ndots-amplification",
	Severity: analyzer.Error,
	Needs:    []model.Kind{model.KindLogs},
	Uses:     []model.Kind{model.KindKube},
	Proof: "CoreDNS's log plugin lines answer NXDOMAIN to names that cannot exist in the cluster zone, a name " +
		"with a search domain appended (the label svc twice, or more labels before <namespace>.svc than a " +
		"Kubernetes name has), and the client address is a Pod whose DNS policy gives it the cluster's " +
		"resolv.conf (dnsPolicy ClusterFirst, no dnsConfig ndots option below the name's dots)",
	Unproven: "from CoreDNS's lines alone the search-list expansion is likely (a warning), and " +
		"the Pods (kubectl get pods -A -o json: the Pod of the client address, its dnsPolicy and dnsConfig) or " +
		"cat /etc/resolv.conf in it decides; NXDOMAIN answers to names that could exist are left alone",
	SubjectKeys: []string{"client", "name"},
	Run:         runNdotsAmplification,
	Symptoms:    []analyzer.SymptomRef{DNSTimeouts.At(100)},
	Decide: "# options ndots:5 and the search list of the client Pod; then, with CoreDNS's log plugin on, NXDOMAIN " +
		"for the name with each search domain appended\nkubectl exec POD -- cat /etc/resolv.conf",
	Doc: `a Pod's lookups go through every search domain (ndots:5)

A Pod with the default dnsPolicy (ClusterFirst) gets a resolv.conf with
"options ndots:5" and a search list of <namespace>.svc.<zone>,
svc.<zone>, <zone> and the node's own domains. A name with fewer than five
dots and no trailing dot is tried with each search domain appended first,
and only then as it is: an already complete name
(kubernetes.default.svc.cluster.local, a peer's
pod.service.namespace.svc, www.example.com) costs one NXDOMAIN query
(A and AAAA each) per search domain before the one that answers. CoreDNS
answers them fast and with authority, so this is not an upstream that
does not answer: it is load and latency multiplied, conntrack entries and
UDP races multiplied, and on busy clusters dropped queries and 5 s
timeouts.

Evidence: CoreDNS's log plugin lines (the "log" plugin in the Corefile):
NXDOMAIN answers to names that cannot exist in the cluster zone, names
with the label svc twice or with more labels before <namespace>.svc than
a Pod's or Service's name has, grouped by client address and the name the
client asked for. Pods (kubectl get pods -o json): the client's Pod and
its dnsPolicy and dnsConfig, which show the resolv.conf it got.

Severity: error when a Pod of the client address has the cluster
resolv.conf (ClusterFirst, without an ndots option below the name's dots):
proven by the log and the Pod; a warning of likely cause from the log
alone, with the Pod's resolv.conf as what decides; a note (info) when
the bundle shows DNS lookups timing out (nslookup's "no servers could be
reached") while CoreDNS answered these queries within 100 ms: extra
queries answered at once do not explain a lookup that got no answer.
NXDOMAIN answers to names that could exist (a missing Service) are not
reported.

Fix: write the name fully qualified with a trailing dot
(kubernetes.default.svc.cluster.local.), or use the short name the search
list completes in one step (service.namespace), or lower ndots in the
Pod's dnsConfig (options: [{name: ndots, value: "2"}]); a NodeLocal
DNSCache or CoreDNS's autopath plugin makes the remaining queries cheap.`,
}

// ndotsQuery is one NXDOMAIN answer to an expanded name.
type ndotsQuery struct {
	le     *model.LogEvent
	name   string // the name queried, without the final dot
	base   string // the name the client asked for
	suffix string // the search domain appended
	qtype  string
}

// ndotsGroup is the expanded queries of one client for one name.
type ndotsGroup struct {
	client  string
	base    string
	queries []ndotsQuery
	answer  *model.LogEvent // the query of the name as it is, answered, when logged
}

func runNdotsAmplification(p *analyzer.Pass) error {
	s := p.Snap
	var groups []*ndotsGroup
	byKey := map[[2]string]*ndotsGroup{}
	answered := map[[2]string]*model.LogEvent{}
	for i := range s.Logs {
		le := &s.Logs[i]
		name, rcode := le.Fields["name"], le.Fields["rcode"]
		if name == "" || rcode == "" {
			continue
		}
		client := ndotsClient(le.Fields["remote"])
		if rcode != "NXDOMAIN" {
			k := [2]string{client, strings.TrimSuffix(strings.ToLower(name), ".")}
			if rcode == "NOERROR" && answered[k] == nil {
				answered[k] = le
			}
			continue
		}
		base, suffix, ok := ndotsExpanded(name)
		if !ok {
			continue
		}
		k := [2]string{client, base}
		g := byKey[k]
		if g == nil {
			g = &ndotsGroup{client: client, base: base}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.queries = append(g.queries, ndotsQuery{le: le, name: strings.TrimSuffix(strings.ToLower(name), "."),
			base: base, suffix: suffix, qtype: le.Fields["type"]})
	}
	for _, g := range groups {
		g.answer = answered[[2]string{g.client, g.base}]
		f := ndotsFinding(s, g)
		notTheTimeouts(s, g, &f)
		p.Report(f)
	}
	return nil
}

// ndotsClient is the address of a CoreDNS log line's remote, without its
// port.
func ndotsClient(remote string) string {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().String()
	}
	return remote
}

// maxPodNameLabels is how many labels a Kubernetes DNS name has before
// <namespace>.svc: a Pod's hostname and its subdomain (a headless
// Service), or a Service's name.
const maxPodNameLabels = 2

// ndotsExpanded tells whether name (a CoreDNS query name) is another name
// with a search domain appended, and returns that name and the suffix:
// the label svc twice ("kubernetes.default.svc.cluster.local" with
// "kube-system.svc.cluster.local" appended), or more labels before
// <namespace>.svc than a Kubernetes name has ("www.example.com" with
// "default.svc.cluster.local" appended).
func ndotsExpanded(name string) (base, suffix string, ok bool) {
	labels := strings.Split(strings.TrimSuffix(strings.ToLower(name), "."), ".")
	var svc []int
	for i, l := range labels {
		if l == "svc" {
			svc = append(svc, i)
		}
	}
	switch {
	case len(svc) >= 2:
		first, last := svc[0], svc[len(svc)-1]
		zone := labels[last+1:]
		end := first + 1
		if len(zone) > 0 && end+len(zone) <= last && slices.Equal(labels[end:end+len(zone)], zone) {
			end += len(zone) // the complete cluster name: kubernetes.default.svc.cluster.local
		}
		if end >= len(labels) || end < 2 {
			return "", "", false // a short name completed by the search list: what it is for
		}
		return strings.Join(labels[:end], "."), strings.Join(labels[end:], "."), true
	case len(svc) == 1 && svc[0]-1 > maxPodNameLabels+1:
		// more than a Pod's hostname, its subdomain and a namespace
		// before svc: the search domain <namespace>.svc.<zone> appended
		// to a name of two labels or more.
		i := svc[0] - 1
		return strings.Join(labels[:i], "."), strings.Join(labels[i:], "."), true
	}
	return "", "", false
}

// ndotsPod returns the Pod (read whole, not from a table) whose address is
// client, or nil.
func ndotsPod(s *model.Snapshot, client string) *model.Pod {
	for i := range s.Kube.Pods {
		pod := &s.Kube.Pods[i]
		if pod.Source.FromTable || pod.Spec.HostNetwork {
			continue
		}
		if pod.Status.PodIP == client {
			return pod
		}
		for _, ip := range pod.Status.PodIPs {
			if ip.IP == client {
				return pod
			}
		}
	}
	return nil
}

// ndotsOf returns the ndots the Pod's resolv.conf gets, and whether it
// gets the cluster's resolv.conf at all (dnsPolicy ClusterFirst, the
// default).
func ndotsOf(pod *model.Pod) (int, bool) {
	switch pod.Spec.DNSPolicy {
	case "", corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet:
	default:
		return 0, false
	}
	ndots := 5
	if c := pod.Spec.DNSConfig; c != nil {
		for _, o := range c.Options {
			if o.Name == "ndots" && o.Value != nil {
				if n, err := strconv.Atoi(*o.Value); err == nil {
					ndots = n
				}
			}
		}
	}
	return ndots, true
}

func ndotsFinding(s *model.Snapshot, g *ndotsGroup) analyzer.Finding {
	var suffixes, lines []string
	for _, q := range g.queries {
		if !slices.Contains(suffixes, q.suffix) {
			suffixes = append(suffixes, q.suffix)
		}
	}
	dots := strings.Count(g.base, ".")
	f := analyzer.Finding{
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Subject:   subject("client", g.client, "name", g.base),
		Facts: map[string]any{"client": g.client, "name": g.base, "dots": dots,
			"nxdomain_queries": len(g.queries), "search_suffixes": suffixes},
	}
	for i, q := range g.queries {
		if i == maxGroupEvidence {
			break
		}
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: q.le.Pos,
			Note: fmt.Sprintf("%s %s. NXDOMAIN", q.qtype, q.name)})
		lines = append(lines, fmt.Sprintf("%s: %s %s. NXDOMAIN", q.le.Pos, q.qtype, q.name))
	}
	first := g.queries[0]
	f.Supports = []string{fmt.Sprintf("CoreDNS answered NXDOMAIN to %d %s from %s that are %s with a search domain "+
		"appended (%s)", len(g.queries), plural(len(g.queries), "query", "queries"), g.client, g.base,
		strings.Join(lines, "; "))}
	if g.answer != nil {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.answer.Pos,
			Note: fmt.Sprintf("%s %s. NOERROR", g.answer.Fields["type"], g.base)})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the name as it is, %s., is answered NOERROR after them",
			g.answer.Pos, g.base))
	}
	f.Contradicts = []string{"options ndots:1 (or a value at most " + strconv.Itoa(dots) + ") in the Pod's /etc/resolv.conf: " +
		"the resolver then asks for the name as it is first"}
	pod := ndotsPod(s, g.client)
	ndots, cluster := 0, false
	if pod != nil {
		ndots, cluster = ndotsOf(pod)
		f.Facts["pod"] = objectName(pod.Namespace, pod.Name)
		f.Facts["ndots"] = ndots
	}
	who := g.client
	if pod != nil {
		who = fmt.Sprintf("Pod %s (%s)", objectName(pod.Namespace, pod.Name), g.client)
	}
	switch {
	case pod != nil && cluster && dots < ndots:
		f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: pod.Source.Pos,
			Note: fmt.Sprintf("dnsPolicy %s, ndots %d", cmp.Or(string(pod.Spec.DNSPolicy), "ClusterFirst"), ndots)})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s is Pod %s, whose DNS policy gives it the cluster's "+
			"resolv.conf with ndots:%d, more than the %d %s of %s", pod.Source.Pos, g.client,
			objectName(pod.Namespace, pod.Name), ndots, dots, plural(dots, "dot", "dots"), g.base))
		f.Contradicts = nil
	case pod != nil:
		f.Certainty = analyzer.Unknown
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: pod.Source.Pos,
			Note: "dnsPolicy " + string(pod.Spec.DNSPolicy)})
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: Pod %s does not get the cluster's ndots:5 (dnsPolicy %s, ndots %d)",
			pod.Source.Pos, objectName(pod.Namespace, pod.Name), cmp.Or(string(pod.Spec.DNSPolicy), "ClusterFirst"), ndots))
		f.Alternatives = []string{"another process at " + g.client + " with its own resolv.conf (a hostNetwork Pod, the node)",
			"the application itself appends the search domains"}
		f.Decide = "# in the Pod at " + g.client + ": search list, options ndots\ncat /etc/resolv.conf"
	default:
		f.Alternatives = []string{"the resolver's search list with ndots:5 (a Pod with dnsPolicy ClusterFirst)",
			"a client that appends the search domains itself (a resolver library, a misconfigured name)"}
		f.Decide = collected("kubectl-objects", "the Pod of "+g.client+": its dnsPolicy and dnsConfig; or "+
			"/etc/resolv.conf in it")
	}
	f.Evidence = dedupEvidence(f.Evidence)
	f.Title = fmt.Sprintf("%s looks up %s through every search domain first: %d NXDOMAIN %s",
		who, g.base, len(g.queries), plural(len(g.queries), "query", "queries"))
	f.Summary = fmt.Sprintf("CoreDNS answered NXDOMAIN to %s for %s with %s appended (first at %s): the name "+
		"has %d %s, fewer than ndots:5, so the resolver tries it with each search domain before asking for it as "+
		"it is. Each lookup costs one query per search domain and type (A, AAAA) more than it needs.",
		g.client, g.base, ndotsList(suffixes), first.le.Pos, dots, plural(dots, "dot", "dots"))
	if g.answer != nil {
		f.Summary += fmt.Sprintf(" The name as it is answers (%s).", g.answer.Pos)
	}
	f.Cause = fmt.Sprintf("The client resolves %s without a trailing dot; with options ndots:5 in its resolv.conf "+
		"(the default of dnsPolicy ClusterFirst) a name of fewer than 5 dots goes through the search list first, "+
		"and every search domain costs an NXDOMAIN round trip.", g.base)
	if f.Certainty == analyzer.Unknown {
		f.Cause = fmt.Sprintf("Not established: the queries are %s with search domains appended, but the Pod at %s "+
			"does not get the cluster's ndots:5.", g.base, g.client)
	}
	f.Fix = fmt.Sprintf("Look up %s. with a trailing dot (fully qualified), or the short name the first search domain "+
		"completes; or lower ndots in the Pod's spec.dnsConfig (options: [{name: ndots, value: \"2\"}]). A NodeLocal "+
		"DNSCache or CoreDNS's autopath plugin makes the remaining queries cheap.", g.base)
	return f
}

// ndotsList names the search domains: "a", "a and b", "a, b and c".
func ndotsList(l []string) string {
	if len(l) < 2 {
		return strings.Join(l, "")
	}
	return strings.Join(l[:len(l)-1], ", ") + " and " + l[len(l)-1]
}

// slowAnswer is how long an NXDOMAIN answer takes before the extra queries
// it stands for cost a lookup a time its client would notice.
const slowAnswer = 100 * time.Millisecond

// notTheTimeouts weighs f against the bundle's DNS lookups that timed out
// (nslookup's "no servers could be reached", dig's "connection timed out"):
// extra queries that CoreDNS answered at once do not explain lookups that
// got no answer at all. The finding stays, as a note (info), with that said.
func notTheTimeouts(s *model.Snapshot, g *ndotsGroup, f *analyzer.Finding) {
	var slowest time.Duration
	for _, q := range g.queries {
		d, err := time.ParseDuration(q.le.Fields["duration"])
		if err != nil {
			return // an answer of unknown time: it may be slow
		}
		slowest = max(slowest, d)
	}
	if slowest >= slowAnswer {
		return
	}
	for i := range s.Client {
		r := &s.Client[i]
		if (r.Tool == "nslookup" || r.Tool == "dig") && (r.Outcome == model.ClientTimeout || r.Outcome == model.ClientNoAnswer) {
			f.Severity = analyzer.Info
			f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: a lookup timed out (%s), while CoreDNS answered these "+
				"queries within %s: extra queries answered at once do not explain a lookup that got no answer", r.Pos,
				r.Message, slowest.Round(time.Microsecond)))
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: r.Pos, Note: "lookup timed out"})
			return
		}
	}
}
