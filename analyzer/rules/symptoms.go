package rules

import "github.com/netmortem/netmortem/analyzer"

// The symptoms docs/collect.md is organized by: a rule names those it can
// explain in its Symptoms, with its rank under each.
var (
	ProbesTimeOut = &analyzer.Symptom{Name: "probes time out", Rank: 10,
		Doc: "liveness or readiness probes fail with timeouts or refused connections, and containers restart or leave their Service"}
	ServiceUnreachable = &analyzer.Symptom{Name: "Service unreachable from some nodes", Rank: 20,
		Doc: "a ClusterIP or NodePort answers from some nodes or Pods and times out, is refused or resets from others"}
	LoadBalancer502 = &analyzer.Symptom{Name: "intermittent 502 through a LoadBalancer", Rank: 30,
		Doc: "some requests through a load balancer or ingress fail (502, 504, resets) while others pass"}
	DNSTimeouts = &analyzer.Symptom{Name: "DNS timeouts", Rank: 40,
		Doc: "lookups from Pods time out or take seconds (the 5 s resolver retry), CoreDNS logs errors"}
	ControlPlaneUnhealthy = &analyzer.Symptom{Name: "the control plane looks unhealthy", Rank: 50,
		Doc: "componentstatus shows Unhealthy, components cannot reach the apiserver, nodes flap NotReady"}
)
