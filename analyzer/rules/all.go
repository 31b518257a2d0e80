// Package rules holds the rules netmortem ships, one file per rule, each
// a *analyzer.Rule that reads a model.Snapshot and the facts it requires
// (package facts) and reports findings. All lists them.
//
// A rule file uses only what it defines itself, the text and evidence
// helpers of text.go, evidence.go and subject.go, the files shared by a
// family of rules (portranges.go, synfail.go, iptables_binary.go,
// sandbox.go), the symptoms of symptoms.go, other rules in its Explains
// and FollowsFrom edges, and other packages: deleting a rule's file, its
// line in All and the edges naming it (the compiler points at each) leaves
// the package building.
//
// A rule is the only place that knows about itself: report, timeline,
// collect and SARIF read what they need from its value. `make new-rule
// NAME=my-rule` writes a new rule's file and its line in All (see
// docs/CONTRIBUTING.md).
package rules

import "github.com/netmortem/netmortem/analyzer"

// All returns every rule netmortem ships, in the order they run. The list
// is explicit: a rule is added here, and a retired rule stays listed
// (commented out) so its name is never reused.
func All() []*analyzer.Rule {
	return []*analyzer.Rule{
		SynAckReset,
		NATReplyUntranslated,
		HairpinDrop,
		MTUBlackhole,
		EphemeralNodePortOverlap,
		SynUnanswered,
		SynRefused,
		ICMPUnreachable,
		ARPFlap,
		ARPUnanswered,
		ProbeRestartLoop,
		VersionSkew,
		KubeProxySyncErrors,
		TimeWaitChurn,
		StaleDNAT,
		APIServerAffinity,
		ConnectionSkew,
		NodePortCollision,
		LBControllerConflict,
		IPVSStrictARP,
		APIServerUnreachable,
		ConntrackDrops,
		IPTablesBackendSplit,
		RPFilterDrop,
		SNATPortExhaustion,
		NetworkPolicyDeny,
		ServiceRuleShadowed,
		ConntrackStaleUDP,
		NdotsAmplification,
		VXLANChecksumOffload,
		StaleVTEPNeighbor,
		VXLANPortMismatch,
		VXLANPortBlocked,
		FilterForwardDrop,
		IPVSStaleRealServer,
		IPTablesVersionSkew,
		CoreDNSLoop,
		CNIIPAMExhausted,
		NeighTableOverflow,
		IPForwardDisabled,
		IPVSIdleTimeout,
		LeakedEstablishedPorts,
		IPVSConnReuseDelay,
		ListenQueueOverflow,
		CNIWrongInterface,
		NodePortHeldByProcess,
		CoreDNSUpstreamTimeout,
		ConntrackInvalidReset,
		PodCIDROverlap,
		KubeProxyRestoreFailed,
		ServiceNoEndpoints,
		CNIPluginMissing,
		CNIBridgeAddressMismatch,
		KubeProxyIPVSUnavailable,
		PortForwardSocatMissing,
		CalicoBGPDown,
		NodePodCIDRMissing,
		NodeInputDrop,
		LBProvisionFailed,
		CiliumHealthUnreachable,
		NetfilterExtensionMissing,
		MTUMismatch,
		KubeProxySysctlReadonly,
		RBACListForbidden,
		InterfaceNotFound,
		PortInUse,
		MemberlistUnreachable,
		TLSCertificateRejected,
		DockerChainsFlushed,
		ConntrackCleanupFailed,
		WeaveNPCBlocked,
		InotifyLimitReached,
	}
}

// Lookup returns the rule of All called name, or nil.
func Lookup(name string) *analyzer.Rule {
	for _, r := range All() {
		if r.Name == name {
			return r
		}
	}
	return nil
}
