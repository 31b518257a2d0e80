package host_test

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
	"github.com/netmortem/netmortem/parse/host"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// The host formats among all the formats parse.Open tries.

func TestSniffProbes(t *testing.T) {
	for _, rel := range []string{"parse/testdata/probes/nc-traditional-count.txt", "fixtures/seeds/004-stale-dnat/nc-loop.txt"} {
		if f := parsetest.SniffAs(t, parse.Formats(), rel); f != "connect-loop" {
			t.Errorf("%s sniffed as %q", rel, f)
		}
	}
	if s := host.ProbesFormat.Sniff("x", []byte("# Run nc 1000 times without reverse DNS lookup\n$ nc -zv 10.0.0.1 53\n")); s != 0 {
		t.Errorf("a comment and a single nc scored %d", s)
	}
}

func TestSniffAddr(t *testing.T) {
	others := append(append(append([]string{}, parsetest.OtherHostOutputs...), parsetest.RouteFiles...), parsetest.ConntrackFiles...)
	parsetest.CheckSniff(t, parse.Formats(), host.AddrFormat, parsetest.AddrFiles, others)
}

func TestAddrsOpen(t *testing.T) {
	snap, warns, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), "parse/testdata/addr/ip-addr.txt"), nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Inputs) != 1 || snap.Inputs[0].Format != "ip-addr" || snap.Inputs[0].Kind != model.KindAddrs || snap.Inputs[0].Records != 9 {
		t.Errorf("inputs %+v", snap.Inputs)
	}
	if len(snap.Addrs) != 9 || snap.Addrs[8].Prefix.String() != "10.96.0.10/32" || snap.Addrs[8].Dev != "kube-ipvs0" {
		t.Errorf("addrs %+v", snap.Addrs)
	}
}

func TestIPJSONSniff(t *testing.T) {
	const dir = "parse/testdata/ipjson/"
	texts := []string{dir + "ip-neigh.txt", dir + "ip-addr.txt", dir + "ip-route.txt"}
	parsetest.CheckSniff(t, parse.Formats(), host.NeighJSONFormat, []string{dir + "ip-j-neigh.txt", dir + "ip-j-p-neigh.txt"},
		append([]string{dir + "ip-j-addr.txt", dir + "ip-j-route.txt"}, texts...))
	parsetest.CheckSniff(t, parse.Formats(), host.AddrJSONFormat, []string{dir + "ip-j-addr.txt"},
		append([]string{dir + "ip-j-neigh.txt", dir + "ip-j-route.txt"}, texts...))
	parsetest.CheckSniff(t, parse.Formats(), host.RouteJSONFormat, []string{dir + "ip-j-route.txt", dir + "ip-6-j-route.txt"},
		append([]string{dir + "ip-j-neigh.txt", dir + "ip-j-addr.txt"}, texts...))
}

func TestSniffNeigh(t *testing.T) {
	for _, c := range []struct {
		file string
		want bool
	}{
		{"parse/testdata/neigh/ip-neigh.txt", true},
		{"parse/testdata/neigh/ip-s-neigh.txt", true},
		{"parse/testdata/neigh/ip-neigh-nud-all.txt", true},
		{"parse/testdata/neigh/arp-an.txt", true},
		{"parse/testdata/neigh/arp-n.txt", true},
		{"fixtures/seeds/003-lb-controller-conflict/ip-neigh-before.txt", true},
		{"fixtures/seeds/003-lb-controller-conflict/ip-neigh-after.txt", true},
		{"parse/testdata/sysctl/sysctl-a.txt", false},
		{"fixtures/seeds/002-synack-reset/ipvsadm.txt", false},
		{"fixtures/seeds/002-synack-reset/ss-timewait.txt", false},
		{"fixtures/seeds/000-apiserver-affinity/netstat.txt", false},
		{"parse/testdata/sockets/ss-tanp.txt", false},
		{"parse/testdata/sockets/netstat-tuneopa.txt", false},
		{"fixtures/captures/text/arp.tcpdump-e.txt", false},
	} {
		head, err := os.ReadFile(filepath.Join(testutil.Root(), c.file))
		if err != nil {
			t.Fatal(err)
		}
		sc := host.NeighFormat.Sniff("x", head)
		if c.want {
			if best, _ := parsetest.Best(parse.Formats(), "x", head); sc < 80 || best != "neigh" {
				t.Errorf("%s: neigh scores %d, read as %q", c.file, sc, best)
			}
		} else if sc != 0 {
			t.Errorf("%s: neigh scores %d, want 0", c.file, sc)
		}
	}
	for _, in := range []string{parsetest.IPVSListing, "net.ipv4.ip_local_port_range = 1024 65000\n", "10.0.0.1\n10.0.0.2\n"} {
		if sc := host.NeighFormat.Sniff("x", []byte(in)); sc != 0 {
			t.Errorf("%.30q: neigh scores %d, want 0", in, sc)
		}
	}
}

func TestNeighborsOpen(t *testing.T) {
	snap, warns, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), "fixtures/seeds/003-lb-controller-conflict/ip-neigh-after.txt"), nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Inputs) != 1 || snap.Inputs[0].Format != "neigh" || snap.Inputs[0].Kind != model.KindNeighbors || snap.Inputs[0].Records != 6 {
		t.Errorf("inputs %+v", snap.Inputs)
	}
	if len(snap.Neighbors) != 6 || snap.Neighbors[5].IP.String() != "192.168.200.99" || snap.Neighbors[5].MAC != "00:22:4d:a8:ba:4c" {
		t.Errorf("neighbors %+v", snap.Neighbors)
	}
}

func TestSniffRoute(t *testing.T) {
	others := append(append(append([]string{}, parsetest.OtherHostOutputs...), parsetest.AddrFiles...), parsetest.ConntrackFiles...)
	parsetest.CheckSniff(t, parse.Formats(), host.RouteFormat, parsetest.RouteFiles, others)
	for _, in := range []string{"10.0.0.0/8\n192.168.0.0/16\n", "10.0.0.1\n"} {
		if sc := host.RouteFormat.Sniff("x", []byte(in)); sc != 0 {
			t.Errorf("%.30q: ip-route scores %d, want 0", in, sc)
		}
	}
}

func TestRoutesOpen(t *testing.T) {
	snap, warns, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), "parse/testdata/route/ip-route.txt"), nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Inputs) != 1 || snap.Inputs[0].Format != "ip-route" || snap.Inputs[0].Kind != model.KindRoutes || snap.Inputs[0].Records != 8 {
		t.Errorf("inputs %+v", snap.Inputs)
	}
	if len(snap.Routes) != 8 || snap.Routes[4].Type != "blackhole" || len(snap.Routes[7].Nexthops) != 2 {
		t.Errorf("routes %+v", snap.Routes)
	}
}

func TestSniffSettings(t *testing.T) {
	if f := parsetest.SniffAs(t, parse.Formats(), "fixtures/seeds/003-lb-controller-conflict/kube-vip-settings.yml"); f != "kubespray-vars" {
		t.Errorf("sniffed as %q", f)
	}
	for _, in := range []string{
		"apiVersion: v1\nkind: ConfigMap\nkube_vip_a: 1\nkube_vip_b: 2\n",   // a Kubernetes object
		"name: x\nimage: y\nkube_proxy_mode: ipvs\nports: 1\nreplicas: 2\n", // mostly other keys
	} {
		if s := host.SettingsFormat.Sniff("x.yml", []byte(in)); s != 0 {
			t.Errorf("%q scored %d", in, s)
		}
	}
}

func TestSniffSockets(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"parse/testdata/sockets/ss-tanp.txt", "ss"},
		{"parse/testdata/sockets/ss-lntup.txt", "ss"},
		{"parse/testdata/sockets/ss-tan.txt", "ss"},
		{"parse/testdata/sockets/ss-uanp.txt", "ss"},
		{"parse/testdata/sockets/ss-tano-state-time-wait.txt", "ss"},
		{"parse/testdata/sockets/ss-tanoeim.txt", "ss"},
		{"parse/testdata/sockets/ss-counts.txt", "ss"},
		{"fixtures/seeds/002-synack-reset/ss-timewait.txt", "ss"},
		{"parse/testdata/sockets/netstat-lntup.txt", "netstat"},
		{"parse/testdata/sockets/netstat-tan.txt", "netstat"},
		{"parse/testdata/sockets/netstat-tuneopa.txt", "netstat"},
		{"parse/testdata/sockets/netstat-counts.txt", "netstat"},
		{"fixtures/seeds/000-apiserver-affinity/netstat.txt", "netstat"},
		{"parse/testdata/neigh/ip-s-neigh.txt", "neigh"},
		{"parse/testdata/neigh/arp-an.txt", "neigh"},
		{"parse/testdata/neigh/arp-n.txt", "neigh"},
		{"parse/testdata/sysctl/sysctl-a.txt", "sysctl"},
		{"fixtures/seeds/002-synack-reset/ipvsadm.txt", "ipvsadm"},
		{"fixtures/seeds/002-synack-reset/sysctl.txt", "sysctl"},
	} {
		head, err := os.ReadFile(filepath.Join(testutil.Root(), c.file))
		if err != nil {
			t.Fatal(err)
		}
		if got, score := parsetest.Best(parse.Formats(), "x", head); got != c.want {
			t.Errorf("%s read as %q (%d), want %q", c.file, got, score, c.want)
		}
		ss, ns := host.SSFormat.Sniff("x", head), host.NetstatFormat.Sniff("x", head)
		switch c.want {
		case "ss":
			if ss < 80 || ns != 0 {
				t.Errorf("%s: ss %d netstat %d, want ss high and netstat 0", c.file, ss, ns)
			}
		case "netstat":
			if ns < 80 || ss != 0 {
				t.Errorf("%s: ss %d netstat %d, want netstat high and ss 0", c.file, ss, ns)
			}
		default:
			if ss != 0 || ns != 0 {
				t.Errorf("%s: ss %d netstat %d, want 0", c.file, ss, ns)
			}
		}
	}
	for _, in := range []string{parsetest.IPVSListing, "net.ipv4.ip_local_port_range = 1024 65000\n", "  12 GET /index.html\n   3 POST /login\n", "161 10.10.85.105\n849 10.23.77.129\n"} {
		if ss, ns := host.SSFormat.Sniff("x", []byte(in)), host.NetstatFormat.Sniff("x", []byte(in)); ss != 0 || ns != 0 {
			t.Errorf("%.30q: ss %d netstat %d, want 0", in, ss, ns)
		}
	}
}

// Through parse.Open: the format is named, the rows land in the snapshot
// with their node.
func TestSocketsOpen(t *testing.T) {
	snap, warns, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), "fixtures/seeds/000-apiserver-affinity/netstat.txt"), nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Inputs) != 1 || snap.Inputs[0].Format != "netstat" || snap.Inputs[0].Kind != model.KindSockets || snap.Inputs[0].Records != 5 {
		t.Errorf("inputs %+v", snap.Inputs)
	}
	if len(snap.Sockets) != 5 || snap.Sockets[0].Node != "node3" || !snap.Has(model.KindSockets) {
		t.Errorf("sockets %+v", snap.Sockets)
	}
}

// The shared corpus of public ss and netstat outputs reads without a
// warning.
func TestSocketsCorpus(t *testing.T) {
	for _, sub := range []string{"ss", "netstat"} {
		dir := testutil.CorpusDir(t, "dumps", sub)
		files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		for _, p := range files {
			if strings.Contains(p, "netstat-agn") { // group memberships: not a socket table
				continue
			}
			head, _ := os.ReadFile(p)
			if got, _ := parsetest.Best(parse.Formats(), "x", head); got != sub {
				t.Errorf("%s read as %q", filepath.Base(p), got)
			}
			f, _ := os.Open(p)
			socks, counts, err := host.Sockets(f, filepath.Base(p))
			f.Close()
			if err != nil || len(socks)+len(counts) == 0 {
				t.Errorf("%s: %d sockets, %d counts, %v", filepath.Base(p), len(socks), len(counts), err)
			}
		}
	}
}

// The /proc/sys dumps of fixtures/real are read as sysctl among all the
// formats; an ls of /proc/sys and a ping are not.
func TestSniffSysctlFiles(t *testing.T) {
	for _, pattern := range []string{"fixtures/real/multi-file/*head*.txt", "fixtures/real/local/multi-file/*.txt"} {
		files, _ := filepath.Glob(filepath.Join(testutil.Root(), pattern))
		if len(files) == 0 {
			t.Fatalf("no file %s", pattern)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(testutil.Root(), f)
			got := parsetest.SniffAs(t, parse.Formats(), rel)
			if ping := strings.Contains(rel, "ping"); (got == "sysctl") == ping {
				t.Errorf("%s sniffed as %q", rel, got)
			}
		}
	}
	if got := parsetest.SniffAs(t, parse.Formats(), "fixtures/real/multi-file/index36506000102_ll-proc-sys-net_no-bridge-dir.txt"); got == "sysctl" {
		t.Errorf("ll /proc/sys/net sniffed as sysctl")
	}
}

func TestSniffLinks(t *testing.T) {
	const dir = "parse/testdata/link/"
	texts := []string{dir + "ip-link.txt", dir + "ip-d-link.txt", dir + "ip-d-link-underlay-1460.txt", dir + "bridge-link.txt", dir + "bridge-d-link.txt"}
	jsons := []string{dir + "ip-j-link.txt", dir + "ip-j-d-link.txt"}
	grep := []string{dir + "brport-hairpin-grep.txt"}
	others := append(append(append(append([]string{}, parsetest.OtherHostOutputs...), parsetest.AddrFiles...), parsetest.RouteFiles...),
		"parse/testdata/ipjson/ip-addr.txt", "parse/testdata/ipjson/ip-j-addr.txt", "parse/testdata/ipjson/ip-j-neigh.txt")
	parsetest.CheckSniff(t, parse.Formats(), host.LinkFormat, texts, append(append(append([]string{}, others...), jsons...), grep...))
	parsetest.CheckSniff(t, parse.Formats(), host.LinkJSONFormat, jsons, append(append(append([]string{}, others...), texts...), grep...))
	parsetest.CheckSniff(t, parse.Formats(), host.HairpinFilesFormat, grep, append(append(append([]string{}, others...), texts...), jsons...))
	// ip addr reads its own link lines: the link listings are not its.
	for _, f := range append(texts, jsons...) {
		head, _ := os.ReadFile(filepath.Join(testutil.Root(), f))
		if s := host.AddrFormat.Sniff("x", head); s >= host.LinkFormat.Sniff("x", head) && s > 0 {
			t.Errorf("%s: ip-addr scores %d", f, s)
		}
	}
}

// Through parse.Open: the links land in the snapshot, as links.
func TestLinksOpen(t *testing.T) {
	snap, warns, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), "parse/testdata/link/ip-d-link.txt"), nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Inputs) != 1 || snap.Inputs[0].Format != "ip-link" || snap.Inputs[0].Kind != model.KindLinks || snap.Inputs[0].Records != 9 {
		t.Errorf("inputs %+v", snap.Inputs)
	}
	if len(snap.Links) != 9 || snap.Links[3].Kind != "vxlan" || snap.Links[3].MTU != 1450 || !snap.Has(model.KindLinks) {
		t.Errorf("links %+v", snap.Links)
	}
}

// ip addr and ip -j addr give each link's MTU beside the addresses, the
// same from the text and the JSON taken beside it; the links are not
// counted as the input's records.
func TestAddrsGiveLinks(t *testing.T) {
	var got [2][]string
	for i, f := range []string{"parse/testdata/ipjson/ip-addr.txt", "parse/testdata/ipjson/ip-j-addr.txt"} {
		snap, warns, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), f), nil)
		if err != nil || len(warns) != 0 {
			t.Fatalf("open %s: %v %v", f, err, warns)
		}
		if snap.Inputs[0].Kind != model.KindAddrs || snap.Inputs[0].Records != len(snap.Addrs) {
			t.Errorf("%s: inputs %+v", f, snap.Inputs)
		}
		for _, l := range snap.Links {
			got[i] = append(got[i], fmt.Sprintf("%s mtu=%d state=%s", l.Dev, l.MTU, l.State))
		}
	}
	want := "[lo mtu=65536 state=UNKNOWN nm-t-j0 mtu=1500 state=UP nm-t-je mtu=1500 state=UP nm-t-jd mtu=1500 state=UP]"
	if fmt.Sprint(got[0]) != want || fmt.Sprint(got[1]) != want {
		t.Errorf("links:\n%v\n%v\nwant %s", got[0], got[1], want)
	}
}

func TestSniffNstat(t *testing.T) {
	const dir = "parse/testdata/nstat/"
	own := []string{dir + "nstat.txt", dir + "nstat-a.txt", dir + "nstat-az.txt", dir + "nstat-az-rpf.txt",
		"fixtures/incidents/rp-filter-drop/nstat.txt", "fixtures/incidents/rp-filter-drop-control/nstat.txt",
		"fixtures/real/local/multi-file/local_ping-spoofed-source_rp_filter-drop.txt"}
	others := append(append([]string{dir + "netstat-s.txt", "parse/testdata/link/brport-hairpin-grep.txt"},
		parsetest.OtherHostOutputs...), parsetest.AddrFiles...)
	parsetest.CheckSniff(t, parse.Formats(), host.NstatFormat, own, others)
}
