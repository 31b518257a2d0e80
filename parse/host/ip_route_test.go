package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func routeFile(t *testing.T, rel string) []string {
	t.Helper()
	return routeLines(parsetest.ReadFile(t, rel, Routes))
}

// routeLines formats routes as "line node type dst via dev src table proto
// scope metric nexthops", unset fields as "-".
func routeLines(out []model.Route) []string {
	var s []string
	dash := func(v string) string {
		if v == "" || v == "invalid IP" {
			return "-"
		}
		return v
	}
	for _, r := range out {
		var nh []string
		for _, n := range r.Nexthops {
			nh = append(nh, fmt.Sprintf("%s/%s/%d", n.Via, n.Dev, n.Weight))
		}
		s = append(s, fmt.Sprintf("%d %s %s %s %s %s %s %s %s %s %d %s", r.Pos.Line, dash(r.Node), dash(r.Type), r.Dst,
			dash(r.Via.String()), dash(r.Dev), dash(r.Src.String()), dash(r.Table), dash(r.Proto), dash(r.Scope), r.Metric, dash(strings.Join(nh, ","))))
	}
	return s
}

var ipRouteWant = []string{
	"1 - - 0.0.0.0/0 10.79.0.254 nm-t-r0 - - static - 100 -",
	"2 - - 10.79.0.0/24 - nm-t-r0 10.79.0.1 - kernel link 0 -",
	"3 - - 10.79.1.0/24 - nm-t-r1 10.79.1.1 - kernel link 0 -",
	"4 - - 10.80.0.0/16 10.79.0.2 nm-t-r0 10.79.0.1 - - - 50 -",
	"5 - blackhole 10.81.0.0/16 - - - - - - 0 -",
	"6 - unreachable 10.82.0.0/16 - - - - - - 0 -",
	"7 - prohibit 10.83.0.0/16 - - - - - - 0 -",
	"8 - - 10.84.0.0/16 - - - - - - 0 10.79.0.2/nm-t-r0/1,10.79.1.2/nm-t-r1/2",
}

var ip6RouteWant = []string{
	"fd79::/64 - nm-t-r0 - - kernel - 256 -",
	"fe80::/64 - nm-t-r1 - - kernel - 256 -",
	"fe80::/64 - nm-t-r0 - - kernel - 256 -",
	"::/0 fd79::fe nm-t-r0 - - - - 1024 -",
}

// Real outputs of ip route in a namespace
// (parse/testdata/make-addr-route-ct.sh): a static default route, kernel
// routes, a route with src and metric, blackhole, unreachable and prohibit
// routes, a multipath route, IPv6, and the local table.
func TestRoutesReal(t *testing.T) {
	parsetest.CheckLines(t, "ip-route.txt", routeFile(t, "parse/testdata/route/ip-route.txt"), ipRouteWant)
	var v6 []string
	for i, w := range ip6RouteWant {
		v6 = append(v6, fmt.Sprintf("%d - - %s", i+1, w))
	}
	parsetest.CheckLines(t, "ip-6-route.txt", routeFile(t, "parse/testdata/route/ip-6-route.txt"), v6)
	all := routeFile(t, "parse/testdata/route/ip-route-table-all.txt")
	if len(all) != 23 || strings.Join(all[:8], "\n") != strings.Join(ipRouteWant, "\n") {
		t.Fatalf("table all:\n%s", strings.Join(all, "\n"))
	}
	for _, c := range []struct {
		i    int
		want string
	}{
		{8, "11 - local 10.79.0.1/32 - nm-t-r0 10.79.0.1 local kernel host 0 -"},
		{9, "12 - broadcast 10.79.0.255/32 - nm-t-r0 10.79.0.1 local kernel link 0 -"},
		{12, "15 - local 127.0.0.0/8 - lo 127.0.0.1 local kernel host 0 -"},
		{18, "21 - - ::/0 fd79::fe nm-t-r0 - - - - 1024 -"},
		{19, "22 - local ::1/128 - lo - local kernel - 0 -"},
		{22, "25 - multicast ff00::/8 - nm-t-r0 - local kernel - 256 -"},
	} {
		if all[c.i] != c.want {
			t.Errorf("table all, route %d: %s, want %s", c.i, all[c.i], c.want)
		}
	}
}

func TestRoutesForms(t *testing.T) {
	in := `root@node1:~# ip -6 route
default proto ra metric 1024 expires 1797sec pref medium
	nexthop via fe80::1 dev eth0 weight 1
	nexthop via fe80::2 dev eth1 weight 1
default dev wg0 scope link
=== node2 ===
default via 10.0.0.1 dev eth0 proto dhcp src 10.0.0.5 metric 100 linkdown
10.244.1.0/24 via 10.0.0.6 dev flannel.1 onlink
throw 10.9.0.0/16 table 100
`
	out, err := Routes(strings.NewReader(in), "forms.txt")
	if err != nil {
		t.Fatal(err)
	}
	parsetest.CheckLines(t, "forms.txt", routeLines(out), []string{
		"2 node1 - ::/0 - - - - ra - 1024 fe80::1/eth0/1,fe80::2/eth1/1",
		"5 node1 - ::/0 - wg0 - - - link 0 -",
		"7 node2 - 0.0.0.0/0 10.0.0.1 eth0 10.0.0.5 - dhcp - 100 -",
		"8 node2 - 10.244.1.0/24 10.0.0.6 flannel.1 - - - - 0 -",
		"9 node2 throw 10.9.0.0/16 - - - 100 - - 0 -",
	})
	if out[0].Raw != "default proto ra metric 1024 expires 1797sec pref medium nexthop via fe80::1 dev eth0 weight 1 nexthop via fe80::2 dev eth1 weight 1" {
		t.Errorf("raw %q", out[0].Raw)
	}
}

func TestRoutesErrors(t *testing.T) {
	in := "\tnexthop via 10.0.0.1 dev eth0 weight 1\n" +
		"default via 10.0.0.1 dev eth0\n" +
		"10.0.0.300/24 dev eth0\n" +
		"10.1.0.0/24 dev eth0 metric many\n" +
		"10.2.0.0/24 via nowhere dev eth0\n" +
		"10.3.0.0/24 dev eth0 wobbly\n" +
		"10.4.0.0/24 dev eth0 proto kernel scope link src 10.4.0.1\n"
	out, err := Routes(strings.NewReader(in), "bad.txt")
	if at := parsetest.SyntaxErrorsAt(t, err); at != "bad.txt:1 bad.txt:3 bad.txt:4 bad.txt:5 bad.txt:6" {
		t.Errorf("errors at %v, want lines 1, 3 to 6:\n%v", at, err)
	}
	parsetest.CheckLines(t, "bad.txt", routeLines(out), []string{
		"2 - - 0.0.0.0/0 10.0.0.1 eth0 - - - - 0 -",
		"7 - - 10.4.0.0/24 - eth0 10.4.0.1 - kernel link 0 -",
	})
}

func FuzzRoutes(f *testing.F) {
	parsetest.AddSeedFiles(f, parsetest.RouteFiles)
	f.Add("root@n1:~# ip -6 r\ndefault proto ra metric 1024\n\tnexthop via fe80::1 dev eth0 weight 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Routes(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, r := range out {
			if r.Pos.Line == 0 || !r.Dst.IsValid() || r.Raw == "" {
				t.Fatalf("bad route: %+v", r)
			}
		}
		sniffRoute("fuzz.txt", []byte(in))
	})
}

// ip route get prints its route, then a cache line under it ("cache
// <local>"); the file was made on a Linux host (iproute2 6.1) with
// `ip route get 127.0.0.1` and `ip route get 8.8.8.8`, each after its
// prompt.
func TestRoutesGet(t *testing.T) {
	parsetest.CheckLines(t, "ip-route-get.txt", routeFile(t, "parse/testdata/route/ip-route-get.txt"), []string{
		"2 - local 127.0.0.1/32 - lo 127.0.0.1 - - - 0 -",
		"5 - - 8.8.8.8/32 192.0.2.1 eth0 192.0.2.2 - - - 0 -",
	})
}
