package parse

import (
	"bytes"
	"fmt"
)

// genGrepLog is grep -Hn's output over kube-proxy's log: its NodePort bind
// failures and Service updates, at growing line numbers.
func genGrepLog(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		s := i % 60
		if i%2 == 0 {
			fmt.Fprintf(b, "kube-proxy.log:%d:E0112 09:%02d:%02d.221463    6384 proxier.go:1061] can't open \"nodePort for ns%d/svc%d:8008\" (:%d/tcp), skipping this nodePort: listen tcp :%d: bind: address already in use\n",
				700000+3*i, i/60%60, s, i%97, i, 30000+i%2768, 30000+i%2768)
			return
		}
		fmt.Fprintf(b, "kube-proxy.log:%d:I0112 09:%02d:%02d.968312    6384 proxier.go:431] Adding new service \"ns%d/svc%d:8008\" at 192.168.7.142:8008/TCP\n",
			700000+3*i, i/60%60, s, i%97, i)
	})
}
