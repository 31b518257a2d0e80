package collect

// Symptom is what someone sees go wrong, with the rules that can explain
// it: docs/collect.md lists, for each, the evidence those rules read and
// the commands that give it.
type Symptom struct {
	// Name is the symptom as a user describes it.
	Name string
	// Doc says a little more about it.
	Doc string
	// Rules are the names of the rules that can explain it.
	Rules []string
}

// Symptoms are the symptoms docs/collect.md is organized by. Every rule
// appears under at least one (a test holds it).
var Symptoms = []Symptom{
	{Name: "probes time out",
		Doc: "liveness or readiness probes fail with timeouts or refused connections, and containers restart or leave their Service",
		Rules: []string{"probe-restart-loop", "syn-unanswered", "syn-refused", "icmp-unreachable", "network-policy-deny",
			"rp-filter-drop", "conntrack-drops", "mtu-blackhole", "hairpin-drop", "version-skew"}},
	{Name: "Service unreachable from some nodes",
		Doc: "a ClusterIP or NodePort answers from some nodes or Pods and times out, is refused or resets from others",
		Rules: []string{"stale-dnat", "kube-proxy-sync-errors", "apiserver-unreachable", "iptables-backend-split", "service-rule-shadowed",
			"nat-reply-untranslated", "hairpin-drop", "nodeport-collision", "ephemeral-nodeport-overlap", "synack-reset",
			"rp-filter-drop", "mtu-blackhole", "syn-unanswered", "syn-refused", "network-policy-deny", "connection-skew"}},
	{Name: "intermittent 502 through a LoadBalancer",
		Doc: "some requests through a load balancer or ingress fail (502, 504, resets) while others pass",
		Rules: []string{"lb-controller-conflict", "ipvs-strict-arp", "arp-flap", "arp-unanswered", "synack-reset",
			"ephemeral-nodeport-overlap", "timewait-churn", "snat-port-exhaustion", "connection-skew", "conntrack-drops",
			"stale-dnat", "icmp-unreachable"}},
	{Name: "DNS timeouts",
		Doc: "lookups from Pods time out or take seconds (the 5 s resolver retry), CoreDNS logs errors",
		Rules: []string{"conntrack-stale-udp", "conntrack-drops", "stale-dnat", "network-policy-deny", "icmp-unreachable",
			"kube-proxy-sync-errors", "apiserver-unreachable", "snat-port-exhaustion", "syn-unanswered"}},
	{Name: "the control plane looks unhealthy",
		Doc:   "componentstatus shows Unhealthy, components cannot reach the apiserver, nodes flap NotReady",
		Rules: []string{"apiserver-affinity", "apiserver-unreachable", "version-skew", "kube-proxy-sync-errors", "arp-flap"}},
}
