package logs

import "testing"

// FuzzHubble reads any text as hubble observe's flows without a panic.
func FuzzHubble(f *testing.F) {
	f.Add("Jun 14 06:29:32.553: default/xwing:43314 (ID:3040) <> default/deathstar-6fb5694d48-5hmds:80 (ID:32460) " +
		"Policy denied DROPPED (TCP Flags: SYN)\n")
	f.Add("hubble-observer/… <> kube-system/coredns-…:53  Policy denied DROPPED (UDP)\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzFormat(t, HubbleObserveFormat, in) })
}
