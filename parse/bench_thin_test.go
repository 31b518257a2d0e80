package parse

import (
	"bytes"
	"fmt"
)

// Generators of the benchmark inputs of the formats tickets paste.

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

// genClientErrors is kubeadm init's output with its preflight errors, and
// kubectl's and helm's refusals.
func genClientErrors(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		switch i % 4 {
		case 0:
			fmt.Fprintf(b, "[preflight] Running pre-flight checks %d\n", i)
		case 1:
			fmt.Fprintf(b, "\t[ERROR KubeletVersion]: the kubelet version is higher than the control plane version. Kubelet version: \"1.13.%d\" Control plane version: \"1.12.2\"\n", i%10)
		case 2:
			fmt.Fprintf(b, "The Service \"svc%d\" is invalid: spec.ports[0].nodePort: Invalid value: %d: provided port is already allocated\n", i, 30000+i%2768)
		default:
			fmt.Fprintf(b, "Error: UPGRADE FAILED: cannot patch \"svc%d\" with kind Service: Service \"svc%d\" is invalid\n", i, i)
		}
	})
}

// genHairpinCat is cat over the veth ports' hairpin_mode files of one
// bridge: the command, then one value per port.
func genHairpinCat(n int) []byte {
	return genLines("cat /sys/devices/virtual/net/docker0/brif/veth*/hairpin_mode\n", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "%d\n", i%2)
	})
}

// genEventsTable is kubectl get events -A: Pods' probe failures and
// restarts.
func genEventsTable(n int) []byte {
	return genLines("NAMESPACE   LAST SEEN   TYPE      REASON      OBJECT   MESSAGE\n", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "ns%d   %dm   Warning   Unhealthy   pod/web-%d   Liveness probe failed: Get \"http://10.0.%d.%d:8080/\": context deadline exceeded\n",
			i%97, i%60+1, i, i>>8&255, i&255)
	})
}

// genDescribeEvents is the Events table of a kubectl describe pod: the
// kubelet's probe failures.
func genDescribeEvents(n int) []byte {
	return genLines("Events:\n  Type     Reason     Age                 From     Message\n  ----     ------     ----                ----     -------\n",
		n, func(b *bytes.Buffer, i int) {
			fmt.Fprintf(b, "  Warning  Unhealthy  %dm (x%d over 1h)  kubelet  Liveness probe failed: Get \"http://10.0.%d.%d:8080/\": context deadline exceeded\n",
				i%60+1, i%9+2, i>>8&255, i&255)
		})
}

func genLsmod(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "root@node-%d:~# lsmod | grep br_netfilter\nbr_netfilter           32768  0\n", i)
	})
}

func genCalicoStatus(n int) []byte {
	head := "Calico process is running.\n\nIPv4 BGP status\n+----------------+-------------------+-------+----------+--------------------------------+\n" +
		"|  PEER ADDRESS  |     PEER TYPE     | STATE |  SINCE   |              INFO              |\n" +
		"+----------------+-------------------+-------+----------+--------------------------------+\n"
	return genLines(head, n, func(b *bytes.Buffer, i int) {
		if i%10 == 9 {
			fmt.Fprintf(b, "| %-14s | node-to-node mesh | start | 16:57:43 | Connect Socket: Connection     |\n"+
				"|                |                   |       |          | timed out                      |\n", ip4(10, 0x100000+i))
			return
		}
		fmt.Fprintf(b, "| %-14s | node-to-node mesh | up    | 13:46:38 | Established                    |\n", ip4(10, 0x100000+i))
	})
}

func genCNIConf(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "$ cat /etc/cni/net.d/10-bridge.conflist\n{\n  \"cniVersion\": \"1.0.0\",\n  \"name\": \"net-%d\",\n"+
			"  \"plugins\": [\n    {\n      \"type\": \"bridge\",\n      \"bridge\": \"cni0\",\n      \"ipam\": {\n"+
			"        \"type\": \"host-local\",\n        \"subnet\": \"10.%d.%d.0/24\"\n      }\n    },\n"+
			"    {\"type\": \"portmap\", \"capabilities\": {\"portMappings\": true}}\n  ]\n}\n", i, 64+i/256%64, i%256)
	})
}

func genCiliumHealth(n int) []byte {
	return genLines("Probe time:   2022-08-02T16:38:44Z\nNodes:\n", n, func(b *bytes.Buffer, i int) {
		http := "OK, RTT=130.845µs"
		if i%10 == 9 {
			http = fmt.Sprintf("Get \"http://%s:4240/hello\": dial tcp %[1]s:4240: i/o timeout", ip4(10, 0x100000+i))
		}
		fmt.Fprintf(b, "  node-%d:\n    Host connectivity to %s:\n      ICMP to stack:   OK, RTT=1.268091ms\n"+
			"      HTTP to agent:   %s\n    Endpoint connectivity to %s:\n      ICMP to stack:   OK, RTT=1.16669ms\n"+
			"      HTTP to agent:   OK, RTT=193.793µs\n", i, ip4(10, 0x100000+i), http, ip4(100, 0x100000+i))
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
