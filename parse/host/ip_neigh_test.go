package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func neighFile(t *testing.T, rel string) []string {
	t.Helper()
	return neighLines(parsetest.ReadFile(t, rel, Neighbors))
}

// neighLines formats entries as "line node ip mac dev state flags".
func neighLines(out []model.Neighbor) []string {
	var s []string
	for _, n := range out {
		s = append(s, strings.TrimRight(fmt.Sprintf("%d %s %s %s %s %s %s", n.Pos.Line, n.Node, n.IP, n.MAC, n.Dev, n.State, strings.Join(n.Flags, ",")), " "))
	}
	return s
}

func checkNeigh(t *testing.T, file string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s\nwant\n%s", file, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The seed's two snapshots of the node's neighbor table around the
// incident: the VIP 192.168.200.99 resolves to 00:22:4d:a8:ba:4c in both,
// the MAC of 192.168.200.62 (node2), REACHABLE before and STALE after.
func TestNeighborsSeed(t *testing.T) {
	before := neighFile(t, "fixtures/seeds/003-lb-controller-conflict/ip-neigh-before.txt")
	after := neighFile(t, "fixtures/seeds/003-lb-controller-conflict/ip-neigh-after.txt")
	checkNeigh(t, "ip-neigh-before.txt", before, []string{
		"1  192.168.200.64 00:22:4d:a8:b8:15 enp3s0 REACHABLE",
		"2  192.168.200.63 00:22:4d:a8:ba:4f enp3s0 REACHABLE",
		"3  192.168.200.158 08:bd:43:b9:a8:e7 enp3s0 REACHABLE",
		"4  192.168.200.62 00:22:4d:a8:ba:4c enp3s0 REACHABLE",
		"5  192.168.200.61 00:22:4d:a8:ba:40 enp3s0 REACHABLE",
		"6  192.168.200.99 00:22:4d:a8:ba:4c enp3s0 REACHABLE",
	})
	checkNeigh(t, "ip-neigh-after.txt", after, []string{
		"1  192.168.200.64 00:22:4d:a8:b8:15 enp3s0 DELAY",
		"2  192.168.200.63 00:22:4d:a8:ba:4f enp3s0 REACHABLE",
		"3  192.168.200.158 08:bd:43:b9:a8:e7 enp3s0 STALE",
		"4  192.168.200.62 00:22:4d:a8:ba:4c enp3s0 DELAY",
		"5  192.168.200.61 00:22:4d:a8:ba:40 enp3s0 STALE",
		"6  192.168.200.99 00:22:4d:a8:ba:4c enp3s0 STALE",
	})
}

// Real outputs of ip and arp in a network namespace
// (parse/testdata/make-sockets-neigh.sh): a permanent entry, an address
// being resolved, one that failed, a reachable peer, and that peer's IPv6
// address flagged router because it forwards.
func TestNeighborsReal(t *testing.T) {
	ipNeigh := []string{
		"1  10.77.0.50 02:00:5e:00:00:50 nm-t-v0 PERMANENT",
		"2  10.77.0.4  nm-t-v0 INCOMPLETE",
		"3  10.77.0.2 02:77:00:00:00:02 nm-t-v0 REACHABLE",
		"4  10.77.0.3  nm-t-v0 FAILED",
		"5  fd77::2 02:77:00:00:00:02 nm-t-v0 REACHABLE router",
	}
	checkNeigh(t, "ip-neigh.txt", neighFile(t, "parse/testdata/neigh/ip-neigh.txt"), ipNeigh)
	// ip -s: "ref 1 used 0/60/0probes 4" between the address and the state
	checkNeigh(t, "ip-s-neigh.txt", neighFile(t, "parse/testdata/neigh/ip-s-neigh.txt"), ipNeigh)
	all := neighFile(t, "parse/testdata/neigh/ip-neigh-nud-all.txt")
	if len(all) != 10 || all[0] != "1  0.0.0.0 00:00:00:00:00:00 lo NOARP" || all[5] != "6  ff02::2 33:33:00:00:00:02 nm-t-v0 NOARP" {
		t.Errorf("ip neigh show nud all:\n%s", strings.Join(all, "\n"))
	}
	checkNeigh(t, "arp-an.txt", neighFile(t, "parse/testdata/neigh/arp-an.txt"), []string{
		"1  10.77.0.50 02:00:5e:00:00:50 nm-t-v0 PERMANENT",
		"2  10.77.0.4  nm-t-v0 INCOMPLETE",
		"3  10.77.0.2 02:77:00:00:00:02 nm-t-v0",
		"4  10.77.0.3  nm-t-v0 INCOMPLETE",
	})
	checkNeigh(t, "arp-n.txt", neighFile(t, "parse/testdata/neigh/arp-n.txt"), []string{
		"2  10.77.0.3  nm-t-v0 INCOMPLETE",
		"3  10.77.0.4  nm-t-v0 INCOMPLETE",
		"4  10.77.0.50 02:00:5e:00:00:50 nm-t-v0 PERMANENT",
		"5  10.77.0.2 02:77:00:00:00:02 nm-t-v0",
	})
}

func TestNeighborsForms(t *testing.T) {
	in := `root@node1:~# ip neigh show dev eth0
10.0.0.1 lladdr AA:BB:CC:DD:EE:01 REACHABLE
fe80::1 lladdr aa:bb:cc:dd:ee:02 router proxy extern_learn STALE
=== node2 ===
gateway (10.0.0.254) at aa:bb:cc:dd:ee:fe [ether] on eth0
? (10.0.0.9) at aa:bb:cc:dd:ee:09 [ether] PUB on eth0
# ip -6 neigh
2001:db8::5 dev eth1 lladdr aa:bb:cc:dd:ee:05 protocol zebra PROBE
`
	out, err := Neighbors(strings.NewReader(in), "forms.txt")
	if err != nil {
		t.Fatal(err)
	}
	checkNeigh(t, "forms.txt", neighLines(out), []string{
		"2 node1 10.0.0.1 aa:bb:cc:dd:ee:01 eth0 REACHABLE",
		"3 node1 fe80::1 aa:bb:cc:dd:ee:02 eth0 STALE router,proxy,extern_learn",
		"5 node2 10.0.0.254 aa:bb:cc:dd:ee:fe eth0",
		"6 node2 10.0.0.9 aa:bb:cc:dd:ee:09 eth0  proxy",
		"8 node2 2001:db8::5 aa:bb:cc:dd:ee:05 eth1 PROBE",
	})
}

func TestNeighborsErrors(t *testing.T) {
	in := "10.0.0.1 dev eth0 lladdr aa:bb:cc:dd:ee:01 REACHABLE\n" +
		"10.0.0.300 dev eth0 lladdr aa:bb:cc:dd:ee:02 STALE\n" +
		"10.0.0.3 dev eth0 lladdr aa:bb:cc:dd:ee:03 WOBBLY\n" +
		"10.0.0.4 dev\n" +
		"? (10.0.0.5) at aa:bb:cc:dd:ee:05 [ether]\n" +
		"10.0.0.6 ether aa:bb:cc:dd:ee:06 X eth0\n" +
		"10.0.0.7 dev eth0 lladdr aa:bb:cc:dd:ee:07 DELAY\n"
	out, err := Neighbors(strings.NewReader(in), "bad.txt")
	if at := parsetest.SyntaxErrorsAt(t, err); at != "bad.txt:2 bad.txt:3 bad.txt:4 bad.txt:5 bad.txt:6" {
		t.Errorf("errors at %v, want lines 2 to 6:\n%v", at, err)
	}
	checkNeigh(t, "bad.txt", neighLines(out), []string{
		"1  10.0.0.1 aa:bb:cc:dd:ee:01 eth0 REACHABLE",
		"7  10.0.0.7 aa:bb:cc:dd:ee:07 eth0 DELAY",
	})
}

func FuzzNeighbors(f *testing.F) {
	for _, rel := range []string{
		"parse/testdata/neigh/ip-s-neigh.txt", "parse/testdata/neigh/arp-an.txt", "parse/testdata/neigh/arp-n.txt",
		"fixtures/seeds/003-lb-controller-conflict/ip-neigh-before.txt",
	} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("root@n1:~# ip neigh show dev eth0\nfe80::1 lladdr aa:bb:cc:dd:ee:02 router STALE\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Neighbors(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, n := range out {
			if n.Pos.Line == 0 || !n.IP.IsValid() || n.MAC != strings.ToLower(n.MAC) {
				t.Fatalf("bad entry: %+v", n)
			}
		}
		sniffNeigh("fuzz.txt", []byte(in))
	})
}
