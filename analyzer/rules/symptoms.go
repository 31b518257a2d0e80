package rules

import (
	"slices"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/model"
)

// The symptoms docs/collect.md is organized by: a rule names those it can
// explain in its Symptoms, with its rank under each.
var (
	PodsStuckCreating = &analyzer.Symptom{Name: "Pods stuck in ContainerCreating", Rank: 5,
		Doc: "new Pods stay in ContainerCreating with FailedCreatePodSandBox events: the CNI cannot set up their network"}
	ProbesTimeOut = &analyzer.Symptom{Name: "probes time out", Rank: 10,
		Doc: "liveness or readiness probes fail with timeouts or refused connections, and containers restart or leave their Service"}
	ConnectionsTimeOut = &analyzer.Symptom{Name: "connections time out", Rank: 15,
		Doc: "connections hang until the client gives up: SYNs sent again and again without an answer, or a handshake " +
			"that completes and then stalls on the first large segments"}
	ServiceUnreachable = &analyzer.Symptom{Name: "Service unreachable from some nodes", Rank: 20,
		Doc: "a ClusterIP or NodePort answers from some nodes or Pods and times out, is refused or resets from others"}
	LoadBalancer502 = &analyzer.Symptom{Name: "intermittent 502 through a LoadBalancer", Rank: 30,
		Doc: "some requests through a load balancer or ingress fail (502, 504, resets) while others pass"}
	LoadBalancerPending = &analyzer.Symptom{Name: "a LoadBalancer Service's EXTERNAL-IP stays pending", Rank: 35,
		Doc: "a Service of type LoadBalancer gets no external IP (kubectl get svc shows <pending>), or its cloud load " +
			"balancer stops following the nodes"}
	DNSTimeouts = &analyzer.Symptom{Name: "DNS timeouts", Rank: 40,
		Doc: "lookups from Pods time out or take seconds (the 5 s resolver retry), CoreDNS logs errors"}
	PodStreamsFail = &analyzer.Symptom{Name: "kubectl port-forward, exec or logs fail", Rank: 45,
		Doc: "kubectl port-forward, exec or logs to a running Pod fail or hang: the stream from the apiserver " +
			"through the node's kubelet, or the node's end of it, breaks"}
	ControlPlaneUnhealthy = &analyzer.Symptom{Name: "the control plane looks unhealthy", Rank: 50,
		Doc: "componentstatus shows Unhealthy, components cannot reach the apiserver, nodes flap NotReady"}
)

// A rule's Decide is the one command that shows whether its cause is at
// work, named when a finding of unknown cause lists the rule among its
// candidates (analyzer.Candidate). A rule that does not write its own gets
// the collector's command for the evidence it reads, the kinds more
// telling of a cause first (those it needs, then those it uses, a capture
// and logs last).
func init() {
	for _, r := range All() {
		if r.Decide == "" {
			r.Decide = decideByKinds(r)
		}
	}
}

// decideByKinds returns the collector's command (collect.AskFor) for the
// first kind r reads that a command gives; "" when none does.
func decideByKinds(r *analyzer.Rule) string {
	kinds := slices.Concat(r.Needs, r.NeedsAny, r.Uses)
	late := func(k model.Kind) bool { return k == model.KindCapture || k == model.KindLogs }
	slices.SortStableFunc(kinds, func(a, b model.Kind) int {
		switch {
		case late(a) == late(b):
			return 0
		case late(a):
			return 1
		}
		return -1
	})
	for _, k := range kinds {
		if cs := collect.AskFor(k); len(cs) > 0 {
			return cs[0].Shell
		}
	}
	return ""
}
