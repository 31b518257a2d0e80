package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func addrFile(t *testing.T, rel string) []string {
	t.Helper()
	return addrLines(parsetest.ReadFile(t, rel, Addrs))
}

// addrLines formats addresses as "line node dev state prefix scope label flags mac".
func addrLines(out []model.IfAddr) []string {
	var s []string
	for _, a := range out {
		s = append(s, strings.TrimRight(fmt.Sprintf("%d %s %s %s %s %s %s %s %s", a.Pos.Line, a.Node, a.Dev, a.State, a.Prefix, a.Scope, a.Label, strings.Join(a.Flags, ","), a.MAC), " "))
	}
	return s
}

// Real outputs of ip in a namespace (parse/testdata/make-addr-route-ct.sh):
// lo, a veth end with an address, a secondary labelled VIP and IPv6, and
// kube-ipvs0 holding two /32 Service addresses, down as kube-proxy leaves it.
func TestAddrsReal(t *testing.T) {
	parsetest.CheckLines(t, "ip-addr.txt", addrFile(t, "parse/testdata/addr/ip-addr.txt"), []string{
		"3  lo UNKNOWN 127.0.0.1/8 host   00:00:00:00:00:00",
		"5  lo UNKNOWN ::1/128 host   00:00:00:00:00:00",
		"9  nm-t-a1 UP fe80::78:ff:fe00:2/64 link  tentative 02:78:00:00:00:02",
		"13  nm-t-a0 UP 10.78.0.1/24 global   02:78:00:00:00:01",
		"15  nm-t-a0 UP 10.78.0.9/24 global nm-t-a0:vip secondary 02:78:00:00:00:01",
		"17  nm-t-a0 UP fd78::1/64 global  nodad 02:78:00:00:00:01",
		"19  nm-t-a0 UP fe80::78:ff:fe00:1/64 link  tentative 02:78:00:00:00:01",
		"25  kube-ipvs0 DOWN 10.96.0.1/32 global   02:78:00:00:00:99",
		"27  kube-ipvs0 DOWN 10.96.0.10/32 global   02:78:00:00:00:99",
	})
	parsetest.CheckLines(t, "ip-4-addr.txt", addrFile(t, "parse/testdata/addr/ip-4-addr.txt"), []string{
		"2  lo UNKNOWN 127.0.0.1/8 host",
		"5  nm-t-a0 UP 10.78.0.1/24 global",
		"7  nm-t-a0 UP 10.78.0.9/24 global nm-t-a0:vip secondary",
		"10  kube-ipvs0 DOWN 10.96.0.1/32 global",
		"12  kube-ipvs0 DOWN 10.96.0.10/32 global",
	})
	// ip -o addr: one line per address, no link state or MAC.
	parsetest.CheckLines(t, "ip-o-addr.txt", addrFile(t, "parse/testdata/addr/ip-o-addr.txt"), []string{
		"1  lo  127.0.0.1/8 host",
		"2  lo  ::1/128 host",
		"3  nm-t-a1  fe80::78:ff:fe00:2/64 link  tentative",
		"4  nm-t-a0  10.78.0.1/24 global",
		"5  nm-t-a0  10.78.0.9/24 global nm-t-a0:vip secondary",
		"6  nm-t-a0  fd78::1/64 global  nodad",
		"7  nm-t-a0  fe80::78:ff:fe00:1/64 link  tentative",
		"8  kube-ipvs0  10.96.0.1/32 global",
		"9  kube-ipvs0  10.96.0.10/32 global",
	})
	parsetest.CheckLines(t, "ip-br-addr.txt", addrFile(t, "parse/testdata/addr/ip-br-addr.txt"), []string{
		"1  lo UNKNOWN 127.0.0.1/8",
		"1  lo UNKNOWN ::1/128",
		"2  nm-t-a1 UP fe80::78:ff:fe00:2/64",
		"3  nm-t-a0 UP 10.78.0.1/24",
		"3  nm-t-a0 UP 10.78.0.9/24",
		"3  nm-t-a0 UP fd78::1/64",
		"3  nm-t-a0 UP fe80::78:ff:fe00:1/64",
		"5  kube-ipvs0 DOWN 10.96.0.1/32",
		"5  kube-ipvs0 DOWN 10.96.0.10/32",
	})
}

func TestAddrsForms(t *testing.T) {
	in := `root@node1:~# ip a show dev eth0
2: eth0@if12: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UP group default
    link/ether 0A:58:0A:F4:01:05 brd ff:ff:ff:ff:ff:ff link-netnsid 0
    altname enp0s3
    inet 10.244.1.5/24 brd 10.244.1.255 scope global dynamic noprefixroute eth0
       valid_lft 86000sec preferred_lft 86000sec
    inet 10.0.0.1 peer 10.0.0.2/32 scope global eth0
=== node2 ===
eth1             UP             192.168.1.10/24
`
	out, err := Addrs(strings.NewReader(in), "forms.txt")
	if err != nil {
		t.Fatal(err)
	}
	parsetest.CheckLines(t, "forms.txt", addrLines(out), []string{
		"5 node1 eth0 UP 10.244.1.5/24 global  dynamic,noprefixroute 0a:58:0a:f4:01:05",
		"7 node1 eth0 UP 10.0.0.1/32 global   0a:58:0a:f4:01:05",
		"9 node2 eth1 UP 192.168.1.10/24",
	})
}

func TestAddrsErrors(t *testing.T) {
	in := "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 state UNKNOWN\n" +
		"    inet 127.0.0.1/8 scope host lo\n" +
		"    inet 127.0.0.300/8 scope host lo\n" +
		"    inet6 ::1/128 scope host wobbly\n" +
		"    inet 10.0.0.1/8 scope\n" +
		"this is not ip addr\n" +
		"eth0 UP 10.0.0.1\n" +
		"eth1 UP 10.0.0.2/24\n"
	out, err := Addrs(strings.NewReader(in), "bad.txt")
	if at := parsetest.SyntaxErrorsAt(t, err); at != "bad.txt:3 bad.txt:4 bad.txt:5 bad.txt:6 bad.txt:7" {
		t.Errorf("errors at %v, want lines 3 to 7:\n%v", at, err)
	}
	parsetest.CheckLines(t, "bad.txt", addrLines(out), []string{
		"2  lo UNKNOWN 127.0.0.1/8 host",
		"8  eth1 UP 10.0.0.2/24",
	})
}

func FuzzAddrs(f *testing.F) {
	parsetest.AddSeedFiles(f, parsetest.AddrFiles)
	f.Add("root@n1:~# ip a\n2: eth0@if3: <UP> mtu 1 state UP\n    inet 10.0.0.1 peer 10.0.0.2/32 scope global eth0:1\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Addrs(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, a := range out {
			if a.Pos.Line == 0 || !a.Prefix.IsValid() || a.Dev == "" {
				t.Fatalf("bad address: %+v", a)
			}
		}
		sniffAddr("fuzz.txt", []byte(in))
	})
}

// ip -d address from a sosreport: the detail lines of -d (promiscuity,
// veth, numtxqueues ...) are not addresses.
func TestAddrsDetail(t *testing.T) {
	parsetest.CheckLines(t, "ip_-d_address", addrFile(t, "parse/testdata/bundles/sosreport-node-a-2026-11-22-nmbdlaa/sos_commands/networking/ip_-d_address"), []string{
		"3  lo UNKNOWN 127.0.0.1/8 host   00:00:00:00:00:00",
		"5  lo UNKNOWN ::1/128 host   00:00:00:00:00:00",
		"10  nmbdl-a UP 10.77.0.1/24 global   9e:82:9a:ce:c1:14",
		"12  nmbdl-a UP fe80::9c82:9aff:fece:c114/64 link  tentative 9e:82:9a:ce:c1:14",
	})
}
