package parse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/host"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/internal/text"
	"github.com/netmortem/netmortem/parse/kube"
	"github.com/netmortem/netmortem/parse/logs"
	"github.com/netmortem/netmortem/parse/netfilter"
)

// Parse benchmarks: one per registered format, each on an input of a
// realistic large size generated here in the shape the real tool prints
// (kube-proxy's chain layout for netfilter dumps). Run them with
//
//	go test ./parse -run XXX -bench Parse -benchtime 3x -benchmem
//
// TestBenchInputs checks, on small sizes, that every generator's output
// sniffs as its format and parses without a warning into the records it
// should: the benchmarks measure real parses, not error paths.

// benchCase is the input of one parse benchmark.
type benchCase struct {
	name   string  // sub-benchmark name: the format, or format/variant
	format *Format // the format that must read it
	n      int     // size of the benchmark's input, in gen's unit
	unit   string  // what n counts, for docs/performance.md
	gen    func(n int) []byte
	// records is the record count Parse must return for gen(n); nil
	// when only a positive count is checked.
	records func(n int) int
}

func perN(k int) func(int) int { return func(n int) int { return k * n } }

func benchCases() []benchCase {
	return []benchCase{
		{"pcap", captureFormat, 8 << 20, "bytes of pcap (handshakes.pcap repeated)", genPcap, nil},
		{"sysctl", host.SysctlFormat, 100000, "sysctl -a lines", genSysctl, perN(1)},
		{"sysctl-json", host.SysctlJSONFormat, 100000, "sysctl.json keys", genSysctlJSON, perN(1)},
		{"component-flags", kube.ComponentFlagsFormat, 10000, "ps auxww lines of components, 30 flags each", genComponentFlags, perN(1)},
		{"containers", host.ContainersFormat, 10000, "docker ps -a rows", genContainers, perN(1)},
		{"kubectl-describe", kube.DescribeFormat, 10000, "kubectl describe service outputs", genDescribe, perN(1)},
		{"kubectl-table", kube.KubectlTableFormat, 10000, "kubectl get svc -A -o wide rows", genKubeTable, perN(1)},
		{"klog", logs.KlogFormat, 100000, "journald kubelet lines", genKlog, perN(1)},
		{"etcd-log", logs.EtcdLogFormat, 100000, "etcd 3.3 text log lines", genEtcdLog, perN(1)},
		{"json-log", logs.JSONLogFormat, 100000, "zap JSON log lines", genJSONLog, perN(1)},
		{"logfmt", logs.LogfmtFormat, 100000, "logrus logfmt lines", genLogfmt, perN(1)},
		{"nginx-access", logs.NginxAccessFormat, 100000, "nginx access log lines", genNginxAccess, perN(1)},
		{"nginx-error", logs.NginxErrorFormat, 100000, "nginx error log lines", genNginxError, perN(1)},
		{"dmesg", logs.DmesgFormat, 100000, "dmesg lines (bridge ports, nf_conntrack table full)", genDmesg, perN(1)},
		{"felix-log", logs.FelixLogFormat, 100000, "Calico Felix log lines", genFelixLog, perN(1)},
		{"weave-log", logs.WeaveLogFormat, 100000, "weave router log lines", genWeaveLog, perN(1)},
		{"go-log", logs.GoLogFormat, 100000, "Go log package lines", genGoLog, perN(1)},
		{"cilium-monitor", logs.CiliumMonitorFormat, 100000, "cilium monitor drop lines", genCiliumMonitor, perN(1)},
		{"hubble-observe", logs.HubbleObserveFormat, 100000, "hubble observe flows, forwarded and policy-denied", genHubble, perN(1)},
		{"grep-n-log", logs.GrepLogFormat, 100000, "grep -Hn lines of kube-proxy's log", genGrepLog, perN(1)},
		{"client-errors", logs.ClientErrorsFormat, 100000, "kubeadm, kubectl and helm error lines", genClientErrors, perN(1)},
		{"hairpin-cat", host.HairpinCatFormat, 100000, "hairpin_mode values under one cat", genHairpinCat, perN(1)},
		{"kubectl-events", kube.EventsTableFormat, 100000, "kubectl get events -A rows", genEventsTable, perN(1)},
		{"describe-events", kube.DescribeEventsFormat, 100000, "kubectl describe pod's Events rows", genDescribeEvents, perN(1)},
		{"coredns-log", logs.CoreDNSLogFormat, 100000, "CoreDNS log lines (kubernetes plugin errors with traces, query log)", genCoreDNS, perN(1)},
		{"cri-log", logs.CRILogFormat, 100000, "containerd records of kube-proxy's klog, every tenth line in two partial records", genCRI, perN(1)},
		{"journal", logs.JournalFormat, 100000, "journalctl -o json entries of the kubelet's klog", genJournalJSON, perN(1)},
		{"docker-json-log", logs.DockerJSONLogFormat, 100000, "Docker json-file records of kube-proxy's klog", genDockerJSON, perN(1)},
		{"event-lines", kube.EventLinesFormat, 100000, "Events pasted a line per field, half of servicelb", genEventLines, perN(1)},
		{"ipvsadm", netfilter.IPVSadmFormat, 10000, "IPVS services with 3 real servers (ipvsadm -Ln)", genIPVSadm, perN(1)},
		{"lsmod", host.LsmodFormat, 1000, "nodes of lsmod | grep br_netfilter", genLsmod, perN(1)},
		{"calicoctl-status", host.CalicoStatusFormat, 10000, "BGP peers of calicoctl node status, every tenth down", genCalicoStatus, perN(1)},
		{"cilium-health", host.CiliumHealthFormat, 10000, "nodes of cilium-health status --probe, every tenth unreachable", genCiliumHealth, perN(1)},
		{"ab", host.ABFormat, 1000, "ApacheBench reports", genAB, perN(1)},
		{"net-error-lines", logs.NetErrorLinesFormat, 10000, "dial errors quoted without their log prefix", genNetErrorLines, perN(1)},
		{"ipvsadm-timeout", netfilter.IPVSTimeoutFormat, 10000, "nodes of ipvsadm -l --timeout", genIPVSTimeout, perN(1)},
		{"iptables-save", netfilter.IPTablesSaveFormat, 10000, "Services, kube-proxy iptables mode (iptables-save)", parsetest.KubeProxySave, func(n int) int { return 8 + 11*n }},
		{"iptables-list", netfilter.IPTablesListFormat, 10000, "Services, kube-proxy iptables mode (iptables -t nat -nvL)", genIPTablesList, func(n int) int { return 8 + 11*n }},
		{"iptables-S", netfilter.IPTablesRulesFormat, 10000, "Services, kube-proxy iptables mode (iptables -t nat -S)", genIPTablesS, func(n int) int { return 8 + 11*n }},
		{"ufw-status", netfilter.UFWStatusFormat, 100000, "ufw status verbose rows", genUFWStatus, perN(1)},
		{"nft", netfilter.NFTFormat, 10000, "Services, kube-proxy nftables mode (nft list table ip kube-proxy)", genNft, nil},
		{"kubectl/json", kube.KubectlFormat, 10000, "Services (kubectl get svc -A -o json)", genServicesJSON, perN(1)},
		{"goldpinger", kube.GoldpingerFormat, 100, "goldpinger pods checking each other (check_all, n² checks)", genGoldpinger, func(n int) int { return n * n }},
		{"kube-version", kube.VersionFormat, 10000, "keys of a cluster_version.json", genVersion, func(int) int { return 1 }},
		{"dns-debug", kube.DNSDebugFormat, 10000, "kube-dns endpoints of a dns/debug.json", genDNSDebug, func(int) int { return 1 }},
		{"kubectl/yaml", kube.KubectlFormat, 10000, "Services (kubectl get svc -A -o yaml)", genServicesYAML, perN(1)},
		{"tcpdump-text", tcpdumpTextFormat, 100000, "tcpdump -nn lines (handshakes)", genTcpdump, perN(1)},
		{"tshark-text", tsharkTextFormat, 100000, "tshark packet list lines (handshakes)", genTshark, perN(1)},
		{"ss", host.SSFormat, 100000, "ss -tanp lines", genSS, perN(1)},
		{"netstat", host.NetstatFormat, 100000, "netstat -tanp lines", genNetstat, perN(1)},
		{"neigh", host.NeighFormat, 10000, "ip neigh entries", genNeigh, perN(1)},
		{"neigh-count", host.NeighCountFormat, 1000, "counts of neighbor tables (arp -an | wc -l, one per node)", genNeighCount, perN(1)},
		{"cni-conf", host.CNIConfFormat, 1000, "bridge conflists of nodes (cat /etc/cni/net.d/*, one per node)", genCNIConf, perN(7)},
		{"resolv-conf", host.ResolvConfFormat, 1000, "resolv.conf files of nodes (cat /etc/resolv.conf, one per node)", genResolvConf, perN(1)},
		{"ip-addr", host.AddrFormat, 10000, "addresses on kube-ipvs0 (ip addr)", genAddr, perN(1)},
		{"ip-link", host.LinkFormat, 10000, "Pod veths on cni0 with hairpin on (ip -d link)", genLink, perN(1)},
		{"ip-link-json", host.LinkJSONFormat, 10000, "Pod veths on cni0 (ip -j -d link)", genLinkJSON, perN(1)},
		{"brport-hairpin", host.HairpinFilesFormat, 10000, "bridge ports' hairpin_mode (grep . /sys/class/net/*/brport/hairpin_mode)", genHairpin, perN(1)},
		{"nstat", host.NstatFormat, 10000, "kernel counters (nstat -az)", genNstat, perN(1)},
		{"netstat-s", host.NetstatStatsFormat, 10000, "kernel counters by name (netstat -s)", genNetstatStats, perN(1)},
		{"ip-route", host.RouteFormat, 10000, "routes (ip route, Calico /32 routes)", genRoute, perN(1)},
		{"neigh-json", host.NeighJSONFormat, 10000, "ip -j neigh entries", genNeighJSON, perN(1)},
		{"ip-addr-json", host.AddrJSONFormat, 10000, "addresses on kube-ipvs0 (ip -j addr)", genAddrJSON, perN(1)},
		{"ip-route-json", host.RouteJSONFormat, 10000, "routes (ip -j route, Calico /32 routes)", genRouteJSON, perN(1)},
		{"conntrack", netfilter.ConntrackFormat, 100000, "conntrack -L entries", genConntrack, perN(1)},
		{"conntrack-events", netfilter.ConntrackEventsFormat, 100000, "conntrack -E -o timestamp events", genConntrackEvents, perN(1)},
		{"conntrack-stats", netfilter.ConntrackStatsFormat, 10000, "CPUs of conntrack -S counters", genConntrackStats, perN(1)},
		{"kubespray-vars", host.SettingsFormat, 100000, "group_vars settings lines", genSettings, perN(1)},
		{"connect-loop", host.ProbesFormat, 10000, "nc loops of 100 tries, one result line each", genProbes, perN(1)},
		{"ip-rule", host.RuleFormat, 10000, "policy routing rules (ip rule: a CNI's per-Pod rules)", genRules, perN(1)},
		{"client-transcript", host.ClientFormat, 10000, "curl -v, nc -vz and dig transcripts (one result each)", genClient, perN(1)},
		{"terminal-session", formatNamed("terminal-session"), 1000, "commands of a pasted session (kubectl get svc, ss -tan, ip neigh; 20 lines each)", genSession, perN(20)},
	}
}

// formatNamed returns the registered format of that name.
func formatNamed(name string) *Format {
	for _, f := range Formats() {
		if f.Name == name {
			return f
		}
	}
	panic("no format " + name)
}

// benchParse parses in with f as Open would.
func benchParse(tb testing.TB, f *Format, in []byte) (int, error) {
	src := &File{Name: "bench.txt", Format: f.Name}
	return f.Parse(tb.Context(), bytes.NewReader(in), src, &model.Snapshot{})
}

func BenchmarkParse(b *testing.B) {
	for _, c := range benchCases() {
		b.Run(c.name, func(b *testing.B) {
			in := c.gen(c.n)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if n, err := benchParse(b, c.format, in); err != nil || n == 0 {
					b.Fatalf("%d records, %v", n, err)
				}
			}
		})
	}
}

// BenchmarkSniff tells the format of a small file of each kind (20
// rows), as Open does for every file of a bundle: each format's Sniff on
// its head, shared (text.ShareHead). A bundle of many small files spends
// most of its read here.
func BenchmarkSniff(b *testing.B) {
	formats := Formats()
	for _, c := range benchCases() {
		if c.format == captureFormat {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			in := c.gen(20)
			head := in[:min(len(in), text.HeadSize)]
			for b.Loop() {
				done := text.ShareHead(head)
				for _, f := range formats {
					f.Sniff("bench.txt", head)
				}
				done()
			}
		})
	}
}

func TestBenchInputs(t *testing.T) {
	covered := map[*Format]bool{}
	for _, c := range benchCases() {
		covered[c.format] = true
		t.Run(c.name, func(t *testing.T) {
			n := 20
			if c.format == captureFormat {
				n = 64 << 10
			}
			in := c.gen(n)
			best, score := "", 0
			for _, f := range Formats() {
				if s := f.Sniff("bench.txt", in[:min(len(in), text.HeadSize)]); s > score {
					best, score = f.Name, s
				}
			}
			if best != c.format.Name {
				t.Errorf("sniffed as %s (%d), want %s", best, score, c.format.Name)
			}
			got, err := benchParse(t, c.format, in)
			if err != nil {
				t.Errorf("parse: %v", err)
			}
			if c.records != nil && got != c.records(n) || got == 0 {
				t.Errorf("%d records for n=%d", got, n)
			}
		})
	}
	for _, f := range Formats() {
		if !covered[f] {
			t.Errorf("format %s has no parse benchmark", f.Name)
		}
	}
}

// --- generators

// genLines writes n lines made by line, after head.
func genLines(head string, n int, line func(b *bytes.Buffer, i int)) []byte {
	var b bytes.Buffer
	b.WriteString(head)
	for i := range n {
		line(&b, i)
	}
	return b.Bytes()
}

// ip4 returns the i-th address of the /8 with first octet a.
func ip4(a, i int) string { return fmt.Sprintf("%d.%d.%d.%d", a, byte(i>>16), byte(i>>8), byte(i)) }

func genPcap(n int) []byte {
	data, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/captures/handshakes.pcap"))
	if err != nil {
		panic(err)
	}
	big := append([]byte(nil), data...)
	for len(big) < n {
		big = append(big, data[24:]...)
	}
	return big
}

var sysctlNames = []string{"accept_local", "accept_redirects", "arp_announce", "arp_ignore", "forwarding", "proxy_arp", "route_localnet", "rp_filter", "send_redirects"}

func genSysctl(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "net.ipv4.conf.cali%07x.%s = %d\n", i/len(sysctlNames), sysctlNames[i%len(sysctlNames)], i%3)
	})
}

func genSysctlJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"net.ipv4.conf.cali%07x.%s":"%d"`, i/len(sysctlNames), sysctlNames[i%len(sysctlNames)], i%3)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func genComponentFlags(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "root %7d  3.1  9.8 1234567 567890 ?  Ssl  Feb07 1:02 kube-apiserver --advertise-address=%s", 1000+i, ip4(10, i))
		for f := range 29 {
			fmt.Fprintf(b, " --flag-%02d=value-%d", f, i)
		}
		b.WriteByte('\n')
	})
}

func genContainers(n int) []byte {
	return genLines("CONTAINER ID   IMAGE                  COMMAND                  CREATED        STATUS                     PORTS     NAMES\n", n, func(b *bytes.Buffer, i int) {
		status := "Up 8 months"
		if i%5 == 0 {
			status = "Exited (137) 2 hours ago"
		}
		fmt.Fprintf(b, "%012x   %-22s %-24s %-14s %-26s           k8s_app_web-%d-7d9f_ns%d_%08x-1111-2222-3333-444455556666_%d\n",
			uint64(i)*0x9E3779B97F4A7C15>>16, "registry.k8s.io/pause:3.9", `"/pause"`, "11 months ago", status, i, i%97, i, i%4)
	})
}

func genDescribe(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		cip := ip4(10, 0x600000+i)
		fmt.Fprintf(b, `Name:                     svc%d
Namespace:                ns%d
Labels:                   app=svc%d
Annotations:              <none>
Selector:                 app=svc%d
Type:                     NodePort
IP Family Policy:         SingleStack
IP Families:              IPv4
IP:                       %s
IPs:                      %s
Port:                     http  80/TCP
TargetPort:               8080/TCP
NodePort:                 http  %d/TCP
Endpoints:                %s:8080,%s:8080,%s:8080
Session Affinity:         None
External Traffic Policy:  Cluster
Events:                   <none>

`, i, i%97, i, i, cip, cip, 30000+i%2768, ip4(10, 0xF40000+3*i), ip4(10, 0xF40001+3*i), ip4(10, 0xF40002+3*i))
	})
}

func genKubeTable(n int) []byte {
	return genLines("NAMESPACE   NAME         TYPE        CLUSTER-IP      EXTERNAL-IP   PORT(S)        AGE    SELECTOR\n", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "%-11s %-12s %-11s %-15s %-13s %-14s %-6s %s\n",
			fmt.Sprintf("ns%d", i%97), fmt.Sprintf("svc%d", i), "NodePort", ip4(10, 0x600000+i), "<none>",
			fmt.Sprintf("80:%d/TCP", 30000+i%2768), "193d", fmt.Sprintf("app=svc%d", i))
	})
}

func genKlog(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		s := i % 60
		switch i % 3 {
		case 0:
			fmt.Fprintf(b, "Sep 15 19:%02d:%02d node1 kubelet[607529]: I0915 19:%02d:%02d.534948  607529 prober.go:121] \"Probe failed\" probeType=\"Readiness\" pod=\"ns%d/web-%d\" podUID=\"%08x-aaaa\" containerName=\"web\" probeResult=\"failure\" output=\"Get \\\"http://%s:8080/healthz\\\": dial tcp %s:8080: connect: connection refused\"\n",
				i/60%60, s, i/60%60, s, i%97, i, i, ip4(10, i), ip4(10, i))
		case 1:
			fmt.Fprintf(b, "Sep 15 19:%02d:%02d node1 kubelet[607529]: E0915 19:%02d:%02d.600001  607529 pod_workers.go:1301] \"Error syncing pod, skipping\" err=\"failed to \\\"StartContainer\\\" for \\\"web\\\" with CrashLoopBackOff\" pod=\"ns%d/web-%d\"\n",
				i/60%60, s, i/60%60, s, i%97, i)
		default:
			fmt.Fprintf(b, "Sep 15 19:%02d:%02d node1 kubelet[607529]: W0915 19:%02d:%02d.700002  607529 reflector.go:535] k8s.io/client-go/informers/factory.go:150: failed to list *v1.Service: Get \"https://10.96.0.1:443/api/v1/services?limit=500\": dial tcp 10.96.0.1:443: i/o timeout\n",
				i/60%60, s, i/60%60, s)
		}
	})
}

func genEtcdLog(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "2018-12-04 22:%02d:%02d.%06d W | etcdserver: read-only range request \"key:\\\"/registry/services/endpoints/ns%d/svc%d\\\" \" with result \"range_response_count:1 size:%d\" took too long (%dms) to execute\n",
			i/60%60, i%60, i%1000000, i%97, i, 300+i%500, 100+i%900)
	})
}

func genFelixLog(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "2021-02-28 22:%02d:%02d.%03d [INFO][47] int_dataplane.go 1035: Applying dataplane updates ipSetsToApply=%d\n",
			i/60%60, i%60, i%1000, i%97)
	})
}

func genWeaveLog(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "INFO: 2019/10/08 09:%02d:%02d.%06d ->[%s:6783] connection accepted\n",
			i/60%60, i%60, i%1000000, ip4(10, 0x010000+i%65536))
	})
}

func genGoLog(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "2019/01/21 15:%02d:%02d.%06d main.go:%d: dial tcp %s:443: connect: no route to host\n",
			i/60%60, i%60, i%1000000, 40+i%20, ip4(10, 0x010000+i%65536))
	})
}

func genUFWStatus(n int) []byte {
	head := "Status: active\nLogging: on (low)\nDefault: deny (incoming), allow (outgoing), deny (routed)\n" +
		"New profiles: skip\n\nTo                         Action      From\n--                         ------      ----\n"
	return genLines(head, n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "%-26s ALLOW IN    %s\n", fmt.Sprintf("%d/tcp", 1024+i%60000), ip4(10, 0x010000+i%65536))
	})
}

func genCiliumMonitor(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "xx drop (Policy denied) flow 0x%08x to endpoint %d, identity %d->%d: %s:%d -> %s:80 tcp SYN\n",
			i, i%4096, 10000+i%97, 20000+i%89, ip4(10, 0x010000+i%65536), 32768+i%28000, ip4(10, 0x020000+i%251))
	})
}

func genJSONLog(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, `{"caller":"service_controller.go:60","controller":"ServiceReconciler","level":"info","msg":"start reconcile","service":"ns%d/svc%d","ts":"2024-06-04T23:%02d:%02dZ","ips":["%s"]}`+"\n",
			i%97, i, i/60%60, i%60, ip4(192, 0xA80000+i%65536))
	})
}

func genLogfmt(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, `time="2024-06-05T10:%02d:%02d.123456Z" level=warning msg="cleanup warnings time=\"2024-06-05T10:01:04Z\" level=info msg=\"starting signal loop\"" id=%016x namespace=k8s.io`+"\n",
			i/60%60, i%60, uint64(i)*0x9E3779B97F4A7C15)
	})
}

func genNginxAccess(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "%s - - [04/Jun/2024:23:%02d:%02d +0000] \"GET /api/v1/items/%d HTTP/1.1\" %d %d \"-\" \"kube-probe/1.28\" \"-\"\n",
			ip4(10, i), i/60%60, i%60, i, []int{200, 200, 200, 502, 404}[i%5], 100+i%4000)
	})
}

func genNginxError(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "2024/06/04 23:%02d:%02d [error] 137992#137992: *%d connect() failed (113: No route to host) while connecting to upstream, client: %s, server: example.com, request: \"GET /grafana/ HTTP/1.1\", upstream: \"http://192.168.200.99:80/grafana/\", host: \"example.com\"\n",
			i/60%60, i%60, i, ip4(10, i))
	})
}

func genCoreDNS(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		switch i % 4 {
		case 0:
			fmt.Fprintf(b, "[INFO] plugin/kubernetes: pkg/mod/k8s.io/client-go@v0.27.4/tools/cache/reflector.go:231: failed to list *v1.Service: Get \"https://10.96.0.1:443/api/v1/services?limit=500&resourceVersion=0\": dial tcp 10.96.0.1:443: i/o timeout\n")
		case 1:
			fmt.Fprintf(b, "[INFO] plugin/kubernetes: Trace[%d]: \"Reflector ListAndWatch\" name:pkg/mod/k8s.io/client-go@v0.27.4/tools/cache/reflector.go:231 (08-Oct-2024 18:09:15.015) (total time: 30007ms):\nTrace[%d]: [30.007665517s] [30.007665517s] END\n", i, i)
		case 2:
			fmt.Fprintf(b, "2024-10-08T18:%02d:%02d.123Z [ERROR] plugin/errors: 2 example%d.com. A: read udp %s:41000->8.8.8.8:53: i/o timeout\n", i/60%60, i%60, i, ip4(10, i))
		default:
			fmt.Fprintf(b, "[INFO] %s:%d - %d \"A IN svc%d.default.svc.cluster.local. udp 29 false 512\" NOERROR qr,aa,rd 106 0.000123s\n", ip4(10, i), 30000+i%30000, i%65536, i)
		}
	})
}

func genIPVSadm(n int) []byte {
	return genLines("IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "TCP  %s:80 rr\n", ip4(10, 0x600000+i))
		for e := range 3 {
			fmt.Fprintf(b, "  -> %-28s Masq    1      %-10d %d\n", ip4(10, 0xF40000+3*i+e)+":8080", e, i%7)
		}
	})
}

// kubeProxyChains describes the nat table kube-proxy's iptables mode
// writes for n ClusterIP Services with three endpoints each, the same
// layout as parsetest.KubeProxySave, as -nvL rows.
func genIPTablesList(n int) []byte {
	svc := func(i int) string { return fmt.Sprintf("KUBE-SVC-%016X", uint64(i)*0x9E3779B97F4A7C15) }
	sep := func(i, e int) string { return fmt.Sprintf("KUBE-SEP-%016X", uint64(i*3+e+1)*0xC2B2AE3D27D4EB4F) }
	epIP := func(i, e int) string { k := i*3 + e; return fmt.Sprintf("10.%d.%d.%d", 244+k>>16, byte(k>>8), byte(k)) }
	cip := func(i int) string { return fmt.Sprintf("10.96.%d.%d", byte(i>>8), byte(i)) }
	const hdr = " pkts bytes target     prot opt in     out     source               destination         \n"
	row := func(b *bytes.Buffer, target, prot, src, dst, extra string) {
		fmt.Fprintf(b, "    0     0 %-10s %-4s --  *      *       %-20s %-20s %s\n", target, prot, src, dst, extra)
	}
	any := "0.0.0.0/0"
	var b bytes.Buffer
	b.WriteString("Chain PREROUTING (policy ACCEPT 0 packets, 0 bytes)\n" + hdr)
	row(&b, "KUBE-SERVICES", "0", any, any, "/* kubernetes service portals */")
	b.WriteString("\nChain INPUT (policy ACCEPT 0 packets, 0 bytes)\n" + hdr)
	b.WriteString("\nChain OUTPUT (policy ACCEPT 0 packets, 0 bytes)\n" + hdr)
	row(&b, "KUBE-SERVICES", "0", any, any, "/* kubernetes service portals */")
	b.WriteString("\nChain POSTROUTING (policy ACCEPT 0 packets, 0 bytes)\n" + hdr)
	row(&b, "KUBE-POSTROUTING", "0", any, any, "/* kubernetes postrouting rules */")
	b.WriteString("\nChain KUBE-MARK-MASQ (0 references)\n" + hdr)
	row(&b, "MARK", "0", any, any, "MARK or 0x4000")
	b.WriteString("\nChain KUBE-POSTROUTING (1 references)\n" + hdr)
	row(&b, "RETURN", "0", any, any, "mark match ! 0x4000/0x4000")
	row(&b, "MARK", "0", any, any, "MARK xor 0x4000")
	row(&b, "MASQUERADE", "0", any, any, "/* kubernetes service traffic requiring SNAT */ random-fully")
	for i := range n {
		for e := range 3 {
			fmt.Fprintf(&b, "\nChain %s (1 references)\n%s", sep(i, e), hdr)
			row(&b, "KUBE-MARK-MASQ", "0", epIP(i, e), any, fmt.Sprintf("/* ns%d/svc%d:http */", i%97, i))
			row(&b, "DNAT", "6", any, any, fmt.Sprintf("/* ns%d/svc%d:http */ tcp to:%s:8080", i%97, i, epIP(i, e)))
		}
	}
	b.WriteString("\nChain KUBE-SERVICES (2 references)\n" + hdr)
	for i := range n {
		row(&b, svc(i), "6", any, cip(i), fmt.Sprintf("/* ns%d/svc%d:http cluster IP */ tcp dpt:80", i%97, i))
	}
	row(&b, "KUBE-NODEPORTS", "0", any, any, "/* kubernetes service nodeports; NOTE: this must be the last rule in this chain */ ADDRTYPE match dst-type LOCAL")
	for i := range n {
		fmt.Fprintf(&b, "\nChain %s (1 references)\n%s", svc(i), hdr)
		row(&b, "KUBE-MARK-MASQ", "6", "!10.244.0.0/16", cip(i), fmt.Sprintf("/* ns%d/svc%d:http cluster IP */ tcp dpt:80", i%97, i))
		row(&b, sep(i, 0), "0", any, any, fmt.Sprintf("/* ns%d/svc%d:http -> %s:8080 */ statistic mode random probability 0.33333333349", i%97, i, epIP(i, 0)))
		row(&b, sep(i, 1), "0", any, any, fmt.Sprintf("/* ns%d/svc%d:http -> %s:8080 */ statistic mode random probability 0.50000000000", i%97, i, epIP(i, 1)))
		row(&b, sep(i, 2), "0", any, any, fmt.Sprintf("/* ns%d/svc%d:http -> %s:8080 */", i%97, i, epIP(i, 2)))
	}
	return b.Bytes()
}

// genIPTablesS writes parsetest.KubeProxySave's ruleset as `iptables -t nat -S`
// prints it: policies, chains, then the rules.
func genIPTablesS(n int) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(string(parsetest.KubeProxySave(n)), "\n") {
		switch {
		case line == "" || line[0] == '#' || line[0] == '*' || line == "COMMIT":
		case line[0] == ':':
			name, policy, _ := strings.Cut(line[1:], " ")
			policy, _, _ = strings.Cut(policy, " ")
			if policy == "-" {
				fmt.Fprintf(&b, "-N %s\n", name)
			} else {
				fmt.Fprintf(&b, "-P %s %s\n", name, policy)
			}
		default:
			b.WriteString(line + "\n")
		}
	}
	return b.Bytes()
}

// genNft writes the ruleset kube-proxy's nftables mode keeps for n
// ClusterIP Services with three endpoints each (`nft list table ip
// kube-proxy`).
func genNft(n int) []byte {
	chain := func(i int) string {
		return fmt.Sprintf("service-%08X-ns%d/svc%d/tcp/http", uint32(uint64(i)*0x9E3779B9), i%97, i)
	}
	epIP := func(i, e int) string { return ip4(10, 0xF40000+3*i+e) }
	ep := func(i, e int) string {
		return fmt.Sprintf("endpoint-%08X-ns%d/svc%d/tcp/http__%s/8080", uint32(uint64(i*3+e+1)*0xC2B2AE3D), i%97, i, epIP(i, e))
	}
	cip := func(i int) string { return ip4(10, 0x600000+i) }
	var b bytes.Buffer
	b.WriteString("table ip kube-proxy {\n\tcomment \"rules for kube-proxy\"\n\tset cluster-ips {\n\t\ttype ipv4_addr\n\t\tcomment \"Active ClusterIPs\"\n\t\telements = { ")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n\t\t\t     ")
		}
		b.WriteString(cip(i))
	}
	b.WriteString(" }\n\t}\n\n\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n\t\tcomment \"ClusterIP, ExternalIP and LoadBalancer IP traffic\"\n\t\telements = { ")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n\t\t\t     ")
		}
		fmt.Fprintf(&b, "%s . tcp . 80 : goto %s", cip(i), chain(i))
	}
	b.WriteString(` }
	}

	chain nat-prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		jump services
	}

	chain nat-output {
		type nat hook output priority -100; policy accept;
		jump services
	}

	chain nat-postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		jump masquerading
	}

	chain mark-for-masquerade {
		meta mark set meta mark | 0x00004000
	}

	chain masquerading {
		meta mark & 0x00004000 == 0x00000000 return
		meta mark set meta mark ^ 0x00004000
		masquerade fully-random
	}

	chain services {
		ip daddr . meta l4proto . th dport vmap @service-ips
	}
`)
	for i := range n {
		fmt.Fprintf(&b, "\n\tchain %s {\n\t\tip daddr %s tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade comment \"ns%d/svc%d:http cluster IP\"\n\t\tnumgen random mod 3 vmap { 0 : goto %s, 1 : goto %s, 2 : goto %s } comment \"ns%d/svc%d:http\"\n\t}\n",
			chain(i), cip(i), i%97, i, ep(i, 0), ep(i, 1), ep(i, 2), i%97, i)
		for e := range 3 {
			fmt.Fprintf(&b, "\n\tchain %s {\n\t\tip saddr %s jump mark-for-masquerade comment \"ns%d/svc%d:http hairpin\"\n\t\tmeta l4proto tcp dnat to %s:8080 comment \"ns%d/svc%d:http\"\n\t}\n",
				ep(i, e), epIP(i, e), i%97, i, epIP(i, e), i%97, i)
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// benchServices returns n Services as kubectl prints them in a List.
func benchServices(n int) map[string]any {
	items := make([]any, n)
	for i := range items {
		name, ns := fmt.Sprintf("svc%d", i), fmt.Sprintf("ns%d", i%97)
		cip := ip4(10, 0x600000+i)
		items[i] = map[string]any{
			"apiVersion": "v1",
			"kind":       "Service",
			"metadata": map[string]any{
				"name": name, "namespace": ns, "uid": fmt.Sprintf("%08x-1111-2222-3333-444455556666", i),
				"resourceVersion": fmt.Sprint(1000 + i), "creationTimestamp": "2024-06-04T23:38:19Z",
				"labels":      map[string]any{"app": name, "app.kubernetes.io/managed-by": "Helm"},
				"annotations": map[string]any{"meta.helm.sh/release-name": name, "meta.helm.sh/release-namespace": ns},
			},
			"spec": map[string]any{
				"type": "NodePort", "clusterIP": cip, "clusterIPs": []any{cip},
				"externalTrafficPolicy": "Cluster", "internalTrafficPolicy": "Cluster",
				"ipFamilies": []any{"IPv4"}, "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None",
				"selector": map[string]any{"app": name},
				"ports": []any{
					map[string]any{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080, "nodePort": 30000 + i%2768},
					map[string]any{"name": "metrics", "port": 9090, "protocol": "TCP", "targetPort": "metrics"},
				},
			},
			"status": map[string]any{"loadBalancer": map[string]any{}},
		}
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": items}
}

func genServicesJSON(n int) []byte {
	b, err := json.MarshalIndent(benchServices(n), "", "    ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// genGoldpinger writes the check_all of n goldpinger pods, one per node,
// each of which reached every other, as goldpinger prints it (Go maps,
// keys sorted) and troubleshoot stores it (four-space indents).
func genGoldpinger(n int) []byte {
	type result struct {
		HostIP   string         `json:"HostIP"`
		OK       bool           `json:"OK"`
		PingTime string         `json:"PingTime"`
		PodIP    string         `json:"PodIP"`
		Response map[string]any `json:"response"`
		Status   int            `json:"status-code"`
		Latency  int            `json:"response-time-ms"`
	}
	pod := func(i int) (name, podIP, hostIP string) {
		return fmt.Sprintf("goldpinger-%05d", i), ip4(10, 0x2c0000+i*256+2), ip4(100, 0x480000+i)
	}
	hosts := []map[string]string{}
	responses := map[string]any{}
	for i := range n {
		name, podIP, hostIP := pod(i)
		hosts = append(hosts, map[string]string{"hostIP": hostIP, "podIP": podIP, "podName": name})
		results := map[string]result{}
		for j := range n {
			to, toIP, toHost := pod(j)
			results[to] = result{HostIP: toHost, OK: true, PingTime: "2023-12-09T18:56:15.316Z", PodIP: toIP,
				Response: map[string]any{"boot_time": "2023-12-09T16:28:08.210Z"}, Status: 200, Latency: 1 + (i+j)%7}
		}
		responses[name] = map[string]any{"HostIP": hostIP, "OK": true, "PodIP": podIP,
			"response": map[string]any{"podResults": results}}
	}
	b, err := json.MarshalIndent(map[string]any{"hosts": hosts, "responses": responses}, "", "    ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// genServicesYAML writes n Services as kubectl get -o yaml prints a List:
// two-space indents, sequences at their key's indent, the List's kind last.
func genServicesYAML(n int) []byte {
	b := genLines("apiVersion: v1\nitems:\n", n, func(b *bytes.Buffer, i int) {
		name, ns, cip := fmt.Sprintf("svc%d", i), fmt.Sprintf("ns%d", i%97), ip4(10, 0x600000+i)
		fmt.Fprintf(b, `- apiVersion: v1
  kind: Service
  metadata:
    annotations:
      meta.helm.sh/release-name: %[1]s
      meta.helm.sh/release-namespace: %[2]s
    creationTimestamp: "2024-06-04T23:38:19Z"
    labels:
      app: %[1]s
      app.kubernetes.io/managed-by: Helm
    name: %[1]s
    namespace: %[2]s
    resourceVersion: "%[4]d"
    uid: %08[5]x-1111-2222-3333-444455556666
  spec:
    clusterIP: %[3]s
    clusterIPs:
    - %[3]s
    externalTrafficPolicy: Cluster
    internalTrafficPolicy: Cluster
    ipFamilies:
    - IPv4
    ipFamilyPolicy: SingleStack
    ports:
    - name: http
      nodePort: %[6]d
      port: 80
      protocol: TCP
      targetPort: 8080
    - name: metrics
      port: 9090
      protocol: TCP
      targetPort: metrics
    selector:
      app: %[1]s
    sessionAffinity: None
    type: NodePort
  status:
    loadBalancer: {}
`, name, ns, cip, 1000+i, i, 30000+i%2768)
	})
	return append(b, "kind: List\nmetadata:\n  resourceVersion: \"\"\n"...)
}

// genTcpdump writes n/3 handshakes (SYN, SYN/ACK, ACK) as tcpdump -nn
// prints them.
func genTcpdump(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		k, ts := i/3, fmt.Sprintf("14:%02d:%02d.%06d", i/60000%60, i/1000%60, i%1000*1000)
		cli, srv := fmt.Sprintf("%s.%d", ip4(10, 0x0A0000+k/20000), 32768+k%20000), "10.150.79.151.6443"
		isn := uint32(k) * 2654435761
		switch i % 3 {
		case 0:
			fmt.Fprintf(b, "%s IP %s > %s: Flags [S], seq %d, win 64240, options [mss 1460,sackOK,TS val %d ecr 0,nop,wscale 7], length 0\n", ts, cli, srv, isn, k)
		case 1:
			fmt.Fprintf(b, "%s IP %s > %s: Flags [S.], seq %d, ack %d, win 65160, options [mss 1460,sackOK,TS val %d ecr %d,nop,wscale 7], length 0\n", ts, srv, cli, isn^0x5555, isn+1, k, k)
		default:
			fmt.Fprintf(b, "%s IP %s > %s: Flags [.], ack 1, win 502, options [nop,nop,TS val %d ecr %d], length 0\n", ts, cli, srv, k, k)
		}
	})
}

// genTshark writes n/3 handshakes as tshark's packet list.
func genTshark(n int) []byte {
	return genLines("No. Time Source Destination Protocol Length Info\n", n, func(b *bytes.Buffer, i int) {
		k, ts := i/3, fmt.Sprintf("%d.%06d", i/1000, i%1000*1000)
		cli, port := ip4(10, 0x170000+k/20000), 32768+k%20000
		switch i % 3 {
		case 0:
			fmt.Fprintf(b, "%d %s %s → 10.23.77.138 TCP 74 %d → 80 [SYN] Seq=0 Win=64240 Len=0 MSS=1460 SACK_PERM=1 WS=128\n", i+1, ts, cli, port)
		case 1:
			fmt.Fprintf(b, "%d %s 10.23.77.138 → %s TCP 74 80 → %d [SYN, ACK] Seq=0 Ack=1 Win=65160 Len=0 MSS=1460 SACK_PERM=1 WS=128\n", i+1, ts, cli, port)
		default:
			fmt.Fprintf(b, "%d %s %s → 10.23.77.138 TCP 66 %d → 80 [ACK] Seq=1 Ack=1 Win=502 Len=0\n", i+1, ts, cli, port)
		}
	})
}

func genSS(n int) []byte {
	return genLines("State      Recv-Q Send-Q        Local Address:Port          Peer Address:Port Process\n", n, func(b *bytes.Buffer, i int) {
		state := []string{"ESTAB", "TIME-WAIT", "ESTAB", "SYN-SENT", "CLOSE-WAIT"}[i%5]
		fmt.Fprintf(b, "%-10s 0      0      %21s %26s users:((\"kubelet\",pid=%d,fd=%d))\n",
			state, fmt.Sprintf("%s:%d", ip4(10, 0x0A0000+i/28000), 32768+i%28000), fmt.Sprintf("%s:443", ip4(10, 0x600000+i%500)), 812, 10+i%1000)
	})
}

func genNetstat(n int) []byte {
	return genLines("Active Internet connections (servers and established)\nProto Recv-Q Send-Q Local Address           Foreign Address         State       PID/Program name\n", n, func(b *bytes.Buffer, i int) {
		state := []string{"ESTABLISHED", "TIME_WAIT", "ESTABLISHED", "SYN_SENT", "CLOSE_WAIT"}[i%5]
		fmt.Fprintf(b, "tcp        0      0 %-23s %-23s %-11s %s\n",
			fmt.Sprintf("%s:%d", ip4(10, 0x0A0000+i/28000), 32768+i%28000), fmt.Sprintf("%s:443", ip4(10, 0x600000+i%500)), state, "812/kubelet")
	})
}

func genNeigh(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		state := []string{"REACHABLE", "STALE", "DELAY", "PERMANENT"}[i%4]
		fmt.Fprintf(b, "%s dev cali%07x lladdr ee:ee:ee:%02x:%02x:%02x %s\n", ip4(10, 0xF40000+i), i, byte(i>>16), byte(i>>8), byte(i), state)
	})
}

func genNeighCount(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "root@node-%d:~# arp -an | wc -l\n%d\n", i, 100+i%2000)
	})
}

func genResolvConf(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "root@node-%d:~# cat /etc/resolv.conf\n# Generated by NetworkManager\nsearch lan\nnameserver %s\nnameserver 10.0.0.2\n", i, ip4(10, 0x0A0000+i))
	})
}

func genAddr(n int) []byte {
	return genLines("5: kube-ipvs0: <BROADCAST,NOARP> mtu 1500 qdisc noop state DOWN group default \n    link/ether 6e:2c:3a:1b:9f:00 brd ff:ff:ff:ff:ff:ff\n", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "    inet %s/32 scope global kube-ipvs0\n       valid_lft forever preferred_lft forever\n", ip4(10, 0x600000+i))
	})
}

func genLink(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "%d: veth%08x@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue master cni0 state UP mode DEFAULT group default \n"+
			"    link/ether 02:71:%02x:%02x:%02x:%02x brd ff:ff:ff:ff:ff:ff link-netns cni-%d promiscuity 1  allmulti 1 minmtu 68 maxmtu 65535 \n"+
			"    veth \n    bridge_slave state forwarding priority 32 cost 2 hairpin on guard off root_block off fastleave off learning on flood on \n",
			i+4, i, byte(i>>24), byte(i>>16), byte(i>>8), byte(i), i)
	})
}

func genLinkJSON(n int) []byte {
	return genJSONArray(n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, `{"ifindex":%d,"link_index":3,"ifname":"veth%08x","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":1450,"qdisc":"noqueue","master":"cni0","operstate":"UP","linkmode":"DEFAULT","group":"default","link_type":"ether","address":"02:71:%02x:%02x:%02x:%02x","broadcast":"ff:ff:ff:ff:ff:ff","linkinfo":{"info_kind":"veth","info_slave_kind":"bridge","info_slave_data":{"state":"forwarding","priority":32,"cost":2,"hairpin":true,"guard":false}}}`,
			i+4, i, byte(i>>24), byte(i>>16), byte(i>>8), byte(i))
	})
}

func genHairpin(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "/sys/class/net/veth%08x/brport/hairpin_mode:%d\n", i, 1-i%2)
	})
}

func genNstat(n int) []byte {
	return genLines("#kernel\n", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "TcpExtCounter%08x%*d%19s\n", i, 18, i*7, "0.0")
	})
}

func genNetstatStats(n int) []byte {
	return genLines("TcpExt:\n    18 times the listen queue of a socket overflowed\n", n-1, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "    TCPCounter%08x: %d\n", i, i*7)
	})
}

func genRoute(n int) []byte {
	return genLines("default via 172.18.0.1 dev eth0 proto dhcp src 172.18.0.2 metric 100 \n", n-1, func(b *bytes.Buffer, i int) {
		if i%64 == 63 {
			fmt.Fprintf(b, "blackhole %s/26 proto bird \n", ip4(10, 0xF40000+i-63))
			return
		}
		fmt.Fprintf(b, "%s dev cali%07x scope link \n", ip4(10, 0xF40000+i), i)
	})
}

// genJSONArray writes n entries of an ip -j array, one line as ip prints it.
func genJSONArray(n int, entry func(b *bytes.Buffer, i int)) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		entry(&b, i)
	}
	b.WriteString("]\n")
	return b.Bytes()
}

func genNeighJSON(n int) []byte {
	return genJSONArray(n, func(b *bytes.Buffer, i int) {
		state := []string{"REACHABLE", "STALE", "DELAY", "PERMANENT"}[i%4]
		fmt.Fprintf(b, `{"dst":"%s","dev":"cali%07x","lladdr":"ee:ee:ee:%02x:%02x:%02x","state":["%s"]}`, ip4(10, 0xF40000+i), i, byte(i>>16), byte(i>>8), byte(i), state)
	})
}

func genAddrJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`[{"ifindex":5,"ifname":"kube-ipvs0","flags":["BROADCAST","NOARP"],"mtu":1500,"qdisc":"noop","operstate":"DOWN","group":"default","txqlen":1000,"link_type":"ether","address":"6e:2c:3a:1b:9f:00","broadcast":"ff:ff:ff:ff:ff:ff","addr_info":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"family":"inet","local":"%s","prefixlen":32,"scope":"global","label":"kube-ipvs0","valid_life_time":4294967295,"preferred_life_time":4294967295}`, ip4(10, 0x600000+i))
	}
	b.WriteString("]}]\n")
	return b.Bytes()
}

func genRouteJSON(n int) []byte {
	return genJSONArray(n, func(b *bytes.Buffer, i int) {
		switch {
		case i == 0:
			b.WriteString(`{"dst":"default","gateway":"172.18.0.1","dev":"eth0","protocol":"dhcp","prefsrc":"172.18.0.2","metric":100,"flags":[]}`)
		case i%64 == 63:
			fmt.Fprintf(b, `{"type":"blackhole","dst":"%s/26","protocol":"bird","flags":[]}`, ip4(10, 0xF40000+i-63))
		default:
			fmt.Fprintf(b, `{"dst":"%s","dev":"cali%07x","scope":"link","flags":[]}`, ip4(10, 0xF40000+i), i)
		}
	})
}

func genConntrack(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		cli, pod := ip4(10, 0xF40000+i/20000), ip4(10, 0xF50000+i%300)
		sport := 32768 + i%20000
		if i%4 == 0 {
			fmt.Fprintf(b, "udp      17 29 src=%s dst=10.96.0.10 sport=%d dport=53 src=%s dst=%s sport=53 dport=%d mark=0 use=1\n", cli, sport, pod, cli, sport)
			return
		}
		fmt.Fprintf(b, "tcp      6 86399 ESTABLISHED src=%s dst=%s sport=%d dport=443 src=%s dst=%s sport=8443 dport=%d [ASSURED] mark=0 use=1\n",
			cli, ip4(10, 0x600000+i%500), sport, pod, cli, sport)
	})
}

func genVersion(n int) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"info\": {\n    \"major\": \"1\",\n    \"minor\": \"31\",\n    \"gitVersion\": \"v1.31.2+k3s1\",\n")
	for i := range n {
		fmt.Fprintf(&b, "    \"extra%d\": \"value %d\",\n", i, i)
	}
	b.WriteString("    \"platform\": \"linux/amd64\"\n  },\n  \"string\": \"v1.31.2+k3s1\"\n}\n")
	return b.Bytes()
}

func genDNSDebug(n int) []byte {
	eps := make([]string, n)
	for i := range eps {
		eps[i] = fmt.Sprintf("%s:53", ip4(10, 0x2A0000+i))
	}
	return fmt.Appendf(nil, `{"kubernetesClusterIP":"10.43.0.1","podResolvConf":"search default.svc.cluster.local\nnameserver 10.43.0.10\noptions ndots:5\n",`+
		`"query":{"kubernetes":{"name":"kubernetes","address":"10.43.0.1"}},"kubeDNSPods":["coredns-56f6fc8fd7-p4x9z"],"kubeDNSService":"10.43.0.10","kubeDNSEndpoints":"%s"}`+"\n",
		strings.Join(eps, ","))
}

func genConntrackEvents(n int) []byte {
	tags := [...]string{"    [NEW]", " [UPDATE]", "[DESTROY]"}
	return genLines("", n, func(b *bytes.Buffer, i int) {
		cli, pod := ip4(10, 0xF40000+i/20000), ip4(10, 0xF50000+i%300)
		sport := 32768 + (i/3)%20000
		fmt.Fprintf(b, "[%d.%06d]\t%s tcp      6 120 SYN_SENT src=%s dst=10.96.0.1 sport=%d dport=443 [UNREPLIED] src=%s dst=%s sport=6443 dport=%d\n",
			1795538917+i/1000, i%1000000, tags[i%3], cli, sport, pod, cli, sport)
	})
}

func genDmesg(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		if i%4 == 3 {
			fmt.Fprintf(b, "[%d.%06d] nf_conntrack: nf_conntrack: table full, dropping packet\n", 2419613+i/1000, i%1000000)
			return
		}
		fmt.Fprintf(b, "[%d.%06d] cni0: port %d(veth%07x) entered forwarding state\n", 2419613+i/1000, i%1000000, i%32+1, i)
	})
}

func genCRI(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		ts := fmt.Sprintf("2026-11-23T13:%02d:%02d.%09dZ", i/60%60, i%60, i%1000000000)
		klog := fmt.Sprintf("E1123 13:%02d:%02d.%06d       1 reflector.go:138] failed to list *v1.Service: dial tcp 10.96.0.1:443: i/o timeout", i/60%60, i%60, i%1000000)
		if i%10 == 9 {
			fmt.Fprintf(b, "%s stderr P %s\n%s stderr F %s\n", ts, klog[:40], ts, klog[40:])
			return
		}
		fmt.Fprintf(b, "%s stderr F %s\n", ts, klog)
	})
}

func genJournalJSON(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, `{"__REALTIME_TIMESTAMP":"%d","_HOSTNAME":"node1","SYSLOG_IDENTIFIER":"kubelet","_PID":"811","PRIORITY":"6",`+
			`"_SYSTEMD_UNIT":"kubelet.service","MESSAGE":"I1123 13:%02d:%02d.%06d     811 kubelet_node_status.go:497] \"Using Node Hostname\""}`+"\n",
			1795000000000000+int64(i)*1000, i/60%60, i%60, i%1000000)
	})
}

func genDockerJSON(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, `{"log":"I1123 13:%02d:%02d.%06d       1 proxier.go:865] \"Syncing iptables rules\"\n","stream":"stderr","time":"2026-11-23T13:%02d:%02d.%09dZ"}`+"\n",
			i/60%60, i%60, i%1000000, i/60%60, i%60, i%1000000000)
	})
}

func genConntrackStats(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "cpu=%d   \tfound=%d invalid=%d insert=0 insert_failed=%d drop=%d early_drop=0 error=0 search_restart=%d clash_resolve=%d chaintoolong=0 \n",
			i, 8000000+i, i%97, i%5, i%5, i%23, i%11)
	})
}

func genSettings(n int) []byte {
	return genLines("# kubespray group_vars\n", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "kube_vip_setting_%d: %q\n", i, fmt.Sprint(i%2 == 0))
	})
}

func genProbes(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "root@toolbox:~# for i in $(seq 1 100); do nc -zv -w 1 %s 53; done\n", ip4(10, 0x600000+i))
		for j := range 100 {
			if j%4 == 0 {
				fmt.Fprintf(b, "nc: connect to %s port 53 (tcp) failed: Connection refused\n", ip4(10, 0x600000+i))
			} else {
				fmt.Fprintf(b, "Connection to %s 53 port [tcp/domain] succeeded!\n", ip4(10, 0x600000+i))
			}
		}
	})
}

func genRules(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "%d:\tfrom %s to 10.0.0.0/16 lookup %d\n", 1000+i, ip4(10, 0x600000+i), 2+i%8)
	})
}

func genClient(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		addr := ip4(10, 0x600000+i)
		switch i % 3 {
		case 0:
			fmt.Fprintf(b, "$ curl -v http://%s:8080/\n*   Trying %s:8080...\n* connect to %s port 8080 failed: Connection refused\n"+
				"curl: (7) Failed to connect to %s port 8080 after 0 ms: Couldn't connect to server\n", addr, addr, addr, addr)
		case 1:
			fmt.Fprintf(b, "$ nc -zv %s 443\nConnection to %s 443 port [tcp/https] succeeded!\n", addr, addr)
		default:
			fmt.Fprintf(b, "$ dig @%s web%d.default.svc.cluster.local\n;; ->>HEADER<<- opcode: QUERY, status: NXDOMAIN, id: %d\n"+
				";; SERVER: %s#53(%s)\n;; MSG SIZE  rcvd: 124\n", addr, i, i%65536, addr, addr)
		}
	})
}

func genSession(n int) []byte {
	return genLines("", n, func(b *bytes.Buffer, i int) {
		switch i % 3 {
		case 0:
			b.WriteString("user@laptop ~ % kubectl get svc -A\nNAMESPACE   NAME   TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE\n")
			for j := range 20 {
				fmt.Fprintf(b, "ns%d   svc%d-%d   ClusterIP   %s   <none>   80/TCP   3d\n", j, i, j, ip4(10, 0x600000+i*20+j))
			}
		case 1:
			b.WriteString("root@node1:~# ss -tan\nState  Recv-Q Send-Q Local Address:Port  Peer Address:Port\n")
			for j := range 20 {
				fmt.Fprintf(b, "ESTAB  0      0      %s:%d  10.0.0.9:443\n", ip4(10, 0x100000+i), 30000+j)
			}
		default:
			b.WriteString("root@node1:~# ip neigh\n")
			for j := range 20 {
				fmt.Fprintf(b, "%s dev eth0 lladdr 02:00:00:00:%02x:%02x REACHABLE\n", ip4(10, 0x200000+i*20+j), j, i%256)
			}
		}
	})
}
