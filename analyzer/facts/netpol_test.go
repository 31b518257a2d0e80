package facts_test

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/parse/kube"
)

// netpolObjects are Pods in two namespaces (a: 10.0.1.1 app=api with a
// container port "http" 8080; a: 10.0.1.2 app=client; b: 10.0.2.1
// app=client) and namespace b's object; namespace a has none. Each test
// adds its policies.
const netpolObjects = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: api, namespace: a, labels: {app: api}}
  spec:
    containers:
    - name: api
      ports: [{containerPort: 8080, name: http, protocol: TCP}]
  status: {podIP: 10.0.1.1, podIPs: [{ip: 10.0.1.1}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: client-a, namespace: a, labels: {app: client}}
  status: {podIP: 10.0.1.2}
- apiVersion: v1
  kind: Pod
  metadata: {name: client-b, namespace: b, labels: {app: client}}
  status: {podIP: 10.0.2.1}
- apiVersion: v1
  kind: Namespace
  metadata: {name: b, labels: {kubernetes.io/metadata.name: b, team: blue}}
`

func netpolIndex(t *testing.T, policies string) *facts.PolicyIndex {
	t.Helper()
	snap, err := kube.KubeObjects(strings.NewReader(netpolObjects+policies), "objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return facts.NetPolicies.Get(analyzer.NewFactSet(snap))
}

func TestNetPolicyEvaluation(t *testing.T) {
	pol := func(name, ns, spec string) string {
		return "- apiVersion: networking.k8s.io/v1\n  kind: NetworkPolicy\n  metadata: {name: " + name + ", namespace: " +
			ns + "}\n  spec:\n" + spec
	}
	denyAll := pol("deny", "a", "    podSelector: {}\n    policyTypes: [Ingress]\n")
	ip := netip.MustParseAddr
	for _, c := range []struct {
		name, policies string
		egress         bool // judge client-a's egress to the API instead of the API's ingress
		from           string
		port           uint16
		proto          corev1.Protocol
		denied         bool
		unknown        bool
	}{
		{name: "no policy: not isolated", from: "10.0.2.1", port: 8080},
		{name: "default deny", policies: denyAll, from: "10.0.1.2", port: 8080, denied: true},
		{name: "other pods are not isolated", policies: pol("deny", "a", "    podSelector: {matchLabels: {app: other}}\n"),
			from: "10.0.2.1", port: 8080},
		{name: "union: a podSelector rule admits its own namespace", from: "10.0.1.2", port: 8080,
			policies: denyAll + pol("allow", "a", "    podSelector: {matchLabels: {app: api}}\n    ingress:\n"+
				"    - from: [{podSelector: {matchLabels: {app: client}}}]\n")},
		{name: "a podSelector alone does not admit other namespaces", from: "10.0.2.1", port: 8080, denied: true,
			policies: denyAll + pol("allow", "a", "    podSelector: {}\n    ingress:\n"+
				"    - from: [{podSelector: {matchLabels: {app: client}}}]\n")},
		{name: "namespaceSelector and podSelector together", from: "10.0.2.1", port: 8080,
			policies: pol("allow", "a", "    podSelector: {}\n    ingress:\n"+
				"    - from: [{namespaceSelector: {matchLabels: {team: blue}}, podSelector: {matchLabels: {app: client}}}]\n")},
		{name: "namespaceSelector on a label the namespace lacks", from: "10.0.2.1", port: 8080, denied: true,
			policies: pol("allow", "a", "    podSelector: {}\n    ingress:\n"+
				"    - from: [{namespaceSelector: {matchLabels: {team: red}}}]\n")},
		{name: "namespace object missing: its name label still decides", from: "10.0.1.2", port: 8080,
			policies: pol("allow", "a", "    podSelector: {}\n    ingress:\n"+
				"    - from: [{namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [a]}]}}]\n")},
		{name: "namespace object missing: other labels are unknown", from: "10.0.1.2", port: 8080, denied: true, unknown: true,
			policies: pol("allow", "a", "    podSelector: {}\n    ingress:\n"+
				"    - from: [{namespaceSelector: {matchLabels: {team: blue}}}]\n")},
		{name: "named port", from: "10.0.2.1", port: 8080,
			policies: pol("allow", "a", "    podSelector: {}\n    ingress:\n    - ports: [{port: http}]\n")},
		{name: "named port is not another port", from: "10.0.2.1", port: 9090, denied: true,
			policies: pol("allow", "a", "    podSelector: {}\n    ingress:\n    - ports: [{port: http}]\n")},
		{name: "endPort range", from: "10.0.2.1", port: 8080,
			policies: pol("allow", "a", "    podSelector: {}\n    ingress:\n    - ports: [{port: 8000, endPort: 8100, protocol: TCP}]\n")},
		{name: "UDP port does not admit TCP", from: "10.0.2.1", port: 8080, denied: true,
			policies: pol("allow", "a", "    podSelector: {}\n    ingress:\n    - ports: [{port: 8080, protocol: UDP}]\n")},
		{name: "ipBlock", from: "192.168.3.4", port: 8080,
			policies: pol("allow", "a", "    podSelector: {}\n    ingress:\n"+
				"    - from: [{ipBlock: {cidr: 192.168.0.0/16, except: [192.168.9.0/24]}}]\n")},
		{name: "ipBlock except", from: "192.168.9.4", port: 8080, denied: true,
			policies: pol("allow", "a", "    podSelector: {}\n    ingress:\n"+
				"    - from: [{ipBlock: {cidr: 192.168.0.0/16, except: [192.168.9.0/24]}}]\n")},
		{name: "an address no Pod has is unknown to selectors", from: "10.0.9.9", port: 8080, denied: true, unknown: true,
			policies: pol("allow", "a", "    podSelector: {}\n    ingress:\n    - from: [{podSelector: {}}]\n")},
		{name: "an egress-only policy does not isolate ingress", from: "10.0.2.1", port: 8080,
			policies: pol("eg", "a", "    podSelector: {}\n    policyTypes: [Egress]\n")},
		{name: "egress rules without policyTypes isolate egress", egress: true, port: 8080, denied: true,
			policies: pol("eg", "a", "    podSelector: {matchLabels: {app: client}}\n    egress:\n    - ports: [{port: 53, protocol: UDP}]\n")},
		{name: "egress to a named port of the destination", egress: true, port: 8080,
			policies: pol("eg", "a", "    podSelector: {matchLabels: {app: client}}\n    policyTypes: [Egress]\n"+
				"    egress:\n    - to: [{podSelector: {matchLabels: {app: api}}}]\n      ports: [{port: http}]\n")},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := netpolIndex(t, c.policies)
			proto := c.proto
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			var v facts.PolicyDecision
			if c.egress {
				v = x.Egress(x.Pod(ip("10.0.1.2")), ip("10.0.1.1"), proto, c.port)
			} else {
				v = x.Ingress(x.Pod(ip("10.0.1.1")), ip(c.from), proto, c.port)
			}
			if v.Denied() != c.denied {
				t.Errorf("denied = %v, want %v (isolating %d, allowed %v, near %+v)", v.Denied(), c.denied,
					len(v.Isolating), v.Allowed, v.Near)
			}
			if (len(v.Unknown) > 0) != c.unknown {
				t.Errorf("unknown = %q, want some: %v", v.Unknown, c.unknown)
			}
		})
	}
}
