package anon

import (
	"math/bits"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/model"
)

// commonPrefix is how many leading bits a and b share.
func commonPrefix(a, b netip.Addr) int {
	x, y := a.As16(), b.As16()
	n := 0
	for i := range x {
		if d := x[i] ^ y[i]; d != 0 {
			return n + bits.LeadingZeros8(d)
		}
		n += 8
	}
	return n
}

// Two addresses share as many leading bits after the mapping as before,
// for v4 and v6; the family is kept and the mapping is a function.
func TestAddrPrefixPreserving(t *testing.T) {
	a := New("k")
	pairs := [][2]string{
		{"10.0.0.1", "10.0.0.2"}, {"10.0.0.1", "10.0.1.1"}, {"10.0.0.1", "10.1.0.1"},
		{"10.0.0.1", "192.168.0.1"}, {"172.16.5.4", "172.16.5.4"}, {"10.244.1.5", "10.244.2.7"},
		{"fd00::1", "fd00::2"}, {"2001:db8:1::5", "2001:db8:2::5"}, {"fe80::1", "2001:db8::1"},
	}
	for _, p := range pairs {
		x, y := netip.MustParseAddr(p[0]), netip.MustParseAddr(p[1])
		ax, ay := a.Addr(x), a.Addr(y)
		if ax.Is4() != x.Is4() {
			t.Errorf("%s became %s: another family", x, ax)
		}
		if ax == x {
			t.Errorf("%s was kept", x)
		}
		if got, want := commonPrefix(ax, ay), commonPrefix(x, y); got != want {
			t.Errorf("%s, %s share %d bits; their tokens %s, %s share %d", x, y, want, ax, ay, got)
		}
		if a.Addr(x) != ax {
			t.Errorf("%s mapped twice differently", x)
		}
	}
}

// The same key gives the same tokens in another Anonymizer; another key,
// or none, others.
func TestKeyReproducible(t *testing.T) {
	ip := netip.MustParseAddr("10.96.0.10")
	a, b, c := New("secret"), New("secret"), New("other")
	if a.Addr(ip) != b.Addr(ip) {
		t.Errorf("same key: %s and %s", a.Addr(ip), b.Addr(ip))
	}
	if a.Addr(ip) == c.Addr(ip) {
		t.Errorf("keys secret and other both map %s to %s", ip, a.Addr(ip))
	}
	if r1, r2 := New(""), New(""); r1.Addr(ip) == r2.Addr(ip) {
		t.Errorf("two random keys map %s alike", ip)
	}
	a.AddName("node", "worker-7")
	b.AddName("node", "worker-7")
	if x, y := a.Text("worker-7"), b.Text("worker-7"); x != y || !strings.HasPrefix(x, "node-") {
		t.Errorf("same key: node worker-7 became %q and %q", x, y)
	}
}

// Addresses that say nothing of a network are kept.
func TestKeptAddrs(t *testing.T) {
	a := New("k")
	for _, s := range []string{"127.0.0.1", "0.0.0.0", "::1", "::", "255.255.255.255", "224.0.0.251", "ff02::1"} {
		ip := netip.MustParseAddr(s)
		if got := a.Addr(ip); got != ip {
			t.Errorf("%s became %s", s, got)
		}
	}
}

func TestText(t *testing.T) {
	a := New("k")
	a.AddName("node", "worker-1")
	a.AddName("pod", "web-7d9f-x2")
	a.AddName("namespace", "shop")
	a.AddName("namespace", "kube-system") // kept
	a.AddName("pod", "coredns-5d78c9869d-x2x9q")
	a.AddName("cluster", "prod-eu")
	a.AddName("netpol", "default-deny") // not a system name
	a.AddName("svc", "web")
	ip := func(s string) string { return a.Addr(netip.MustParseAddr(s)).String() }
	tests := []struct{ in, want string }{
		{"10.0.0.1", ip("10.0.0.1")},
		{"SYN 10.0.0.1:34567 -> 10.96.0.10:53", "SYN " + ip("10.0.0.1") + ":34567 -> " + ip("10.96.0.10") + ":53"},
		{"IP 10.0.0.1.34567 > 10.96.0.10.53: Flags [S]", "IP " + ip("10.0.0.1") + ".34567 > " + ip("10.96.0.10") + ".53: Flags [S]"},
		{"sent to 10.0.0.1.", "sent to " + ip("10.0.0.1") + "."},
		{"[fd00::5]:443", "[" + ip("fd00::5") + "]:443"},
		{"IP6 fd00::5.443 > fd00::6.34567: Flags [R]", "IP6 " + ip("fd00::5") + ".443 > " + ip("fd00::6") + ".34567: Flags [R]"},
		{"fe80::1%eth0 up", ip("fe80::1%eth0") + " up"},
		{"at 12:34:56.789 and 2024-01-02", "at 12:34:56.789 and 2024-01-02"},
		{"pod shop/web-7d9f-x2 on worker-1", "pod " + a.nameToken("namespace", "shop") + "/" + a.nameToken("pod", "web-7d9f-x2") + " on " + a.nameToken("node", "worker-1")},
		{"worker-10 and xworker-1", "worker-10 and xworker-1"},
		{"Pod kube-system/kube-apiserver-worker-1", "Pod kube-system/kube-apiserver-" + a.nameToken("node", "worker-1")},
		{"kube-system/coredns-5d78c9869d-x2x9q", "kube-system/coredns-5d78c9869d-x2x9q"},
		{"default/web default-deny", "default/" + a.nameToken("svc", "web") + " " + a.nameToken("netpol", "default-deny")},
		{"context prod-eu", "context " + a.nameToken("cluster", "prod-eu")},
		{"factory.go:134: dead beef", "factory.go:134: dead beef"},
		{"ip-10-0-0-1.ec2.internal", "ip-" + strings.ReplaceAll(ip("10.0.0.1"), ".", "-") + ".ec2.internal"},
		// After a directory named by hex digits alone.
		{"/data/001/10.0.0.1.pcap", "/data/001/" + ip("10.0.0.1") + ".pcap"},
		{"/tmp/abc/10.0.0.1/fd00::5", "/tmp/abc/" + ip("10.0.0.1") + "/" + ip("fd00::5")},
		{"beef 10.244.1.0/24", "beef " + a.Prefix(netip.MustParsePrefix("10.244.1.0/24")).String()},
	}
	for _, tt := range tests {
		if got := a.Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	p := a.Text("10.244.1.0/24 holds 10.244.1.5")
	want := a.Prefix(netip.MustParsePrefix("10.244.1.0/24"))
	if !strings.HasPrefix(p, want.String()+" ") || want.Addr() != want.Masked().Addr() {
		t.Errorf("subnet became %q, want %s (masked)", p, want)
	}
	if !want.Contains(a.Addr(netip.MustParseAddr("10.244.1.5"))) {
		t.Errorf("the token of 10.244.1.5 is not in the subnet's token %s", want)
	}
}

func TestMAC(t *testing.T) {
	a := New("k")
	got := a.Text("lladdr 52:54:00:AB:cd:01 REACHABLE, ff:ff:ff:ff:ff:ff")
	tok := a.MAC("52:54:00:ab:cd:01")
	if got != "lladdr "+tok+" REACHABLE, ff:ff:ff:ff:ff:ff" {
		t.Errorf("got %q", got)
	}
	if !isMAC(tok) || tok == "52:54:00:ab:cd:01" {
		t.Errorf("token %q is no other MAC address", tok)
	}
	if b := tok[1]; !strings.ContainsRune("26ae", rune(b)) {
		t.Errorf("token %q is not locally administered unicast", tok)
	}
}

type inner struct {
	Addr  netip.Addr
	Names []string
}

type outer struct {
	Text   string
	Facts  map[string]any
	Ptr    *inner
	Count  int
	hidden string
}

// Value copies: the original keeps its values; every string, address and
// nested value is anonymized; direct map keys are kept.
func TestValue(t *testing.T) {
	a := New("k")
	a.AddName("pod", "web-1")
	ip := netip.MustParseAddr("10.1.2.3")
	v := outer{
		Text:   "web-1 at 10.1.2.3",
		Facts:  map[string]any{"pod": "web-1", "web-1": 1, "addrs": []netip.Addr{ip}, "per_pod": map[string]int{"web-1": 3}},
		Ptr:    &inner{Addr: ip, Names: []string{"web-1"}},
		Count:  4,
		hidden: "web-1",
	}
	got := Value(a, v)
	pod := a.Text("web-1")
	if got.Text != pod+" at "+a.Addr(ip).String() {
		t.Errorf("Text %q", got.Text)
	}
	if got.Facts["pod"] != pod || got.Facts[pod] != 1 || got.Facts["web-1"] != nil {
		t.Errorf("facts %v: a word key is kept, its value anonymized; another key is anonymized", got.Facts)
	}
	if addrs := got.Facts["addrs"].([]netip.Addr); addrs[0] != a.Addr(ip) {
		t.Errorf("addrs %v", addrs)
	}
	if m := got.Facts["per_pod"].(map[string]int); m[pod] != 3 || len(m) != 1 {
		t.Errorf("nested map %v: its keys are anonymized", m)
	}
	if got.Ptr == v.Ptr || got.Ptr.Addr != a.Addr(ip) || got.Ptr.Names[0] != pod {
		t.Errorf("pointer %+v", got.Ptr)
	}
	if got.Count != 4 || got.hidden != "web-1" {
		t.Errorf("other fields changed: %+v", got)
	}
	if v.Text != "web-1 at 10.1.2.3" || v.Ptr.Addr != ip || v.Ptr.Names[0] != "web-1" || v.Facts["pod"] != "web-1" {
		t.Errorf("the original was changed: %+v %+v", v, v.Ptr)
	}
}

// Learn finds nodes, pods, namespaces and owners, but not system names.
func TestLearn(t *testing.T) {
	snap := &model.Snapshot{Inputs: []model.Input{{Path: "b/worker-3/ss.txt", Node: "worker-3"}}}
	pod := model.Pod{}
	pod.Pod = corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cart-5c7", Namespace: "shop", Labels: map[string]string{"app": "cart", "tier": "1"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "cart-rs"}}}, Spec: corev1.PodSpec{NodeName: "worker-4"}}
	sys := model.Pod{}
	sys.Pod = corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy-abcde", Namespace: "kube-system"}}
	snap.Kube.Pods = []model.Pod{pod, sys}
	a := New("k")
	a.Learn(snap)
	in := "worker-3 worker-4 shop/cart-5c7 cart-rs app=cart tier=1 kube-system/kube-proxy-abcde"
	out := a.Text(in)
	if !strings.Contains(out, " tier=1 ") {
		t.Errorf("the label value 1 was replaced: %q", out)
	}
	for _, name := range []string{"worker-3", "worker-4", "shop", "cart-5c7", "cart-rs", "=cart"} {
		if strings.Contains(out, name) {
			t.Errorf("%s survives in %q", name, out)
		}
	}
	if !strings.HasSuffix(out, " kube-system/kube-proxy-abcde") {
		t.Errorf("system names not kept: %q", out)
	}
	kinds := map[string]string{}
	for _, m := range a.Mappings() {
		kinds[m.Original] = m.Kind
	}
	if kinds["worker-3"] != "node" || kinds["cart-5c7"] != "pod" || kinds["shop"] != "namespace" || kinds["cart-rs"] != "replicaset" {
		t.Errorf("mappings %v", kinds)
	}
}

// Addresses after a word and a colon, as dumps print them (iptables'
// to:ADDR:PORT, ifconfig's addr:ADDR), are replaced; the word is kept.
func TestTextAfterWordColon(t *testing.T) {
	a := New("k")
	for _, s := range []string{"tcp to:10.244.2.7:53", "inet addr:192.168.1.5  Bcast:192.168.1.255", "id:10.0.0.1"} {
		got := a.Text(s)
		for _, orig := range []string{"10.244.2.7", "192.168.1.5", "192.168.1.255", "10.0.0.1"} {
			if strings.Contains(s, orig) && strings.Contains(got, orig) {
				t.Errorf("%q: %s survives in %q", s, orig, got)
			}
		}
		for _, word := range []string{"to:", "addr:", "Bcast:", "id:"} {
			if strings.Contains(s, word) && !strings.Contains(got, word) {
				t.Errorf("%q became %q: the word %q is lost", s, got, word)
			}
		}
	}
	if got := a.Text("tcp dpt:53 spt:1024"); got != "tcp dpt:53 spt:1024" {
		t.Errorf("ports after a word changed: %q", got)
	}
}
