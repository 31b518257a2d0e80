package rules

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// NetworkPolicyDeny finds failed connections between Pods that the
// NetworkPolicies in the bundle do not allow.
var NetworkPolicyDeny = &analyzer.Rule{
	Name:     "network-policy-deny",
	Severity: analyzer.Error,
	Needs:    []model.Kind{model.KindCapture, model.KindKube},
	Requires: []analyzer.FactKey{facts.FailedAttempts, facts.NetPolicies},
	Proof: "the capture's failed attempts (unanswered or refused) go to a Pod's address, and the NetworkPolicies " +
		"(kubectl get networkpolicies, with the Pods and Namespaces and their labels) isolate that Pod for " +
		"ingress, or the client Pod for egress, with no rule that admits the client on that port",
	Unproven: "when the objects leave the verdict open (a namespace's labels not shown, a client address that " +
		"no listed Pod has), the rule reports the policy that isolates the Pod and the rule that would allow " +
		"the connection as likely, naming the kubectl command that decides; when the policies allow the " +
		"connection, or the bundle has none, the rule is silent and syn-unanswered reports the symptom",
	Run: runNetworkPolicyDeny,
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
address; the Pods, Namespaces and NetworkPolicies (kubectl get
pods,namespaces,networkpolicies -A -o json): which policies select the
server Pod (and the client Pod), which rule comes closest to admitting
the connection and why it does not.

Severity: error when the objects decide that no rule admits the failed
connections (proven by the capture and the objects); warning when what
the objects do not show (a namespace's labels, the Pod behind a client
address) could change the verdict. Connections the policies allow are
not judged here.

Fix: add the client to the rule that comes closest (the label its
namespaceSelector or podSelector expects, or the port), or add a policy
that admits it; if the connection should not happen, fix the client.`,
}

func runNetworkPolicyDeny(p *analyzer.Pass) error {
	pol := facts.NetPolicies.Of(p)
	if !pol.Any() {
		return nil
	}
	fails := facts.FailedAttempts.Of(p)
	for _, outcome := range []model.Outcome{model.OutcomeUnanswered, model.OutcomeRefused} {
		for _, g := range fails.Of(outcome) {
			if g.Server.Port() == 0 || (outcome == model.OutcomeUnanswered && g.N == 1 && g.Retx == 0) {
				continue
			}
			server := pol.Pod(g.Server.Addr())
			if server == nil {
				continue
			}
			for _, c := range g.Clients {
				ca, err := netip.ParseAddr(c)
				if err != nil {
					continue
				}
				in := pol.Ingress(server, ca, corev1.ProtocolTCP, g.Server.Port())
				var out facts.Verdict
				client := pol.Pod(ca)
				if client != nil {
					out = pol.Egress(client, g.Server.Addr(), corev1.ProtocolTCP, g.Server.Port())
				}
				if !in.Denied() && !out.Denied() {
					continue
				}
				p.Report(policyFinding(g, outcome, server, ca, client, in, out, pol))
			}
		}
	}
	return nil
}

// policyFinding words the finding of connections from client to the Pod
// server that the policies deny in one direction or both.
func policyFinding(g *facts.FailGroup, outcome model.Outcome, server *model.Pod, ca netip.Addr, client *model.Pod,
	in, out facts.Verdict, pol *facts.PolicyIndex) analyzer.Finding {
	srvName := server.Namespace + "/" + server.Name
	cliName := ca.String()
	if client != nil {
		cliName = client.Namespace + "/" + client.Name + " (" + ca.String() + ")"
	}
	failed := "got no answer"
	if outcome == model.OutcomeRefused {
		failed = "were refused"
	}
	f := analyzer.Finding{
		Severity: analyzer.Warning,
		Facts: map[string]any{"server": g.Server.String(), "server_pod": srvName, "client": cliName,
			"attempts": g.N, "outcome": string(outcome)},
		Sources: []model.Kind{model.KindCapture, model.KindKube},
	}
	// The attempts of this client.
	n := 0
	for _, a := range g.Attempts {
		if a.Client.Addr() != ca || n == maxGroupEvidence {
			continue
		}
		f.Evidence = append(f.Evidence, failedSegEvidence(a, false)...)
		n++
	}
	f.Supports = []string{fmt.Sprintf("the capture shows %d connection %s to %s that %s", g.N,
		plural(g.N, "attempt", "attempts"), g.Server, failed)}
	f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: server.Source.Pos, Note: fmt.Sprintf("Pod %s has %s", srvName, g.Server.Addr())})
	if client != nil {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: client.Source.Pos, Note: fmt.Sprintf("Pod %s/%s has %s",
			client.Namespace, client.Name, ca)})
	}
	var says, unknown []string
	var near []string
	for _, d := range []struct {
		dir, subject string
		v            facts.Verdict
	}{{"ingress", srvName, in}, {"egress", cliName, out}} {
		if !d.v.Denied() {
			continue
		}
		names := policyNames(d.v.Isolating)
		f.Facts[d.dir+"_isolated_by"] = strings.Join(names, ", ")
		for _, ip := range d.v.Isolating {
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: ip.Source.Pos,
				Note: fmt.Sprintf("selects %s (podSelector %s)", d.subject, facts.SelectorString(&ip.Spec.PodSelector))})
		}
		f.Supports = append(f.Supports, fmt.Sprintf("%s %s %s %s and %s it for %s; no %s rule of %s admits %s on TCP %d",
			plural(len(names), "NetworkPolicy", "NetworkPolicies"), strings.Join(names, ", "),
			plural(len(names), "selects", "select"), d.subject, plural(len(names), "isolates", "isolate"), d.dir, d.dir,
			plural(len(names), "it", "them"), cliName, g.Server.Port()))
		says = append(says, fmt.Sprintf("%s isolate %s for %s and none of their rules admits it", strings.Join(names, ", "),
			d.subject, d.dir))
		for _, r := range d.v.Near {
			pos := r.Pos(d.dir)
			name := fmt.Sprintf("%s/%s %s[%d]", r.Policy.Namespace, r.Policy.Name, d.dir, r.Index)
			near = append(near, fmt.Sprintf("%s does not admit it: %s", name, r.Why))
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: pos, Note: name + ": " + r.Why})
		}
		unknown = append(unknown, d.v.Unknown...)
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
			"creationTimestamp and generation with the capture's time)",
		"a CNI that does not enforce NetworkPolicies (flannel alone): the policies then drop nothing",
	}
	f.Summary = fmt.Sprintf("%d connection %s from %s to %s (Pod %s) %s. %s.", g.N, plural(g.N, "attempt", "attempts"),
		cliName, g.Server, srvName, failed, strings.Join(says, "; "))
	if len(near) > 0 {
		f.Summary += " The rule that comes closest: " + near[0] + "."
	}
	if len(unknown) == 0 {
		f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
		f.Title = fmt.Sprintf("NetworkPolicy denies %s -> %s:%d", cliName, srvName, g.Server.Port())
		f.Cause = fmt.Sprintf("No NetworkPolicy rule admits these connections: %s. The dataplane drops (or rejects) "+
			"what no rule admits.", strings.Join(says, "; "))
	} else {
		f.Certainty = analyzer.Likely
		f.Title = fmt.Sprintf("NetworkPolicy likely denies %s -> %s:%d", cliName, srvName, g.Server.Port())
		f.Cause = fmt.Sprintf("Most likely no NetworkPolicy rule admits these connections (%s), but the objects do "+
			"not show %s.", strings.Join(says, "; "), strings.Join(unknown, ", "))
		f.Contradicts = append(f.Contradicts, "that "+unknown[0]+" would make a rule match")
		f.Alternatives = []string{
			"the NetworkPolicies deny the connection",
			"a rule admits it through what the objects do not show, and the SYNs are lost elsewhere (a firewall, the Pod not listening)",
		}
		f.Decide = fmt.Sprintf("kubectl get pods -A -o wide --show-labels | grep -w %s", ca)
		if client != nil && pol.Namespace(client.Namespace) == nil {
			f.Decide = "kubectl get namespace " + client.Namespace + " --show-labels"
		}
	}
	f.Fix = fmt.Sprintf("If %s should reach %s on port %d, extend the nearest rule (the labels its selectors expect, "+
		"or the port) or add a policy that admits it; otherwise fix the client.", cliName, srvName, g.Server.Port())
	return f
}

// policyNames names policies as namespace/name.
func policyNames(ps []*model.NetworkPolicy) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Namespace + "/" + p.Name
	}
	return out
}
