package analyzer

// Default returns every rule netmortem ships, in the order they run. The
// list is explicit: a rule is added here, and a retired rule stays listed
// (commented out) so its name is never reused.
func Default() []*Rule {
	return []*Rule{
		SynAckReset,
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
	}
}
