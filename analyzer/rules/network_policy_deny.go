package rules

import (
	"fmt"
	"github.com/netmortem/netmortem/internal/shq"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// NetworkPolicyDeny finds failed connections between Pods that the
// NetworkPolicies in the bundle do not allow, and the dataplane's policy
// drops that they do.
var NetworkPolicyDeny = &analyzer.Rule{
	Name:     "network-policy-deny",
	Severity: analyzer.Error,
	NeedsAny: []model.Kind{model.KindCapture, model.KindLogs},
	Uses:     []model.Kind{model.KindKube},
	Requires: []analyzer.FactKey{facts.FailedAttempts, facts.NetPolicies, facts.PolicyDrops, facts.ServiceTranslations,
		facts.HubblePolicyDrops},
	Proof: "the NetworkPolicies (kubectl get networkpolicies, with the Pods and Namespaces and their labels) " +
		"isolate the server Pod for ingress, or the client Pod for egress, with no rule that admits the client on " +
		"that port, and a second source shows those connections fail: the capture's failed attempts (unanswered " +
		"or refused) to the Pod's address or to a Service frontend translated to it (the Service's Endpoints or " +
		"EndpointSlices, or a node's NAT rules, say to which), or the dataplane's policy drops of the same client, " +
		"address and port " +
		"(cilium monitor's \"Policy denied\" drops, the kernel's lines of Calico's calico-drop LOG rules)",
	Unproven: "when the objects leave the verdict open (a namespace's labels not shown, a client address that " +
		"no listed Pod has), the rule reports the policy that isolates the Pod and the rule that would allow " +
		"the connection as likely, naming the kubectl command that decides; when cilium monitor drops a " +
		"connection as policy-denied (or Calico logs it as calico-drop) that the NetworkPolicies admit, it reports " +
		"that contradiction as a warning of unknown cause (a Cilium or Calico policy not in the bundle, a changed " +
		"policy, a stale identity) with the " +
		"command that decides; a policy-denied drop line whose destination no listed Pod has (or of a bundle " +
		"without Pods) names a policy as the likely cause, from the dataplane's own word, with the command that " +
		"lists the policies; when the policies allow failed connections and no drop line names them, or the " +
		"bundle has no policies, the rule is silent and syn-unanswered reports the symptom",
	SubjectKeys: []string{"client", "address", "object"},
	ObjectKinds: []string{"Pod"},
	Run:         runNetworkPolicyDeny,
	Symptoms:    []analyzer.SymptomRef{ProbesTimeOut.At(50), ServiceUnreachable.At(150), DNSTimeouts.At(40), ConnectionsTimeOut.At(20)},
	Decide: "# a policy that selects the server's Pod and allows no rule matching the client and port\n" +
		"kubectl get networkpolicies -A -o yaml",
	Doc: `the NetworkPolicies do not allow connections that fail

A NetworkPolicy that selects a Pod isolates it: for ingress, only what
one of the policies selecting it allows may reach it; for egress, only
what they allow may leave it. The policies are a union: a connection
passes when any rule of any policy selecting the Pod admits it, both at
the client's side (egress) and at the server's (ingress). A rule admits
by its peers (podSelector in the policy's namespace, namespaceSelector
on the namespaces' labels, both together, or ipBlock with except) and by
its ports (numbers, ranges with endPort, or names resolved against the
server Pod's container ports); a rule without peers or ports admits
every one. Dataplanes drop what is not admitted (Cilium, Calico by
default) or reject it, so clients see connect timeouts or refusals.

Evidence: the capture's unanswered or refused attempts to a Pod's
address, or to a Service's ClusterIP (or LoadBalancer or external IP)
whose endpoints are Pods: the dataplane enforces the policies after the
Service translation, so they are judged on the endpoints' addresses and
ports (from the Endpoints or EndpointSlices, or a node's NAT rules),
and reported when they deny the client every endpoint; cilium monitor's
drop lines ("xx drop (Policy denied) ... 10.0.1.164:46870 ->
10.0.1.225:80 tcp SYN") and the kernel's lines of the LOG rules Calico's Felix puts before its DROP rules ("calico-drop:
IN=... SRC=... DST=... PROTO=TCP SPT=... DPT=..."), which name the
client and the server's address and port; the Pods, Namespaces and
NetworkPolicies (kubectl get pods,namespaces,networkpolicies -A -o
json): which policies select the server Pod (and the client Pod), which
rule comes closest to admitting the connection and why it does not.

Severity: error when the objects decide that no rule admits the failed
or dropped connections (proven by the objects and the capture or the
drop lines); warning when what the objects do not show (a namespace's
labels, the Pod behind a client address) could change the verdict, and
when Cilium or Calico drops as policy-denied a connection the
NetworkPolicies admit (the policy that denies it is not in the bundle).
Drop lines without a protocol (a CI's monitor.log) or a port are not
judged. Failed
connections the policies allow, without a drop line, are not judged
here.

Fix: add the client to the rule that comes closest (the label its
namespaceSelector or podSelector expects, or the port), or add a policy
that admits it; if the connection should not happen, fix the client.`,
}

// policyPair is one client address and server endpoint the policies judge.
type policyPair struct {
	client netip.Addr
	server netip.AddrPort
}

// policySymptom is what shows that connections of a pair fail: the
// capture's failed attempts, or the dataplane's policy drops alone.
type policySymptom struct {
	server   netip.AddrPort
	proto    corev1.Protocol
	summary  string // "2 connection attempts from C to S (Pod P) got no answer"
	facts    map[string]any
	evidence []analyzer.Evidence
	supports []string
	when     string // whose times date the failures: "the capture's time"
}

func runNetworkPolicyDeny(p *analyzer.Pass) error {
	pol := facts.NetPolicies.Of(p)
	hubbleDropsAlone(p)
	drops := facts.PolicyDrops.Of(p)
	done := map[policyPair]bool{}
	admitted := map[policyPair]*facts.FailGroup{} // failures the policies admit
	fails := facts.FailedAttempts.Of(p)
	for _, outcome := range []model.Outcome{model.OutcomeUnanswered, model.OutcomeRefused} {
		if !pol.Any() {
			break
		}
		for _, g := range fails.Of(outcome) {
			if g.Server.Port() == 0 || (outcome == model.OutcomeUnanswered && g.N == 1 && g.Retx == 0) {
				continue
			}
			server := pol.Pod(g.Server.Addr())
			if server == nil {
				policyThroughService(p, pol, g, outcome, drops, done)
				continue
			}
			for _, c := range g.Clients {
				ca, err := netip.ParseAddr(c)
				if err != nil {
					continue
				}
				pair := policyPair{ca, g.Server}
				client := pol.Pod(ca)
				in, out := policyDecisions(pol, server, client, ca, g.Server, corev1.ProtocolTCP)
				if !in.Denied() && !out.Denied() {
					if admitted[pair] == nil {
						admitted[pair] = g
					}
					continue
				}
				done[pair] = true
				sym := captureSymptom(g, outcome, ca, server, client)
				p.Report(policyFinding(sym, server, ca, client, in, out, pol, drops.Of(ca, g.Server)))
			}
		}
	}
	// The dataplane's policy drops of pairs no failed attempt showed.
	for _, d := range drops.Drops {
		pair := policyPair{d.Client.Addr(), d.Server}
		proto := corev1.Protocol(d.Proto)
		if done[pair] || d.Server.Port() == 0 || (proto != corev1.ProtocolTCP && proto != corev1.ProtocolUDP &&
			proto != corev1.ProtocolSCTP) {
			continue
		}
		done[pair] = true
		server, client := pol.Pod(d.Server.Addr()), pol.Pod(pair.client)
		if server == nil && (client != nil || len(p.Snap.Kube.Pods) == 0) {
			// The destination is no listed Pod (a Service's backend the
			// bundle does not list, or no Pods at all): the drop line alone.
			p.Report(policyDropAlone(ciliumDropsAlone(drops.Of(pair.client, d.Server), proto, client)))
			continue
		}
		if server == nil || client == nil || !pol.Any() {
			continue // the objects cannot judge both ends, or drops of other Pods
		}
		in, out := policyDecisions(pol, server, client, pair.client, d.Server, proto)
		pd := drops.Of(pair.client, d.Server)
		if in.Denied() || out.Denied() {
			p.Report(policyFinding(dropSymptom(pd, proto, server, client), server, pair.client, client, in, out, pol, pd))
			continue
		}
		p.Report(policyDropAdmitted(pd, proto, server, client, in, out, admitted[pair]))
	}
	return nil
}

// policyThroughService judges the failed attempts of g, whose server is
// a Service frontend translated to Pods, on the endpoints (see
// facts.PolicyIndex.DeniedEndpoints); done records the pairs reported.
func policyThroughService(p *analyzer.Pass, pol *facts.PolicyIndex, g *facts.FailGroup, outcome model.Outcome,
	drops *facts.PolicyDropIndex, done map[policyPair]bool) {
	tr := facts.ServiceTranslations.Of(p).Of(corev1.ProtocolTCP, g.Server)
	for _, c := range g.Clients {
		ca, err := netip.ParseAddr(c)
		if tr == nil || err != nil {
			continue
		}
		client := pol.Pod(ca)
		denied := pol.DeniedEndpoints(tr, client, ca, corev1.ProtocolTCP)
		if len(denied) == 0 {
			continue
		}
		for _, d := range denied {
			done[policyPair{ca, d.Endpoint.Addr}] = true
		}
		d := denied[0]
		sym := captureSymptom(g, outcome, ca, d.Server, client)
		sym.server, sym.summary = d.Endpoint.Addr, strings.Replace(sym.summary, "(Pod ", fmt.Sprintf("(%s, translated to "+
			"%s of Pod ", tr.Named(), d.Endpoint.Addr), 1)
		sym.facts["translated_from"], sym.facts["service"], sym.facts["endpoints_denied"] = g.Server.String(), tr.Service, len(denied)
		sym.supports = append(sym.supports, fmt.Sprintf("%s; the policies apply after that translation, and deny the "+
			"client %s", tr.Goes(), tr.Each()))
		sym.evidence = append(sym.evidence, analyzer.Evidence{Pos: tr.Pos, Note: tr.Goes()},
			analyzer.Evidence{Pos: d.Endpoint.Pos, Note: "endpoint " + d.Endpoint.Addr.String()})
		f := policyFinding(sym, d.Server, ca, client, d.In, d.Out, pol, drops.Of(ca, d.Endpoint.Addr))
		f.Contradicts = append(f.Contradicts, "an endpoint of "+g.Server.String()+" that the policies admit, listed "+
			"nowhere in the bundle (the endpoints changed between the failures and the listing)")
		p.Report(f)
	}
}

// policyDecisions judges ingress to server and, when the client is a Pod,
// egress from it.
func policyDecisions(pol *facts.PolicyIndex, server, client *model.Pod, ca netip.Addr, srv netip.AddrPort,
	proto corev1.Protocol) (in, out facts.PolicyDecision) {
	in = pol.Ingress(server, ca, proto, srv.Port())
	if client != nil {
		out = pol.Egress(client, srv.Addr(), proto, srv.Port())
	}
	return in, out
}

// podName names a Pod as namespace/name.
func podName(pod *model.Pod) string { return pod.Namespace + "/" + pod.Name }

// clientName names a client by its Pod and address, or its address.
func clientName(ca netip.Addr, client *model.Pod) string {
	if client == nil {
		return ca.String()
	}
	return podName(client) + " (" + ca.String() + ")"
}

// captureSymptom is the capture's failed attempts of client ca in g.
func captureSymptom(g *facts.FailGroup, outcome model.Outcome, ca netip.Addr, server, client *model.Pod) policySymptom {
	failed := "got no answer"
	if outcome == model.OutcomeRefused {
		failed = "were refused"
	}
	sym := policySymptom{server: g.Server, proto: corev1.ProtocolTCP,
		summary: fmt.Sprintf("%d connection %s from %s to %s (Pod %s) %s", g.N, plural(g.N, "attempt", "attempts"),
			clientName(ca, client), g.Server, podName(server), failed),
		facts: map[string]any{"attempts": g.N, "outcome": string(outcome)},
		supports: []string{fmt.Sprintf("the capture shows %d connection %s to %s that %s", g.N,
			plural(g.N, "attempt", "attempts"), g.Server, failed)},
		when: "the capture's time",
	}
	n := 0
	for _, a := range g.Attempts {
		if a.Client.Addr() != ca || n == maxGroupEvidence {
			continue
		}
		sym.evidence = append(sym.evidence, failedSegEvidence(a, false)...)
		n++
	}
	return sym
}

// dropSymptom is the dataplane's policy drops of one pair, alone.
func dropSymptom(drops []facts.PolicyDrop, proto corev1.Protocol, server, client *model.Pod) policySymptom {
	d := drops[0]
	return policySymptom{server: d.Server, proto: proto,
		summary: fmt.Sprintf("%s shows %d %s %s from %s to %s (Pod %s) dropped as %q", d.Teller(), len(drops), proto,
			plural(len(drops), "packet", "packets"), clientName(d.Client.Addr(), client), d.Server, podName(server), d.Reason),
		facts: map[string]any{"drops": len(drops), "outcome": "dropped"},
		when:  "the drop lines' times",
	}
}

// dropSupport words the dataplane's policy drops of a pair and points at
// their lines.
func dropSupport(drops []facts.PolicyDrop) (string, []analyzer.Evidence) {
	var ev []analyzer.Evidence
	for i, d := range drops {
		if i == maxGroupEvidence {
			break
		}
		ev = append(ev, analyzer.Evidence{Pos: d.Event.Pos, Note: fmt.Sprintf("%s: drop (%s) %s -> %s %s",
			d.Teller(), d.Reason, d.Client, d.Server, strings.ToLower(d.Proto))})
	}
	d := drops[0]
	return fmt.Sprintf("%s shows %d %s from %s to %s dropped with reason %q (%s)", d.Teller(), len(drops),
		plural(len(drops), "packet", "packets"), d.Client.Addr(), d.Server, d.Reason, d.Event.Pos), ev
}

// policyFinding reports connections from client to the Pod server that the
// policies deny in one direction or both; drops are the dataplane's policy
// drops of the same pair, when its logs show them.
func policyFinding(sym policySymptom, server *model.Pod, ca netip.Addr, client *model.Pod,
	in, out facts.PolicyDecision, pol *facts.PolicyIndex, drops []facts.PolicyDrop) analyzer.Finding {
	d := &policyDenial{summary: sym.summary, client: clientName(ca, client), server: podName(server), port: sym.server.Port()}
	f := judgePolicyDenial(d, sym, server, ca, client, in, out, pol, drops)
	f.Title, f.Summary, f.Cause, f.Fix = policyWords(d)
	return f
}

// policyDenial is the judgement of connections the NetworkPolicies deny
// (judgePolicyDenial): which policies isolate each end, the rule that comes
// closest, what the objects do not show. policyWords words it.
type policyDenial struct {
	summary        string // the symptom's
	client, server string // the client and the server Pod, named
	port           uint16
	says           []string // per direction: the policies that isolate it and admit nothing
	near           []string // the rules that come closest, and why they do not admit
	unknown        []string // what the objects do not show that could change the decision
}

// judgePolicyDenial judges d, the symptom sym of connections from ca
// (client, when a Pod) to server, from the policies' decisions in and out
// and the CNI's drops. It fills in d and returns the finding without its
// words.
func judgePolicyDenial(d *policyDenial, sym policySymptom, server *model.Pod, ca netip.Addr, client *model.Pod,
	in, out facts.PolicyDecision, pol *facts.PolicyIndex, drops []facts.PolicyDrop) analyzer.Finding {
	srvName, cliName, port := d.server, d.client, d.port
	f := analyzer.Finding{
		Subject: subject("client", ca.String(), "address", sym.server.String(),
			"object", object("Pod", server.Namespace, server.Name)),
		Severity: analyzer.Warning,
		Facts:    map[string]any{"server": sym.server.String(), "server_pod": srvName, "client": cliName},
		Evidence: sym.evidence,
		Supports: sym.supports,
	}
	for k, v := range sym.facts {
		f.Facts[k] = v
	}
	if len(drops) > 0 {
		sup, ev := dropSupport(drops)
		f.Supports = append(f.Supports, sup)
		f.Evidence = append(f.Evidence, ev...)
		f.Facts["drop_reason"] = drops[0].Reason
	}
	f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: server.Source.Pos, Note: fmt.Sprintf("Pod %s has %s", srvName, sym.server.Addr())})
	if client != nil {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: client.Source.Pos, Note: fmt.Sprintf("Pod %s/%s has %s",
			client.Namespace, client.Name, ca)})
	}
	var says, unknown []string
	var near []string
	for _, dd := range []struct {
		dir, subject string
		v            facts.PolicyDecision
	}{{"ingress", srvName, in}, {"egress", cliName, out}} {
		if !dd.v.Denied() {
			continue
		}
		names := facts.PolicyNames(dd.v.Isolating)
		f.Facts[dd.dir+"_isolated_by"] = strings.Join(names, ", ")
		for _, ip := range dd.v.Isolating {
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: ip.Source.Pos,
				Note: fmt.Sprintf("selects %s (podSelector %s)", dd.subject, facts.SelectorString(&ip.Spec.PodSelector))})
		}
		f.Supports = append(f.Supports, fmt.Sprintf("%s %s %s %s and %s it for %s; no %s rule of %s admits %s on %s %d",
			plural(len(names), "NetworkPolicy", "NetworkPolicies"), strings.Join(names, ", "),
			plural(len(names), "selects", "select"), dd.subject, plural(len(names), "isolates", "isolate"), dd.dir, dd.dir,
			plural(len(names), "it", "them"), cliName, sym.proto, port))
		says = append(says, fmt.Sprintf("%s isolate %s for %s and none of their rules admits it", strings.Join(names, ", "),
			dd.subject, dd.dir))
		for _, r := range dd.v.Near {
			pos := r.Pos(dd.dir)
			name := fmt.Sprintf("%s/%s %s[%d]", r.Policy.Namespace, r.Policy.Name, dd.dir, r.Index)
			near = append(near, fmt.Sprintf("%s does not admit it: %s", name, r.Why))
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: pos, Note: name + ": " + r.Why})
		}
		unknown = append(unknown, dd.v.Unknown...)
	}
	if len(near) > 0 {
		f.Facts["nearest_rule"] = near[0]
		f.Supports = append(f.Supports, near...)
	}
	if client != nil {
		if ns := pol.Namespace(client.Namespace); ns != nil {
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: ns.Source.Pos, Note: "labels of namespace " + ns.Name})
		}
	}
	f.Evidence = dedupEvidence(f.Evidence)
	f.Contradicts = []string{
		"a NetworkPolicy created or changed between the failures and the listing of the objects (compare their " +
			"creationTimestamp and generation with " + sym.when + ")",
	}
	if len(drops) == 0 {
		f.Contradicts = append(f.Contradicts,
			"a CNI that does not enforce NetworkPolicies (flannel alone): the policies then drop nothing")
	}
	d.says, d.near, d.unknown = says, near, unknown
	if len(unknown) == 0 {
		f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
	} else {
		f.Certainty = analyzer.Likely
		f.Contradicts = append(f.Contradicts, "that "+unknown[0]+" would make a rule match")
		f.Alternatives = []string{
			"the NetworkPolicies deny the connection",
			"a rule admits it through what the objects do not show, and the SYNs are lost elsewhere (a firewall, the Pod not listening)",
		}
		f.Decide = fmt.Sprintf("kubectl get pods -A -o wide --show-labels | grep -w %s", shq.Quote(fmt.Sprint(ca)))
		if client != nil && pol.Namespace(client.Namespace) == nil {
			f.Decide = "kubectl get namespace " + shq.Quote(client.Namespace) + " --show-labels"
		}
	}
	return f
}

// policyWords words the finding of d, as judgePolicyDenial judged it.
func policyWords(d *policyDenial) (title, summary, cause, fix string) {
	says := strings.Join(d.says, "; ")
	summary = fmt.Sprintf("%s. %s.", d.summary, says)
	if len(d.near) > 0 {
		summary += " The rule that comes closest: " + d.near[0] + "."
	}
	if len(d.unknown) == 0 {
		title = fmt.Sprintf("NetworkPolicy denies %s -> %s:%d", d.client, d.server, d.port)
		cause = fmt.Sprintf("No NetworkPolicy rule admits these connections: %s. The dataplane drops (or rejects) "+
			"what no rule admits.", says)
	} else {
		title = fmt.Sprintf("NetworkPolicy likely denies %s -> %s:%d", d.client, d.server, d.port)
		cause = fmt.Sprintf("Most likely no NetworkPolicy rule admits these connections (%s), but the objects do "+
			"not show %s.", says, strings.Join(d.unknown, ", "))
	}
	fix = fmt.Sprintf("If %s should reach %s on port %d, extend the nearest rule (the labels its selectors expect, "+
		"or the port) or add a policy that admits it; otherwise fix the client.", d.client, d.server, d.port)
	return title, summary, cause, fix
}

// policyDropAdmitted words the dataplane's policy drops of a pair that
// the NetworkPolicies in the bundle admit: the symptom, with what denied
// it left open. g, when not nil, holds the capture's failed attempts of the
// same pair.
func policyDropAdmitted(drops []facts.PolicyDrop, proto corev1.Protocol, server, client *model.Pod,
	in, out facts.PolicyDecision, g *facts.FailGroup) analyzer.Finding {
	d := drops[0]
	ca, srv := d.Client.Addr(), d.Server
	cliName, srvName := clientName(ca, client), podName(server)
	sup, ev := dropSupport(drops)
	f := analyzer.Finding{
		Subject: subject("client", ca.String(), "address", srv.String(),
			"object", object("Pod", server.Namespace, server.Name)),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Unknown,
		Title: fmt.Sprintf("%s drops %s -> %s:%d as policy-denied, but the NetworkPolicies admit it", d.Dataplane, cliName,
			srvName, srv.Port()),
		Facts: map[string]any{"server": srv.String(), "server_pod": srvName, "client": cliName, "drops": len(drops),
			"drop_reason": d.Reason, "outcome": "dropped"},
		Supports: []string{sup},
		Evidence: ev,
	}
	if g != nil {
		f.Supports = append(f.Supports, fmt.Sprintf("the capture shows %d connection %s to %s that failed", g.N,
			plural(g.N, "attempt", "attempts"), g.Server))
		n := 0
		for _, a := range g.Attempts {
			if a.Client.Addr() == ca && n < maxGroupEvidence {
				f.Evidence = append(f.Evidence, failedSegEvidence(a, false)...)
				n++
			}
		}
	}
	f.Evidence = append(f.Evidence,
		analyzer.Evidence{Pos: server.Source.Pos, Note: fmt.Sprintf("Pod %s has %s", srvName, srv.Addr())},
		analyzer.Evidence{Pos: client.Source.Pos, Note: fmt.Sprintf("Pod %s has %s", podName(client), ca)})
	for _, dv := range []struct {
		dir, subject string
		v            facts.PolicyDecision
	}{{"ingress", srvName, in}, {"egress", cliName, out}} {
		if r := dv.v.AllowedBy; r != nil {
			name := fmt.Sprintf("%s/%s %s[%d]", r.Policy.Namespace, r.Policy.Name, dv.dir, r.Index)
			f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s admits %s to %s on %s %d", name, cliName, srvName, proto, srv.Port()))
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: r.Pos(dv.dir), Note: name + " admits it"})
		} else if len(dv.v.Isolating) == 0 {
			f.Contradicts = append(f.Contradicts, fmt.Sprintf("no NetworkPolicy selects %s for %s", dv.subject, dv.dir))
		}
	}
	f.Evidence = dedupEvidence(f.Evidence)
	f.Summary = fmt.Sprintf("%s shows %d %s %s from %s to %s (Pod %s) dropped as %q, yet the NetworkPolicies "+
		"in the bundle admit that connection.", d.Teller(), len(drops), proto, plural(len(drops), "packet", "packets"),
		cliName, srv, srvName, d.Reason)
	f.Cause = d.Dataplane + " says a policy denied these packets, but no NetworkPolicy in the bundle denies them: what " +
		"denied them is not among the objects."
	stale := "a NetworkPolicy changed between the drops and the listing of the objects"
	if d.Dataplane == "Calico" {
		f.Alternatives = []string{
			"a Calico NetworkPolicy or GlobalNetworkPolicy (projectcalico.org, which kubectl get networkpolicies does not list) denies it",
			stale,
			"another of Felix's calico-drop rules dropped it: the source MAC check, or no profile matched the endpoint",
		}
		f.Decide = "calicoctl get networkpolicy,globalnetworkpolicy -A -o yaml"
		f.Fix = "Find the Calico policy that denies the client (calicoctl get networkpolicy,globalnetworkpolicy -A) and " +
			"admit it there, or list the objects again if they changed."
		return f
	}
	f.Alternatives = []string{
		"a CiliumNetworkPolicy or CiliumClusterwideNetworkPolicy (which kubectl get networkpolicies does not list) denies it",
		stale,
		"Cilium's identity for " + ca.String() + " is stale (labels changed, identity not yet propagated), so the " +
			"policy is computed for other labels",
	}
	f.Decide = "kubectl get ciliumnetworkpolicies,ciliumclusterwidenetworkpolicies -A -o yaml"
	f.Fix = "Find the policy that Cilium enforces for " + srvName + " (cilium endpoint list, then cilium endpoint " +
		"get <id>) and admit the client there, or list the objects again if they changed."
	return f
}

// droppedAlone is a pair's policy drops that the objects cannot judge:
// the destination is no listed Pod.
type droppedAlone struct {
	dataplane, teller, reason string
	client, server, host      string // the client and the destination as the lines name them; its host part
	port                      string
	proto                     string
	n                         int
	support                   string
	evidence                  []analyzer.Evidence
}

// ciliumDropsAlone is drops of one pair (cilium monitor's or Calico's).
func ciliumDropsAlone(drops []facts.PolicyDrop, proto corev1.Protocol, client *model.Pod) droppedAlone {
	d := drops[0]
	sup, ev := dropSupport(drops)
	if client != nil {
		ev = append(ev, analyzer.Evidence{Pos: client.Source.Pos, Note: fmt.Sprintf("Pod %s has %s", podName(client), d.Client.Addr())})
	}
	return droppedAlone{dataplane: d.Dataplane, teller: d.Teller(), reason: d.Reason,
		client: clientName(d.Client.Addr(), client), server: d.Server.String(), host: d.Server.Addr().String(),
		port: fmt.Sprint(d.Server.Port()), proto: string(proto), n: len(drops), support: sup, evidence: ev}
}

// policyDropAlone reports the dataplane's policy drops of a pair whose
// destination the objects do not list: the dataplane's own word that a
// policy denied the packets, without the policies that would say which.
func policyDropAlone(d droppedAlone) analyzer.Finding {
	f := analyzer.Finding{
		Subject:   subject("client", d.client, "address", d.server),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title: fmt.Sprintf("%s drops %s -> %s (%s) as policy-denied: a policy likely denies it", d.dataplane, d.client,
			d.server, d.proto),
		Facts: map[string]any{"server": d.server, "client": d.client, "drops": d.n, "drop_reason": d.reason,
			"outcome": "dropped", "protocol": d.proto},
		Supports: []string{d.support, "no Pod listed in the bundle is " + d.host},
		Evidence: dedupEvidence(d.evidence),
		Contradicts: []string{fmt.Sprintf("a policy selecting %s (egress) or %s (ingress) that admits %s %s",
			d.client, d.host, d.proto, d.port)},
	}
	f.Summary = fmt.Sprintf("%s shows %d %s %s from %s to %s dropped as %q; the bundle lists neither the Pod %s "+
		"nor the policies that apply.", d.teller, d.n, d.proto, plural(d.n, "packet", "packets"), d.client, d.server,
		d.reason, d.host)
	f.Cause = fmt.Sprintf("Most likely a policy denies %s %s to %s: an egress policy of %s, or an ingress policy "+
		"of %s, has no rule that admits it (a Pod selected by any egress policy may send only what one admits, DNS "+
		"included). The dataplane matches ports after Service translation: a rule that admits a Service's port "+
		"does not admit its backend's port %s when the two differ.", d.proto, d.port, d.host, d.client, d.host, d.port)
	if d.dataplane == "Calico" {
		f.Alternatives = []string{"a Calico NetworkPolicy or GlobalNetworkPolicy that denies it",
			"a Kubernetes NetworkPolicy of the client or the server that admits no rule for it"}
		f.Decide = "calicoctl get networkpolicy,globalnetworkpolicy -A -o yaml; kubectl get networkpolicies -A -o yaml"
	} else {
		f.Alternatives = []string{"an egress policy of the client (CiliumNetworkPolicy or NetworkPolicy) that admits " +
			"another port or peer", "an ingress policy of the destination's Pod that does not admit the client"}
		f.Decide = "kubectl get ciliumnetworkpolicies,ciliumclusterwidenetworkpolicies,networkpolicies -A -o yaml"
	}
	f.Fix = fmt.Sprintf("Find the policy that selects %s (or %s) and admit %s %s there: the backend's port, not "+
		"only the Service's.", d.client, d.host, d.proto, d.port)
	return f
}

// hubbleDropsAlone reports hubble observe's policy drops whose destination
// is no listed Pod, per pair of endpoints as hubble names them.
func hubbleDropsAlone(p *analyzer.Pass) {
	s := p.Snap
	listed := func(name string) bool {
		name = strings.TrimSuffix(name, ":"+facts.HubblePort(name))
		for _, pod := range s.Kube.Pods {
			if podName(&pod) == name || (pod.Status.PodIP != "" && pod.Status.PodIP == name) {
				return true
			}
		}
		return false
	}
	for _, hp := range facts.HubblePolicyDrops.Of(p) {
		k := [2]string{hp.Client, hp.Server}
		if listed(k[1]) || (len(s.Kube.Pods) > 0 && !listed(k[0])) {
			continue // the objects judge it, or drops of other Pods
		}
		les := hp.Lines
		d := droppedAlone{dataplane: "Cilium", teller: "hubble observe", reason: les[0].Fields["event"],
			client: k[0], server: k[1], host: strings.TrimSuffix(k[1], ":"+facts.HubblePort(k[1])), port: facts.HubblePort(k[1]),
			proto: strings.ToUpper(strings.Fields(les[0].Fields["summary"] + " ?")[0]), n: len(les)}
		d.support = fmt.Sprintf("hubble observe shows %d %s from %s to %s %s %q (%s)", d.n,
			plural(d.n, "flow", "flows"), d.client, d.server, les[0].Fields["verdict"], d.reason, les[0].Pos)
		for i, le := range les {
			if i < maxGroupEvidence {
				d.evidence = append(d.evidence, analyzer.Evidence{Pos: le.Pos, Note: fmt.Sprintf("hubble: %s %s %s %s %s",
					le.Fields["src"], le.Fields["direction"], le.Fields["dst"], d.reason, le.Fields["verdict"])})
			}
		}
		p.Report(policyDropAlone(d))
	}
}
