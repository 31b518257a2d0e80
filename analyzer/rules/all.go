// Package rules holds the rules netmortem ships, one file per rule, each
// a *analyzer.Rule that reads a model.Snapshot and the facts it requires
// (package facts) and reports findings. All lists them.
//
// A rule file uses only what it defines itself, the text and evidence
// helpers of text.go, evidence.go and subject.go, the files shared by a family of
// rules (portranges.go, synfail.go), and other packages: deleting a rule's
// file and its line in All leaves the package building.
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
		CoreDNSLoop,
		CNIIPAMExhausted,
		NeighTableOverflow,
		IPForwardDisabled,
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
