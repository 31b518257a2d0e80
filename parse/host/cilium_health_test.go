package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// ciliumHealthLines prints records one a line, for comparison.
func ciliumHealthLines(out []model.CiliumNodeHealth) string {
	var b strings.Builder
	for _, n := range out {
		fmt.Fprintf(&b, "%d %s local=%t ip=%v host=%s ep=%s epip=%v %q %q %q %q\n", n.Pos.Line, n.Peer, n.Local, n.IP,
			n.Host, n.Endpoint, n.EndpointIP, n.HostICMP, n.HostHTTP, n.EndpointICMP, n.EndpointHTTP)
	}
	return b.String()
}

// SUSE/skuba#403: the table of Cilium before 1.14, grepped out of cilium
// status under the command that printed it.
func TestCiliumHealthTableOld(t *testing.T) {
	in := "kubectl --kubeconfig=./admin.conf -n kube-system exec cilium-bkt5z --  cilium status |grep \"Cluster health\" -A 4\n" +
		"Cluster health:   1/3 reachable   (2019-06-19T10:30:27Z)\n" +
		"  Name            IP              Reachable   Endpoints reachable\n" +
		"  delta1          172.28.0.17     false       true\n" +
		"  delta2          172.28.0.6      false       true\n"
	if s := sniffCiliumHealth("x", []byte(in)); s != 90 {
		t.Errorf("sniff %d", s)
	}
	out, err := CiliumHealth(strings.NewReader(in), "s.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := "4 delta1 local=false ip=172.28.0.17 host=unreachable ep=reachable epip=invalid IP \"\" \"\" \"\" \"\"\n" +
		"5 delta2 local=false ip=172.28.0.6 host=unreachable ep=reachable epip=invalid IP \"\" \"\" \"\" \"\"\n"
	if got := ciliumHealthLines(out); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

// cilium/cilium#33697: the table of Cilium 1.14 and later, with --verbose
// (every node, the reporting one named localhost, addresses of both
// families), inside the rest of cilium-dbg status, whose controllers
// table also starts with a Name column.
func TestCiliumHealthStatusWhole(t *testing.T) {
	in := "root@clustermesh2-worker:/home/cilium# cilium-dbg status --verbose\n" +
		"KVStore:                 Ok   Disabled\n" +
		"Kubernetes:              Ok   1.30 (v1.30.0) [linux/amd64]\n" +
		"Cilium:                  Ok   1.17.0-dev (v1.17.0-dev-7a097b5075)\n" +
		"Allocated addresses:\n" +
		"  10.2.0.241 (ingress)\n" +
		"  10.2.0.55 (health)\n" +
		"Controller Status:   2/2 healthy\n" +
		"  Name                                  Last success   Last error   Count   Message\n" +
		"  cilium-health-ep                      41s ago        never        0       no error\n" +
		"  dns-garbage-collector-job             43s ago        never        0       no error\n" +
		"Cluster health:                                  2/4 reachable             (2024-07-17T12:45:45Z)\n" +
		"  Name                                           IP                        Node          Endpoints\n" +
		"  clustermesh2/clustermesh2-worker (localhost)   172.19.0.4,fc00:c111::4   reachable     reachable\n" +
		"  clustermesh1/clustermesh1-control-plane        172.19.0.3,fc00:c111::3   unreachable   unreachable\n" +
		"  clustermesh1/clustermesh1-worker               Unavailable               unknown       unknown\n" +
		"Modules Health:\n" +
		"  agent\n" +
		"Encryption:              Disabled\n"
	if s := sniffCiliumHealth("x", []byte(in)); s != 95 {
		t.Errorf("sniff %d", s)
	}
	out, err := CiliumHealth(strings.NewReader(in), "s.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := "14 clustermesh2/clustermesh2-worker local=true ip=172.19.0.4 host=reachable ep=reachable epip=invalid IP \"\" \"\" \"\" \"\"\n" +
		"15 clustermesh1/clustermesh1-control-plane local=false ip=172.19.0.3 host=unreachable ep=unreachable epip=invalid IP \"\" \"\" \"\" \"\"\n" +
		"16 clustermesh1/clustermesh1-worker local=false ip=invalid IP host=unknown ep=unknown epip=invalid IP \"\" \"\" \"\" \"\"\n"
	if got := ciliumHealthLines(out); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	if out[0].Node != "clustermesh2-worker" {
		t.Errorf("node %q", out[0].Node)
	}
}

// cilium/cilium#20751's cilium-health status: each node's probes, one
// host ICMP probe timing out; and cilium/cilium#39930's verbose form, the
// table's header above the blocks, secondary addresses of each path.
func TestCiliumHealthProbes(t *testing.T) {
	in := "kubectl -n kube-system exec -ti cilium-74mp9 -- cilium-health status\n" +
		"Defaulted container \"cilium-agent\" out of: cilium-agent, clean-cilium-state (init)\n" +
		"Probe time:   2022-08-02T16:38:44Z\n" +
		"Nodes:\n" +
		"  i-0a6635708701f63de (localhost):\n" +
		"    Host connectivity to 10.9.5.224:\n" +
		"      ICMP to stack:   OK, RTT=1.268091ms\n" +
		"      HTTP to agent:   OK, RTT=130.845µs\n" +
		"    Endpoint connectivity to 100.96.94.134:\n" +
		"      ICMP to stack:   OK, RTT=1.16669ms\n" +
		"      HTTP to agent:   OK, RTT=193.793µs\n" +
		"  i-029bfa9536679a5ef:\n" +
		"    Host connectivity to 10.9.5.85:\n" +
		"      ICMP to stack:   Connection timed out\n" +
		"      HTTP to agent:   OK, RTT=271.373µs\n" +
		"    Endpoint connectivity to 100.98.21.189:\n" +
		"      ICMP to stack:   OK, RTT=1.256168ms\n" +
		"      HTTP to agent:   OK, RTT=374.032µs\n" +
		"root@arch1:/home/cilium# cilium-health status --verbose\n" +
		"Cluster health:   1/3 reachable   (2025-06-06T19:36:53Z)\n" +
		"Name              IP              Node   Endpoints\n" +
		"  arch2:\n" +
		"    Host connectivity to 198.19.249.205:\n" +
		"      ICMP to stack:   OK, RTT=190.001µs\n" +
		"      HTTP to agent:   Get \"http://198.19.249.205:4240/hello\": context deadline exceeded\n" +
		"    Secondary Host connectivity to fd07:b51a:cc66:0:4473:35ff:feae:5093:\n" +
		"      ICMP to stack:   OK, RTT=154.501µs\n" +
		"      HTTP to agent:   OK, RTT=1.2ms\n" +
		"    Endpoint connectivity to 10.52.1.14:\n" +
		"      ICMP to stack:   OK, RTT=173.709µs\n" +
		"      HTTP to agent:   OK, RTT=256.876µs\n" +
		"    Secondary Endpoint connectivity to fd0:cafe:52::d2f1:\n" +
		"      ICMP to stack:   OK, RTT=188.417µs\n" +
		"      HTTP to agent:   Get \"http://[fd0:cafe:52::d2f1]:4240/hello\": context deadline exceeded\n"
	if s := sniffCiliumHealth("x", []byte(in)); s != 95 {
		t.Errorf("sniff %d", s)
	}
	out, err := CiliumHealth(strings.NewReader(in), "s.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := "5 i-0a6635708701f63de local=true ip=10.9.5.224 host=reachable ep=reachable epip=100.96.94.134 \"OK\" \"OK\" \"OK\" \"OK\"\n" +
		"12 i-029bfa9536679a5ef local=false ip=10.9.5.85 host=unreachable ep=reachable epip=100.98.21.189 \"Connection timed out\" \"OK\" \"OK\" \"OK\"\n" +
		"22 arch2 local=false ip=198.19.249.205 host=unreachable ep=partial epip=10.52.1.14 \"OK\" " +
		"\"Get \\\"http://198.19.249.205:4240/hello\\\": context deadline exceeded\" \"OK\" \"OK\"\n"
	if got := ciliumHealthLines(out); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	if out[2].Node != "arch1" || out[0].Table != 1 || out[2].Table != 2 || out[2].Reachable != 1 || out[2].Total != 3 {
		t.Errorf("node %q, tables %d %d, sum %d/%d", out[2].Node, out[0].Table, out[2].Table, out[2].Reachable, out[2].Total)
	}
}

// Cilium 1.17's table: an unindented header, the probe interval after the
// sum, each path's addresses counted; then a second agent's table, pasted
// below the first, numbered apart.
func TestCiliumHealthCounts(t *testing.T) {
	in := "root@worker-1:/home/cilium# cilium-dbg status\n" +
		"KubeProxyReplacement:    True   [eth0   10.0.0.11 fe80::1 (Direct Routing)]\n" +
		"Cluster health:          2/4 reachable   (2025-03-20T10:11:12Z)   (Probe interval: 1m51s)\n" +
		"Name                     IP              Node   Endpoints\n" +
		"  worker-2               10.0.0.12       1/1    0/1\n" +
		"  worker-3               10.0.0.13       1/2    1/1\n" +
		"Modules Health:          Stopped(0) Degraded(0) OK(58)\n" +
		"from worker-3:\n" +
		"Cluster health:          3/4 reachable   (2025-03-20T10:11:40Z)   (Probe interval: 1m51s)\n" +
		"Name                     IP              Node   Endpoints\n" +
		"  worker-1 (localhost)   10.0.0.11       0/1    1/1\n"
	out, err := CiliumHealth(strings.NewReader(in), "s.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := "5 worker-2 local=false ip=10.0.0.12 host=reachable ep=unreachable epip=invalid IP \"\" \"\" \"\" \"\"\n" +
		"6 worker-3 local=false ip=10.0.0.13 host=partial ep=reachable epip=invalid IP \"\" \"\" \"\" \"\"\n" +
		"11 worker-1 local=true ip=10.0.0.11 host=unreachable ep=reachable epip=invalid IP \"\" \"\" \"\" \"\"\n"
	if got := ciliumHealthLines(out); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	if out[0].Table != 1 || out[2].Table != 2 || out[0].Reachable != 2 || out[0].Total != 4 || out[2].Reachable != 3 {
		t.Errorf("tables %d %d, sums %d/%d %d", out[0].Table, out[2].Table, out[0].Reachable, out[0].Total, out[2].Reachable)
	}
}

// A row the table cannot hold, and a probe outside a path, are reported at
// their lines; the rest is read.
func TestCiliumHealthErrors(t *testing.T) {
	in := "Cluster health:   1/2 reachable   (2019-06-19T10:30:27Z)\n" +
		"  Name            IP              Reachable   Endpoints reachable\n" +
		"  delta1          172.28.0.17     maybe       true\n" +
		"  delta2          172.28.0.6      false       true\n" +
		"Probe time:   2022-08-02T16:38:44Z\n" +
		"Nodes:\n" +
		"  n1:\n" +
		"      ICMP to stack:   OK, RTT=1.2ms\n" +
		"    Host connectivity to 10.0.0.1:\n" +
		"      ICMP to stack:   Connection timed out\n"
	out, err := CiliumHealth(strings.NewReader(in), "s.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "s.txt:3 s.txt:8" {
		t.Errorf("errors at %q: %v", got, err)
	}
	if len(out) != 2 || out[0].Peer != "delta2" || out[1].Peer != "n1" || out[1].Host != model.HealthUnreachable {
		t.Errorf("got %s", ciliumHealthLines(out))
	}
}

// cilium status without the health table (the health daemon down) gives
// no record and no error; a listing of another tool is not sniffed.
func TestCiliumHealthNone(t *testing.T) {
	in := "KVStore:                Ok   Disabled\nCilium health daemon:   Ok\n" +
		"Cluster health:                                  Warning   cilium-health daemon unreachable\n" +
		"Encryption:              Disabled\n"
	out, err := CiliumHealth(strings.NewReader(in), "s.txt")
	if err != nil || len(out) != 0 {
		t.Errorf("%v: %s", err, ciliumHealthLines(out))
	}
	if s := sniffCiliumHealth("x", []byte("NAME   READY   STATUS\ncilium-x   1/1   Running\n")); s != 0 {
		t.Errorf("sniff %d", s)
	}
}

func FuzzCiliumHealth(f *testing.F) {
	f.Add("Cluster health:   1/3 reachable   (2019-06-19T10:30:27Z)\n  Name  IP  Reachable  Endpoints reachable\n" +
		"  delta1  172.28.0.17  false  true\n  x (localhost)  Unavailable  unknown  reachable\n")
	f.Add("Nodes:\n  n (localhost):\n    Host connectivity to 10.0.0.1:\n      ICMP to stack:   OK, RTT=1ms\n" +
		"      Secondary connectivity to 10.0.0.2:\n        HTTP to agent:   x\n    Endpoint connectivity:  nil\n" +
		"    Secondary Endpoint connectivity to ::1:\n      HTTP to agent: \n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := CiliumHealth(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, n := range out {
			if n.Pos.Line == 0 || n.Peer == "" {
				t.Fatalf("bad record: %+v", n)
			}
		}
		sniffCiliumHealth("fuzz.txt", []byte(in))
	})
}
