package parse

import (
	"bytes"
	"fmt"
)

// Generators of the formats tickets paste: hubble observe, dashboards' events.

// genHubble writes n flows of hubble observe, every third one dropped by
// a policy.
func genHubble(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		verdict := "to-endpoint FORWARDED"
		if i%3 == 0 {
			verdict = "Policy denied DROPPED"
		}
		fmt.Fprintf(b, "Jun 14 06:%02d:%02d.%03d: ns%d/client-%d:%d (ID:%d) <> kube-system/coredns-%d:53 (ID:%d) %s (UDP)\n",
			i/60%60, i%60, i%1000, i%97, i%251, 32768+i%28000, 10000+i%97, i%7, 20000+i%89, verdict)
	})
}

// genEventLines writes n events pasted a line per field, every other one
// a servicelb Pod the scheduler cannot place.
func genEventLines(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		if i%2 == 0 {
			fmt.Fprintf(b, "kube-system:svclb-web-%d-%05x  \nFailedScheduling \n0/5 nodes are available: 5 node(s) "+
				"didn't have free ports for the requested pod ports.\n", i%97, i)
			return
		}
		fmt.Fprintf(b, "ns%d:web-%d\nBackOff\nBack-off restarting failed container\n", i%31, i)
	})
}
