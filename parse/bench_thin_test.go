package parse

import (
	"bytes"
	"fmt"
)

// Generators of the benchmark inputs of the thin-evidence formats
// (lsmod, ab, net-error-lines, ipvsadm-timeout).

func genLsmod(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "root@node-%d:~# lsmod | grep br_netfilter\nbr_netfilter           32768  0\n", i)
	})
}

func genAB(n int) []byte {
	return genLines("This is ApacheBench, Version 2.3\n", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "Server Hostname:        %s\nServer Port:            80\nConcurrency Level:      %d\n"+
			"Connection Times (ms)\n              min  mean[+/-sd] median   max\nConnect:        0  %d 1.5    %d    %d\n",
			ip4(10, 0x600000+i), i%300+1, i%1000, i%1000, i%3000)
	})
}

func genNetErrorLines(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "dial tcp %s:443: connect: cannot assign requested address\n", ip4(10, 0x600000+i))
	})
}

func genIPVSTimeout(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "root@node-%d:~# ipvsadm -l --timeout\nTimeout (tcp tcpfin udp): %d 120 300\n", i, 900+i)
	})
}
