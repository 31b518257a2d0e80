package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// CoreDNSUpstreamTimeout finds CoreDNS's queries to an upstream resolver
// timing out.
var CoreDNSUpstreamTimeout = &analyzer.Rule{
	Name:        "coredns-upstream-timeout",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindKube, model.KindResolvConf},
	SubjectKeys: []string{"node", "address"},
	Run:         runCoreDNSUpstreamTimeout,
	FollowsFrom: []*analyzer.Rule{CoreDNSLoop, IPForwardDisabled},
	Symptoms:    []analyzer.SymptomRef{DNSTimeouts.At(140)},
	Proof: "nothing in a bundle proves it: CoreDNS's own errors-plugin lines (\"[ERROR] plugin/errors: 2 example.com. A: " +
		"read udp 10.244.0.5:41234->10.0.0.2:53: i/o timeout\") show which upstream does not answer, not why; the " +
		"answer of that upstream to dig from the CoreDNS Pod's node decides",
	Unproven: "two or more of CoreDNS's forwarded queries (not its loop plugin's start-up HINFO probes) timing out at " +
		"one upstream name it as likely, with the dig that decides; the loop probes alone are normal for an upstream " +
		"that ignores them, and a client's own timeouts to the cluster DNS say nothing of the upstream: silent",
	Doc: `the upstream resolver does not answer CoreDNS

CoreDNS answers the cluster's names itself and forwards every other query
(forward . /etc/resolv.conf, or to the addresses its Corefile gives) to an
upstream resolver. When that upstream does not answer, or its answers never
come back (a firewall between the Pod network and the resolver, a resolver
that only serves some networks, a dead nameserver in the node's
resolv.conf), CoreDNS's errors plugin logs each forwarded query that timed
out, with the upstream's address: "[ERROR] plugin/errors: 2 example.com. A:
read udp 10.244.0.5:41234->10.0.0.2:53: i/o timeout" (older releases:
"unreachable backend: read udp ..."). Pods see lookups of outside names
time out or fail (SERVFAIL), or succeed only after the resolver retries;
the cluster's own names still resolve.

The loop plugin's start-up probes (HINFO queries for a random name) time
out at upstreams that ignore them; alone they are normal. A loop (the
coredns-loop rule's line) or IPv4 forwarding turned off on the node explain
the same timeouts. A client's own "read udp ...->10.96.0.10:53: i/o
timeout" is not CoreDNS's line and says nothing of its upstream.

Evidence: CoreDNS's log (kubectl logs -n kube-system -l k8s-app=kube-dns),
and the node's resolv.conf when the bundle holds it.

Severity: a warning of likely cause when CoreDNS logs two or more forwarded
queries timing out at one upstream, with the dig that decides; nothing for
the loop probes alone.

Fix: make the upstream reachable from the Pod network (firewall rules and
security groups for UDP and TCP 53 from the nodes' SNAT addresses, the
resolver's allowed clients), or forward to a resolver that answers:
remove the dead nameserver from the resolv.conf the kubelet gives CoreDNS,
or list working upstreams in the Corefile (forward . 10.0.0.2 10.0.0.3).`,
}

// corednsTimeoutRe reads a CoreDNS errors-plugin line of a forwarded query
// that timed out: "2 example.com. A: read udp 10.244.0.5:41234->10.0.0.2:53:
// i/o timeout", "2 example.com. A: unreachable backend: read udp ...", "2
// example.com. AAAA: dial tcp 10.0.0.2:53: i/o timeout".
var corednsTimeoutRe = lazyre.New(`^\d+ (\S+\.) ([A-Z0-9]+): (?:unreachable backend: )?(?:read (?:udp|tcp) \S+->(\S+)|dial (?:udp|tcp) (\S+)): i/o timeout`)

// upstreamLoopRe finds the loop plugin's line that CoreDNS forwards to
// itself ("plugin/loop: Loop (127.0.0.1:55953 -> :53) detected for zone",
// "Seen "HINFO IN ..." more than twice, loop detected").
var upstreamLoopRe = lazyre.New(`(?i)\) detected for zone|forwarding loop detected|more than twice, loop detected`)

// loopProbeNameRe is the name of the loop plugin's probe: two random
// numbers.
var loopProbeNameRe = lazyre.New(`^\d+\.\d+\.$`)

// upstreamTimeouts is one node's timed-out queries to one upstream.
type upstreamTimeouts struct {
	node     string
	upstream netip.AddrPort
	queries  []*model.LogEvent // forwarded queries
	probes   []*model.LogEvent // the loop plugin's HINFO probes
	names    []string          // the names of the forwarded queries, up to three
}

func runCoreDNSUpstreamTimeout(p *analyzer.Pass) error {
	s := p.Snap
	for _, le := range s.Logs {
		if upstreamLoopRe.MatchString(le.Message) {
			return nil // CoreDNS forwards to itself: the loop explains the timeouts
		}
	}
	var groups []*upstreamTimeouts
	byKey := map[string]*upstreamTimeouts{}
	for i := range s.Logs {
		le := &s.Logs[i]
		if le.Fields["plugin"] != "errors" && le.Source != "coredns" && !strings.HasPrefix(le.Message, "2 ") {
			continue
		}
		m := corednsTimeoutRe.FindStringSubmatch(strings.TrimSpace(le.Message))
		if m == nil {
			continue
		}
		up, err := netip.ParseAddrPort(m[3] + m[4])
		if err != nil || up.Addr().IsLoopback() || clusterDNSAddr(s, up.Addr()) {
			continue // a loopback or the cluster DNS itself: a loop, not an upstream
		}
		k := le.Node + "|" + up.String()
		g := byKey[k]
		if g == nil {
			g = &upstreamTimeouts{node: le.Node, upstream: up}
			byKey[k] = g
			groups = append(groups, g)
		}
		if m[2] == "HINFO" && loopProbeNameRe.MatchString(m[1]) {
			g.probes = append(g.probes, le)
			continue
		}
		g.queries = append(g.queries, le)
		if len(g.names) < 3 && !slices.Contains(g.names, m[1]+" "+m[2]) {
			g.names = append(g.names, m[1]+" "+m[2])
		}
	}
	for _, g := range groups {
		if len(g.queries) < 2 {
			continue // the loop probes alone, or one lost query
		}
		c, ev := judgeUpstreamTimeouts(s, g, len(groups))
		f := withFinding(c, upstreamTimeoutWords(g))
		f.Evidence = dedupEvidence(append(f.Evidence, ev...))
		p.Report(f)
	}
	return nil
}

// clusterDNSAddr reports whether a is the ClusterIP of the cluster DNS
// Service (kube-dns) in the bundle.
func clusterDNSAddr(s *model.Snapshot, a netip.Addr) bool {
	for _, svc := range s.Kube.Services {
		if svc.Name == "kube-dns" || svc.Name == "coredns" || svc.Labels["k8s-app"] == "kube-dns" {
			if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil && ip == a {
				return true
			}
		}
	}
	return false
}

// judgeUpstreamTimeouts judges one upstream's timeouts: CoreDNS's own lines
// name the upstream that does not answer (likely); why is not shown, and a
// dig from the node decides. groups is the number of upstreams (and nodes)
// with timeouts: several point at the way out rather than at one resolver.
// It returns the evidence it joins (the resolv.conf line naming the
// upstream).
func judgeUpstreamTimeouts(s *model.Snapshot, g *upstreamTimeouts, groups int) (analyzer.Finding, []analyzer.Evidence) {
	var ev []analyzer.Evidence
	first := g.queries[0]
	f := analyzer.Finding{
		Certainty: analyzer.Likely,
		Severity:  analyzer.Warning,
		Supports: []string{fmt.Sprintf("%s: CoreDNS's forwarded query timed out at %s (%s); %d forwarded queries "+
			"to it timed out in all", first.Pos, g.upstream, strings.TrimSpace(first.Message), len(g.queries))},
		Alternatives: []string{
			fmt.Sprintf("%s answers, but a firewall or security group between the Pod network (or the node's SNAT "+
				"address) and it drops the queries or the answers", g.upstream.Addr()),
			fmt.Sprintf("%s serves only some clients or zones and ignores the rest", g.upstream.Addr()),
		},
		Decide: fmt.Sprintf("# from the node where the CoreDNS Pod runs, and from the CoreDNS Pod: no answer is the "+
			"upstream or the way to it; an answer from the node only, the Pod network's way out\n"+
			"dig @%s -p %d example.com", g.upstream.Addr(), g.upstream.Port()),
	}
	if groups > 1 {
		f.Alternatives = append([]string{"every upstream times out: the way out of the node or the Pod network " +
			"(IPv4 forwarding, masquerading, a firewall) rather than one resolver"}, f.Alternatives...)
	}
	if len(g.probes) > 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("the loop plugin's HINFO probes to %s timed out too (%d)",
			g.upstream, len(g.probes)))
	}
	for _, rc := range s.ResolvConfs {
		if rc.Node != g.node && rc.Node != "" {
			continue
		}
		for _, n := range rc.Nameservers {
			if n.Addr == g.upstream.Addr() {
				f.Supports = append(f.Supports, fmt.Sprintf("%s: the node's resolv.conf names %s, the upstream CoreDNS "+
					"forwards to with forward . /etc/resolv.conf", n.Pos, n.Addr))
				ev = append(ev, analyzer.Evidence{Pos: n.Pos, Note: "nameserver " + n.Addr.String()})
			}
		}
	}
	return f, ev
}

// upstreamTimeoutWords words the finding of g.
func upstreamTimeoutWords(g *upstreamTimeouts) analyzer.Finding {
	where := ""
	if g.node != "" {
		where = " on " + g.node
	}
	var ev []analyzer.Evidence
	for i, le := range g.queries {
		if i < maxGroupEvidence-1 || i == len(g.queries)-1 {
			ev = append(ev, analyzer.Evidence{Pos: le.Pos, Note: "CoreDNS: forwarded query timed out at " + g.upstream.String()})
		}
	}
	facts := map[string]any{"upstream": g.upstream.String(), "timeouts": len(g.queries)}
	if len(g.probes) > 0 {
		facts["loop_probe_timeouts"] = len(g.probes)
	}
	if len(g.names) > 0 {
		facts["queries"] = strings.Join(g.names, ", ")
	}
	return analyzer.Finding{
		Subject: subject("node", g.node, "address", g.upstream.Addr().String()),
		Title:   fmt.Sprintf("CoreDNS%s gets no answer from its upstream %s", where, g.upstream),
		Summary: fmt.Sprintf("CoreDNS%s logs %d forwarded queries (%s) that timed out at the upstream resolver %s: "+
			"lookups of names outside the cluster that it forwards there fail or wait for the retry, while the "+
			"cluster's own names resolve.", where, len(g.queries), strings.Join(g.names, ", "), g.upstream),
		Cause: fmt.Sprintf("The upstream %s does not answer CoreDNS: it is down or unreachable from the Pod network, a "+
			"firewall drops the queries or the answers, or it ignores these clients (a dead nameserver in the node's "+
			"resolv.conf, which CoreDNS forwards to).", g.upstream.Addr()),
		Fix: "Make the upstream reachable from the Pod network (UDP and TCP 53 allowed from the nodes' addresses), or " +
			"forward to resolvers that answer: remove the dead nameserver from the resolv.conf CoreDNS inherits, or " +
			"list working upstreams in the Corefile's forward line; then check with dig from a Pod.",
		Facts:    facts,
		Evidence: dedupEvidence(ev),
	}
}
