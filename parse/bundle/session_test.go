package bundle_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// A real session on a node (testdata/make-session.sh): each command's
// output is read by its own format, at the file's own line numbers, and is
// an input of its own kind.
func TestSessionReal(t *testing.T) {
	path := filepath.Join(testutil.Root(), "parse/testdata/session/node-session.txt")
	snap, warns, err := parse.Open(context.Background(), path, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	var inputs []string
	for _, in := range snap.Inputs {
		inputs = append(inputs, fmt.Sprintf("%s %s %s %d", filepath.Base(in.Path), in.Format, in.Kind, in.Records))
	}
	want := []string{
		"node-session.txt:1 ip-addr addrs 2", "node-session.txt:8 ip-route routes 2", "node-session.txt:11 ss sockets 1",
		"node-session.txt:14 sysctl sysctl 1", "node-session.txt:16 connect-loop probes 1", "node-session.txt:22 neigh neighbors 1",
		"node-session.txt terminal-session session 8",
	}
	if strings.Join(inputs, "\n") != strings.Join(want, "\n") {
		t.Errorf("inputs:\n%s\nwant:\n%s", strings.Join(inputs, "\n"), strings.Join(want, "\n"))
	}
	for k, line := range map[model.Kind]int{model.KindAddrs: 3, model.KindRoutes: 9, model.KindSockets: 13, model.KindSysctl: 15, model.KindNeighbors: 23} {
		if !snap.Has(k) {
			t.Errorf("no %s evidence", k)
		}
		var got int
		switch k {
		case model.KindAddrs:
			got = snap.Addrs[0].Pos.Line
		case model.KindRoutes:
			got = snap.Routes[0].Pos.Line
		case model.KindSockets:
			got = snap.Sockets[0].Pos.Line
		case model.KindSysctl:
			got = snap.Sysctls[0].Pos.Line
		case model.KindNeighbors:
			got = snap.Neighbors[0].Pos.Line
		}
		if got != line {
			t.Errorf("%s: first record at line %d, want %d", k, got, line)
		}
	}
	if len(snap.Probes) != 1 || snap.Probes[0].Failed != 5 || snap.Probes[0].Attempts != 5 || snap.Probes[0].Node != "worker-1" {
		t.Errorf("probes %+v", snap.Probes)
	}
	if len(snap.Sockets) != 1 || snap.Sockets[0].Node != "worker-1" || snap.Sockets[0].Peer.String() != "10.81.0.2:8080" {
		t.Errorf("sockets %+v", snap.Sockets)
	}
}

func TestSniffSession(t *testing.T) {
	// Two commands are a session too: ss's parser would stumble on the
	// curl after its listing.
	for _, rel := range []string{"parse/testdata/session/node-session.txt", "parse/testdata/session/two-commands.txt"} {
		if f := parsetest.SniffAs(t, parse.Formats(), rel); f != "terminal-session" {
			t.Errorf("%s sniffed as %q", rel, f)
		}
	}
	// One program's outputs, or iptables listings of several commands,
	// are read whole by their own format.
	for rel, want := range map[string]string{
		"parse/testdata/iptables/session.txt":          "iptables-list",
		"parse/testdata/probes/nc-openbsd-lines.txt":   "connect-loop",
		"fixtures/seeds/000-apiserver-affinity/cs.txt": "kubectl-table",
	} {
		if f := parsetest.SniffAs(t, parse.Formats(), rel); f != want {
			t.Errorf("%s sniffed as %q, want %q", rel, f, want)
		}
	}
}

func FuzzSession(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"parse/testdata/session/node-session.txt"})
	f.Add("a@b % cat x\napiVersion: v1\nkind: Pod\n$ ss -tan\nESTAB 0 0 1.2.3.4:1 5.6.7.8:2\n$ ip neigh\n")
	session := sessionFormat()
	f.Fuzz(func(t *testing.T, in string) {
		if session.Sniff("fuzz.txt", []byte(in)) == 0 {
			return
		}
		snap := &model.Snapshot{}
		_, err := session.Parse(context.Background(), strings.NewReader(in), &format.File{Name: "fuzz.txt"}, snap)
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, in := range snap.Inputs {
			if !strings.HasPrefix(in.Path, "fuzz.txt:") {
				t.Fatalf("input %+v", in)
			}
		}
	})
}

// Output of kubectl comes from the cluster, not from the host in the prompt
// (a laptop): it is not given that host as its node; a command run through
// ssh is the ssh host's.
func TestSessionClusterClient(t *testing.T) {
	in := "tim@laptop ~ % kubectl get svc -A\n" +
		"NAMESPACE   NAME         TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE\n" +
		"default     kubernetes   ClusterIP   10.96.0.1    <none>        443/TCP   4d\n" +
		"tim@laptop ~ % ssh node1 ss -tan\n" +
		"State Recv-Q Send-Q Local Address:Port Peer Address:Port\n" +
		"ESTAB 0      0      10.0.0.5:40000     10.96.0.1:443\n" +
		"root@node1:~# ip neigh\n10.0.0.1 dev eth0 lladdr 02:00:00:00:00:01 REACHABLE\n"
	snap := &model.Snapshot{}
	if _, err := sessionFormat().Parse(context.Background(), strings.NewReader(in), &format.File{Name: "s.txt"}, snap); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, in := range snap.Inputs {
		nodes = append(nodes, in.Path+"="+in.Node)
	}
	if got := strings.Join(nodes, " "); got != "s.txt:1= s.txt:4=node1 s.txt:7=node1" {
		t.Errorf("nodes %s", got)
	}
}

// sessionFormat is the terminal-session format of the registry.
func sessionFormat() *format.Format {
	for _, f := range parse.Formats() {
		if f.Name == "terminal-session" {
			return f
		}
	}
	panic("no terminal-session format")
}

// A session pasted with prompts that name no user ("node1 $ ", SUSE's
// "node1:~ # "): split at them, each command's output read with its host
// as the node; a container's log file cat'ed in it is read with the
// namespace, pod and container its name gives.
func TestSessionHostPrompts(t *testing.T) {
	in := `node1 $ sysctl net.ipv4.ip_forward net.ipv4.conf.all.rp_filter
net.ipv4.ip_forward = 1
net.ipv4.conf.all.rp_filter = 2
node1:~ # cat /var/log/containers/kube-proxy-h2n9c_kube-system_kube-proxy-973f6f661fe3987813a0a9c800b0ff741e41fe3281bf618a9685aa1fb18d16b4.log
2026-11-23T13:19:08.532911123Z stderr F E1123 13:19:08.532911       1 reflector.go:138] failed to list *v1.Service: i/o timeout
2026-11-23T13:19:09.000100456Z stderr F I1123 13:19:09.000100       1 proxier.go:865] "Syncing iptables rules"
node2:/root# ip route
default via 10.0.0.1 dev eth0
10.0.0.0/24 dev eth0 proto kernel scope link src 10.0.0.12
`
	snap := openSession(t, in)
	var inputs []string
	for _, in := range snap.Inputs {
		inputs = append(inputs, fmt.Sprintf("%s %s %s %d", filepath.Base(in.Path), in.Format, in.Node, in.Records))
	}
	want := "session.txt:1 sysctl node1 2\nsession.txt:4 cri-log node1 2\nsession.txt:7 ip-route node2 2\nsession.txt terminal-session  6"
	if got := strings.Join(inputs, "\n"); got != want {
		t.Errorf("inputs:\n%s\nwant:\n%s", got, want)
	}
	if len(snap.Sysctls) != 2 || snap.Sysctls[1].Node != "node1" || snap.Sysctls[1].Value != "2" || snap.Sysctls[1].Pos.Line != 3 {
		t.Errorf("sysctls %+v", snap.Sysctls)
	}
	if len(snap.Logs) != 2 {
		t.Fatalf("logs %+v", snap.Logs)
	}
	for i, ev := range snap.Logs {
		if ev.Node != "node1" || ev.Source != "kube-proxy" || ev.Namespace != "kube-system" || ev.Pod != "kube-proxy-h2n9c" ||
			ev.Container != "kube-proxy" || ev.Stream != "stderr" || ev.Pos.Line != 5+i {
			t.Errorf("event %d: %+v", i, ev)
		}
	}
	if len(snap.Routes) != 2 || snap.Routes[0].Node != "node2" {
		t.Errorf("routes %+v", snap.Routes)
	}
}

// A BusyBox shell's session (`kubectl exec -it POD -- sh`): ash's "/etc #"
// prompts split it, and the bare prompt it ends with is no output.
func TestSessionBusyBox(t *testing.T) {
	in := "/etc # cat resolv.conf\nnameserver 10.96.0.10\nsearch default.svc.cluster.local svc.cluster.local cluster.local\n" +
		"options ndots:5\n/etc # ip route\ndefault via 10.244.1.1 dev eth0\n10.244.1.0/24 dev eth0 scope link  src 10.244.1.7\n/etc # \n"
	snap := openSession(t, in)
	var inputs []string
	for _, in := range snap.Inputs {
		inputs = append(inputs, fmt.Sprintf("%s %s %d", filepath.Base(in.Path), in.Format, in.Records))
	}
	want := "session.txt:1 resolv-conf 1\nsession.txt:5 ip-route 2\nsession.txt terminal-session 3"
	if got := strings.Join(inputs, "\n"); got != want {
		t.Errorf("inputs:\n%s\nwant:\n%s", got, want)
	}
}

// openSession opens in, written to a file session.txt, as a bundle of
// one file, and fails t on an error or a warning.
func openSession(t *testing.T, in string) *model.Snapshot {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.txt")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, warns, err := parse.Open(context.Background(), path, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	return snap
}
