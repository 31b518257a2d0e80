// Package facts holds the facts netmortem's rules derive from a Snapshot
// and share: what each node's dataplane does with each Service port, what
// each address is in the cluster, the NodePort range and the ports owned on
// each node, each node's ephemeral and reserved port ranges, the Services'
// endpoints, kube-proxy's own log lines, which node each capture was taken
// on, the capture's failed connection attempts, the
// dataplane's policy drops. Each is an *analyzer.Fact:
// computed once per Snapshot, on first use, however many rules require it.
//
// The values are shared between rules: a reader must not modify them.
package facts

import "github.com/netmortem/netmortem/analyzer"

// All returns every fact of the package, for documentation.
func All() []analyzer.FactKey {
	return []analyzer.FactKey{
		Dataplanes,
		AddrRoles,
		NodePortRange,
		PortOwners,
		LocalPorts,
		ServiceEndpoints,
		KubeProxyLogs,
		AppErrors,
		CaptureNodes,
		Attempts,
		FailedAttempts,
		NATPairs,
		LBControllers,
		NetPolicies,
		ShadowedServices,
		PolicyDrops,
		Detours,
	}
}
