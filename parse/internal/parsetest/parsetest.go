// Package parsetest holds what the tests of the parse packages share: real
// inputs read whole, checks of positioned errors and sniff scores, inputs of
// one format that others must not take, and generators of large inputs.
package parsetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// ReadFile parses the file at rel (from the repository root) with read,
// which is given the file's base name for positions, and fails the test on
// any error.
func ReadFile[T any](t *testing.T, rel string, read func(io.Reader, string) (T, error)) T {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := read(f, filepath.Base(rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return out
}

// SyntaxErrorsAt checks that err is an error list whose errors all wrap
// format.ErrSyntax, and returns their positions joined by spaces.
func SyntaxErrorsAt(t *testing.T, err error) string {
	t.Helper()
	var list model.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v, want a list", err)
	}
	var at []string
	for _, e := range list {
		at = append(at, e.Pos.String())
		if !errors.Is(e, format.ErrSyntax) {
			t.Errorf("%v does not wrap ErrSyntax", e)
		}
	}
	return strings.Join(at, " ")
}

// CheckFuzzErrors fails when a parser's error on fuzz input is not a list
// of errors each positioned at a line of file.
func CheckFuzzErrors(t *testing.T, err error, file string) {
	t.Helper()
	var list model.ErrorList
	if err != nil && !errors.As(err, &list) {
		t.Fatalf("error %v is not positioned", err)
	}
	for _, e := range list {
		if e.Pos.File != file || e.Pos.Line == 0 {
			t.Fatalf("error without a line: %v", e)
		}
	}
}

// AddSeedFiles adds the files at rels (from the repository root) to the
// fuzz seed corpus.
func AddSeedFiles(f *testing.F, rels []string) {
	f.Helper()
	for _, rel := range rels {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
}

// Best returns the name and score of the format of formats that scores
// head (the whole of it) highest, "" when none claims it.
func Best(formats []*format.Format, name string, head []byte) (string, int) {
	best, score := "", 0
	for _, f := range formats {
		if s := f.Sniff(name, head); s > score {
			best, score = f.Name, s
		}
	}
	return best, score
}

// SniffAs returns the name of the format of formats that scores the file at
// rel (from the repository root) highest, "" when none claims it.
func SniffAs(t *testing.T, formats []*format.Format, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	best, _ := Best(formats, rel, b[:min(len(b), text.HeadSize)])
	return best
}

// CheckSniff checks that f scores its own files (from the repository root)
// at least 80 and wins them among formats, and that it scores the others'
// files 0.
func CheckSniff(t *testing.T, formats []*format.Format, f *format.Format, own, others []string) {
	t.Helper()
	for _, file := range own {
		head, err := os.ReadFile(filepath.Join(testutil.Root(), file))
		if err != nil {
			t.Fatal(err)
		}
		if best, _ := Best(formats, "x", head); f.Sniff("x", head) < 80 || best != f.Name {
			t.Errorf("%s: %s scores %d, read as %q", file, f.Name, f.Sniff("x", head), best)
		}
	}
	for _, file := range others {
		head, err := os.ReadFile(filepath.Join(testutil.Root(), file))
		if err != nil {
			t.Fatal(err)
		}
		if sc := f.Sniff("x", head); sc != 0 {
			t.Errorf("%s: %s scores %d, want 0", file, f.Name, sc)
		}
	}
}

// CheckLines compares the records of file, one formatted line each, with
// want.
func CheckLines(t *testing.T, file string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s\nwant\n%s", file, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// OtherHostOutputs are outputs of other host commands no host parser may
// take for its own.
var OtherHostOutputs = []string{
	"parse/testdata/neigh/ip-neigh.txt",
	"parse/testdata/neigh/ip-s-neigh.txt",
	"parse/testdata/neigh/arp-an.txt",
	"parse/testdata/sysctl/sysctl-a.txt",
	"parse/testdata/sockets/ss-tanp.txt",
	"parse/testdata/sockets/netstat-tuneopa.txt",
	"fixtures/seeds/002-synack-reset/ipvsadm.txt",
	"fixtures/seeds/002-synack-reset/ss-timewait.txt",
	"fixtures/seeds/003-lb-controller-conflict/ip-neigh-before.txt",
	"fixtures/seeds/004-stale-dnat/iptables-nat-kube-dns.txt",
	"fixtures/seeds/001-probe-restart-loop/nodes.txt",
}

// Real outputs of ip and conntrack, each format's own files.
var (
	AddrFiles      = []string{"parse/testdata/addr/ip-addr.txt", "parse/testdata/addr/ip-4-addr.txt", "parse/testdata/addr/ip-br-addr.txt", "parse/testdata/addr/ip-o-addr.txt"}
	RouteFiles     = []string{"parse/testdata/route/ip-route.txt", "parse/testdata/route/ip-6-route.txt", "parse/testdata/route/ip-route-table-all.txt"}
	ConntrackFiles = []string{"parse/testdata/conntrack/conntrack-L.txt", "parse/testdata/conntrack/conntrack-L-p-tcp.txt"}
)

// IPVSListing is ipvsadm -Ln output (with --stats and --rate listings),
// which formats other than ipvsadm must not take.
const IPVSListing = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.1:443 rr
  -> 172.18.0.2:6443              Masq    1      4          0
  -> 172.18.0.3:6443              Masq    0      0          12
TCP  10.96.0.10:53 rr persistent 10800
UDP  [fd00:10:96::a]:53 sh sh-port
  -> [fd00:10:244::5]:53          Masq    1      0          3
FWM  7 wlc
  -> 10.0.0.9:0                   Route   1      0          0
# ipvsadm -Ln --stats
IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes
  -> RemoteAddress:Port
TCP  10.96.0.1:443                      12      482      426    65821    1234K
  -> 172.18.0.2:6443                    12      482      426    65821    1234K
# ipvsadm -Ln --rate
Prot LocalAddress:Port                 CPS    InPPS   OutPPS    InBPS   OutBPS
  -> RemoteAddress:Port
TCP  10.96.0.1:443                       0        1        1       74      299
`

// PodsWide is kubectl get pods -A -o wide output, which formats other than
// kubectl-table must not take.
const PodsWide = `$ kubectl get pods -A -o wide
NAMESPACE     NAME                       READY   STATUS             RESTARTS         AGE   IP           NODE                 NOMINATED NODE   READINESS GATES
kube-system   coredns-5d78c9869d-8xk2p   1/1     Running            0                12d   10.244.0.3   kind-control-plane   <none>           <none>
kube-system   etcd-kind-control-plane    1/1     Running            183 (5m ago)     58d   172.18.0.2   kind-control-plane   <none>           <none>
shop          web-7d4b9c8f6-abcde        1/2     CrashLoopBackOff   12 (2m13s ago)   1h    <none>       <none>               <none>           <none>
shop          db-0                       0/1     Init:0/1           0                7s    10.244.1.9   kind-worker          kind-worker2     0/1
`

// KubeProxySave writes an iptables-save of n ClusterIP Services with three
// endpoints each, in the layout kube-proxy's rules have in iptables-save.
func KubeProxySave(n int) []byte {
	var b bytes.Buffer
	b.WriteString("# Generated by iptables-save v1.8.9 (nf_tables) on Mon Nov 23 13:08:42 2026\n*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:KUBE-MARK-MASQ - [0:0]\n:KUBE-POSTROUTING - [0:0]\n:KUBE-SERVICES - [0:0]\n")
	svc := func(i int) string { return fmt.Sprintf("KUBE-SVC-%016X", uint64(i)*0x9E3779B97F4A7C15) }
	sep := func(i, e int) string { return fmt.Sprintf("KUBE-SEP-%016X", uint64(i*3+e+1)*0xC2B2AE3D27D4EB4F) }
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, ":%s - [0:0]\n", svc(i))
		for e := 0; e < 3; e++ {
			fmt.Fprintf(&b, ":%s - [0:0]\n", sep(i, e))
		}
	}
	b.WriteString("-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n-A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000\n-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0\n-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE --random-fully\n")
	for i := 0; i < n; i++ {
		for e := 0; e < 3; e++ {
			k := i*3 + e
			ip := fmt.Sprintf("10.%d.%d.%d", 244+k>>16, byte(k>>8), byte(k))
			fmt.Fprintf(&b, "-A %s -s %s/32 -m comment --comment \"ns%d/svc%d:http\" -j KUBE-MARK-MASQ\n", sep(i, e), ip, i%97, i)
			fmt.Fprintf(&b, "-A %s -p tcp -m comment --comment \"ns%d/svc%d:http\" -m tcp -j DNAT --to-destination %s:8080\n", sep(i, e), i%97, i, ip)
		}
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "-A KUBE-SERVICES -d 10.96.%d.%d/32 -p tcp -m comment --comment \"ns%d/svc%d:http cluster IP\" -m tcp --dport 80 -j %s\n", byte(i>>8), byte(i), i%97, i, svc(i))
	}
	b.WriteString("-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this chain\" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "-A %s ! -s 10.244.0.0/16 -d 10.96.%d.%d/32 -p tcp -m comment --comment \"ns%d/svc%d:http cluster IP\" -m tcp --dport 80 -j KUBE-MARK-MASQ\n", svc(i), byte(i>>8), byte(i), i%97, i)
		fmt.Fprintf(&b, "-A %s -m comment --comment \"ns%d/svc%d:http -> 10.244.0.2:8080\" -m statistic --mode random --probability 0.33333333349 -j %s\n", svc(i), i%97, i, sep(i, 0))
		fmt.Fprintf(&b, "-A %s -m comment --comment \"ns%d/svc%d:http -> 10.244.0.3:8080\" -m statistic --mode random --probability 0.50000000000 -j %s\n", svc(i), i%97, i, sep(i, 1))
		fmt.Fprintf(&b, "-A %s -m comment --comment \"ns%d/svc%d:http -> 10.244.0.4:8080\" -j %s\n", svc(i), i%97, i, sep(i, 2))
	}
	b.WriteString("COMMIT\n# Completed on Mon Nov 23 13:08:42 2026\n")
	return b.Bytes()
}
