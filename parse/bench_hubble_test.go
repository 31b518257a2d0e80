package parse

import (
	"bytes"
	"fmt"
)

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
