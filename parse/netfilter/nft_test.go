package netfilter

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

const (
	nftDNS   = "service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp"
	nftAPI   = "service-2QRHZV4L-default/kubernetes/tcp/https"
	nftDNSEP = "endpoint-IQ3D4WIZ-kube-system/kube-dns/tcp/dns-tcp__10.244.0.3/53"
)

// TestNFTKubeProxy reads `nft list ruleset` and `nft -a list ruleset` of
// kube-proxy's nftables layout, loaded in a network namespace: two
// Services, kube-dns with 3 endpoints and kubernetes with 1.
func TestNFTKubeProxy(t *testing.T) {
	for _, file := range []string{"kube-proxy-list-ruleset.txt", "kube-proxy-list-ruleset-a.txt"} {
		t.Run(file, func(t *testing.T) {
			f, err := os.Open(filepath.Join(testutil.Root(), "parse/testdata/nft", file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sets, err := NFT(f, file)
			if err != nil {
				t.Fatal(err)
			}
			if len(sets) != 1 || sets[0].Family != "ipv4" || sets[0].Format != "nft" || len(sets[0].Tables) != 1 {
				t.Fatalf("%d rulesets, want one ipv4 nft ruleset with one table", len(sets))
			}
			tb := sets[0].Tables[0]
			if tb.Name != "kube-proxy" || tb.Pos.Line != 1 || len(tb.Chains) != 20 {
				t.Fatalf("table %q at %d with %d chains, want kube-proxy at 1 with 20", tb.Name, tb.Pos.Line, len(tb.Chains))
			}
			if got := sets[0].Rules(); got != 37 {
				t.Errorf("%d rules, want 37", got)
			}
			pre := tb.Chain("nat-prerouting")
			if pre == nil || pre.Hook != "prerouting" || pre.Policy != "ACCEPT" || pre.Pos.Line != 83 || len(pre.Rules) != 1 || pre.Rules[0].Target != "services" || pre.Rules[0].Goto {
				t.Errorf("nat-prerouting %+v", pre)
			}
			if c := tb.Chain("mark-for-masquerade"); c == nil || len(c.Rules) != 1 || c.Rules[0].Target != "MARK" || c.Rules[0].SetMark != "0x4000/0x4000" {
				t.Errorf("mark-for-masquerade %+v", c)
			}
			if c := tb.Chain("masquerading"); c == nil || c.Hook != "" || c.Policy != "" || len(c.Rules) != 3 || c.Rules[0].Target != "RETURN" || c.Rules[0].MarkMatch != "0x0/0x4000" || c.Rules[2].Target != "MASQUERADE" {
				t.Errorf("masquerading %+v", c)
			}

			// The service-ips map: one rule per element, at the element's line.
			svcs := tb.Chain("services")
			if svcs == nil || len(svcs.Rules) != 3 {
				t.Fatalf("services chain %+v, want 2 map elements and the nodeport lookup", svcs)
			}
			dns, api := svcs.Rules[0], svcs.Rules[1]
			if dns.Dst != "10.96.0.10" || dns.Proto != "tcp" || dns.DPort != "53" || dns.Target != nftDNS || !dns.Goto || dns.Pos.String() != file+":23" ||
				dns.Raw != "10.96.0.10 . tcp . 53 : goto "+nftDNS {
				t.Errorf("kube-dns element %+v", dns)
			}
			if api.Dst != "10.96.0.1" || api.Proto != "tcp" || api.DPort != "443" || api.Target != nftAPI || !api.Goto || api.Pos.Line != 24 {
				t.Errorf("kubernetes element %+v", api)
			}
			if np := svcs.Rules[2]; np.Dst != "@nodeport-ips" || np.Target != "" || np.Pos.Line != 110 {
				t.Errorf("nodeport lookup (empty map) %+v", np)
			}

			// numgen random mod 3: three goto rules; walked as iptables'
			// statistic rules are, each endpoint gets a third.
			sc := tb.Chain(nftDNS)
			if sc == nil || len(sc.Rules) != 4 {
				t.Fatalf("kube-dns service chain %+v", sc)
			}
			if m := sc.Rules[0]; m.Target != "mark-for-masquerade" || m.Dst != "10.96.0.10" || m.DPort != "53" || m.Proto != "tcp" || m.Src != "10.244.0.0/16" || !m.NotSrc ||
				m.Comment != "kube-system/kube-dns:dns-tcp cluster IP" || m.Pos.Line != 114 {
				t.Errorf("masquerade rule %+v", m)
			}
			remaining := 1.0
			for i, r := range sc.Rules[1:] {
				if r.Statistic != "random" || !r.Goto || r.Pos.Line != 115 || r.Comment != "kube-system/kube-dns:dns-tcp" || !strings.HasPrefix(r.Raw, "numgen random mod 3 vmap {") {
					t.Errorf("endpoint rule %d %+v", i, r)
				}
				share := remaining * r.Probability
				remaining -= share
				if math.Abs(share-1.0/3) > 1e-9 {
					t.Errorf("endpoint rule %d: share %v (probability %v), want 1/3", i, share, r.Probability)
				}
			}
			if want := []float64{1.0 / 3, 0.5, 1}; sc.Rules[1].Probability != want[0] || sc.Rules[2].Probability != want[1] || sc.Rules[3].Probability != want[2] {
				t.Errorf("probabilities %v %v %v, want %v", sc.Rules[1].Probability, sc.Rules[2].Probability, sc.Rules[3].Probability, want)
			}
			if sc.Rules[2].Target != nftDNSEP {
				t.Errorf("second endpoint %q", sc.Rules[2].Target)
			}
			if a := tb.Chain(nftAPI); a == nil || len(a.Rules) != 2 || a.Rules[1].Probability != 1 || a.Rules[1].Target != "endpoint-GNZBNJ2Q-default/kubernetes/tcp/https__172.18.0.2/6443" {
				t.Errorf("kubernetes service chain %+v", a)
			}

			ep := tb.Chain(nftDNSEP)
			if ep == nil || len(ep.Rules) != 2 {
				t.Fatalf("endpoint chain %+v", ep)
			}
			if d := ep.Rules[1]; d.Target != "DNAT" || d.ToDestination != "10.244.0.3:53" || d.Proto != "tcp" || d.Pos.Line != 125 {
				t.Errorf("dnat rule %+v", d)
			}
			if h := ep.Rules[0]; h.Src != "10.244.0.3" || h.Target != "mark-for-masquerade" || h.Comment != "kube-system/kube-dns:dns-tcp hairpin" {
				t.Errorf("hairpin rule %+v", h)
			}
			if c := tb.Chain("cluster-ips-check"); c == nil || c.Rules[1].Dst != "10.96.0.0/12" || c.Rules[1].Target != "DROP" || c.Rules[0].Target != "REJECT" {
				t.Errorf("cluster-ips-check %+v", c)
			}
		})
	}
}

const nftMixed = `table inet filter {
	chain input {
		type filter hook input priority filter; policy drop;
		ct state { established, related } counter packets 12 bytes 3400 accept
		iifname "cali*" tcp dport { 80, 443, 30000-32767 } accept
		ip6 daddr fd00::1 udp dport 53 accept
		ip saddr . tcp dport vmap { 10.0.0.1 . 22 : accept, 10.0.0.2 . 22 : drop }
		fib daddr type local jump nodeports
	}
	chain nodeports {
	}
	flowtable ft {
		hook ingress priority filter
		devices = { eth0 }
	}
}
table ip6 nat {
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		oifname != "lo" snat ip6 to [fd00::9]
	}
}
`

func TestNFTMatches(t *testing.T) {
	sets, err := NFT(strings.NewReader(nftMixed), "mixed.nft")
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || sets[0].Family != "inet" || sets[1].Family != "ipv6" || sets[1].Tables[0].Name != "nat" {
		t.Fatalf("rulesets %+v", sets)
	}
	in := sets[0].Tables[0].Chain("input")
	if in.Policy != "DROP" || in.Hook != "input" || len(in.Rules) != 6 {
		t.Fatalf("input chain %+v", in)
	}
	r := in.Rules
	if r[0].CTState != "ESTABLISHED,RELATED" || !r[0].Counted || r[0].Packets != 12 || r[0].Bytes != 3400 || r[0].Target != "ACCEPT" {
		t.Errorf("ct rule %+v", r[0])
	}
	if r[1].InIface != "cali+" || r[1].Proto != "tcp" || r[1].DPort != "80,443,30000:32767" {
		t.Errorf("port set rule %+v", r[1])
	}
	if r[2].Dst != "fd00::1" || r[2].Proto != "udp" || r[2].DPort != "53" {
		t.Errorf("ip6 rule %+v", r[2])
	}
	if r[3].Src != "10.0.0.1" || r[3].DPort != "22" || r[3].Target != "ACCEPT" || r[4].Src != "10.0.0.2" || r[4].Target != "DROP" || r[4].Statistic != "" {
		t.Errorf("inline vmap rules %+v %+v", r[3], r[4])
	}
	if r[5].DstType != "LOCAL" || r[5].Target != "nodeports" || r[5].Pos.Line != 8 {
		t.Errorf("fib rule %+v", r[5])
	}
	if c := sets[0].Tables[0].Chain("nodeports"); c == nil || len(c.Rules) != 0 {
		t.Errorf("empty chain %+v", c)
	}
	post := sets[1].Tables[0].Chains[0].Rules[0]
	if post.OutIface != "lo" || !post.NotOutIface || post.Target != "SNAT" || post.ToSource != "[fd00::9]" {
		t.Errorf("snat rule %+v", post)
	}
}

func TestNFTErrors(t *testing.T) {
	in := `garbage before
table ip kube-proxy {
	map m {
		type ipv4_addr : verdict
		elements = { 10.0.0.1 : goto a,
			     10.0.0.2 }
	}
	chain a {
		type nat hook prerouting priority dstnat; policy maybe;
		dnat to
		numgen random mod x vmap { 0 : goto b }
		ip daddr vmap @m
		ip daddr vmap @missing
		comment "open
		tcp dport 80 accept
	}
	wat
`
	sets, err := NFT(strings.NewReader(in), "bad.nft")
	var list model.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v, want a list", err)
	}
	want := []string{"bad.nft:1: ", "bad.nft:6: ", "bad.nft:9: ", "bad.nft:10: ", "bad.nft:11: ", "bad.nft:14: ", "bad.nft:17: ", "bad.nft:17: ", "bad.nft:13: "}
	if len(list) != len(want) {
		for _, e := range list {
			t.Log(e)
		}
		t.Fatalf("%d errors, want %d", len(list), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(list[i].Error(), w) {
			t.Errorf("error %d: %v, want it at %s", i, list[i], w)
		}
	}
	if !errors.Is(list[7], format.ErrTruncated) || !errors.Is(list[0], format.ErrSyntax) {
		t.Errorf("unclosed table: %v, want format.ErrTruncated", list[7])
	}
	if len(sets) != 1 {
		t.Fatalf("%d rulesets", len(sets))
	}
	c := sets[0].Tables[0].Chain("a")
	if c == nil || len(c.Rules) != 3 {
		t.Fatalf("chain a %+v, want the map element, the unresolved lookup and the tcp rule", c)
	}
	if c.Rules[0].Dst != "10.0.0.1" || c.Rules[0].Target != "a" || c.Rules[0].Pos.Line != 5 || c.Rules[2].DPort != "80" || c.Rules[2].Pos.Line != 15 {
		t.Errorf("rules %+v %+v", c.Rules[0], c.Rules[2])
	}
}

func TestSniffNFT(t *testing.T) {
	real, err := os.ReadFile(filepath.Join(testutil.Root(), "parse/testdata/nft/kube-proxy-list-ruleset-a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]bool{
		string(real): true,
		nftMixed:     true,
		"# Warning: table ip filter is managed by iptables-nft, do not touch!\ntable ip filter {\n\tchain INPUT {\n": true,
		"root@node1:~# nft list ruleset\ntable ip nat {\n":                                                           true,
		"*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j KUBE-SERVICES\nCOMMIT\n":                                   false,
		"Chain INPUT (policy ACCEPT)\ntarget     prot opt source               destination\n":                        false,
		"-P INPUT ACCEPT\n-A INPUT -j KUBE-FIREWALL\n":                                                               false,
		"IP Virtual Server version 1.2.1 (size=4096)\n":                                                              false,
		"net.ipv4.ip_forward = 1\n":                                                                                  false,
	} {
		if got := sniffNFT("x", []byte(in)) >= 50; got != want {
			t.Errorf("sniff %q = %v, want %v", in[:20], got, want)
		}
		for _, other := range []func(string, []byte) int{sniffIPTablesSave, sniffIPTablesList, sniffIPTablesRules, sniffIPVSadm} {
			if want && other("x", []byte(in)) != 0 {
				t.Errorf("another iptables sniffer scores nft output %q", in[:20])
			}
		}
	}
}

func FuzzNFT(f *testing.F) {
	f.Add(nftMixed)
	if b, err := os.ReadFile(filepath.Join(testutil.Root(), "parse/testdata/nft/kube-proxy-list-ruleset-a.txt")); err == nil {
		f.Add(string(b))
	}
	f.Add("table ip t {\n\tchain c {\n\t\tnumgen random mod 2 vmap { 0 : goto a, 1 : goto b }\n\t}\n}\n")
	f.Fuzz(func(t *testing.T, in string) {
		sets, err := NFT(strings.NewReader(in), "fuzz.nft")
		parsetest.CheckFuzzErrors(t, err, "fuzz.nft")
		for _, rs := range sets {
			for _, tb := range rs.Tables {
				for _, c := range tb.Chains {
					for _, r := range c.Rules {
						if r.Pos.Line == 0 || r.Probability < 0 || r.Probability > 1 {
							t.Fatalf("rule %+v", r)
						}
					}
				}
			}
		}
	})
}

func TestNFTMarks(t *testing.T) {
	in := "table ip kube-proxy {\n\tchain m {\n" +
		"\t\tmeta mark set meta mark | 0x00004000\n" +
		"\t\tmeta mark & 0x00004000 == 0x00000000 return\n" +
		"\t\tmeta mark set meta mark ^ 0x00004000\n" +
		"\t\tmark set mark or 0x4000\n" +
		"\t\tmeta mark != 0x00000001 meta l4proto 17 accept\n" +
		"\t}\n}\n"
	sets, err := NFT(strings.NewReader(in), "m.nft")
	if err != nil {
		t.Fatal(err)
	}
	r := sets[0].Tables[0].Chains[0].Rules
	if len(r) != 5 {
		t.Fatalf("%d rules", len(r))
	}
	if r[0].Target != "MARK" || r[0].SetMark != "0x4000/0x4000" || r[3].SetMark != "0x4000/0x4000" {
		t.Errorf("mark or: %+v %+v", r[0], r[3])
	}
	if r[1].MarkMatch != "0x0/0x4000" || r[1].NotMark || r[1].Target != "RETURN" {
		t.Errorf("mark match %+v", r[1])
	}
	if r[2].SetMark != "0x4000/0x0" {
		t.Errorf("mark xor %+v", r[2])
	}
	if r[4].MarkMatch != "0x1" || !r[4].NotMark || r[4].Proto != "udp" || r[4].Target != "ACCEPT" {
		t.Errorf("negated mark, numeric protocol %+v", r[4])
	}
}

// A chain listed twice in one table is reported (chains are looked up by
// name, not by a scan of the table: a kube-proxy ruleset of 10,000
// Services has 40,000 chains). The same name in another table is fine.
func TestNFTChainTwice(t *testing.T) {
	in := `table ip a {
	chain c {
		accept
	}
	chain c {
		drop
	}
}
table ip b {
	chain c {
		accept
	}
}
`
	sets, err := NFT(strings.NewReader(in), "twice.nft")
	if err == nil || err.Error() != `twice.nft:5: syntax error: chain c listed twice in table a ("chain c {")` {
		t.Errorf("err %v", err)
	}
	if len(sets) != 1 || len(sets[0].Tables) != 2 || len(sets[0].Tables[0].Chains) != 2 || len(sets[0].Tables[1].Chains) != 1 {
		t.Errorf("sets %+v", sets)
	}
}

// Base chains keep their type and priority (names read as numbers), sets
// their elements, and a verdict map element its comment (kube-proxy names
// the Service port of a no-endpoint-services element there).
func TestNFTChainPrioritySetsComments(t *testing.T) {
	in := "table ip kube-proxy {\n" +
		"\tset nodeport-ips {\n\t\ttype ipv4_addr\n\t\telements = { 10.34.4.246, 10.0.0.0/8 }\n\t}\n" +
		"\tmap no-endpoint-services {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n" +
		"\t\telements = { 10.43.21.102 . tcp . 4317 comment \"riset/otelcol-opentelemetry-collector:otlp\" : goto reject-chain }\n\t}\n" +
		"\tchain filter-prerouting {\n\t\ttype filter hook prerouting priority dstnat - 10; policy accept;\n\t}\n" +
		"\tchain nat-prerouting {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n\t}\n" +
		"\tchain filter-output-post-dnat {\n\t\ttype filter hook output priority -90; policy accept;\n\t}\n" +
		"\tchain nat-postrouting {\n\t\ttype nat hook postrouting priority srcnat + 5; policy accept;\n\t}\n" +
		"\tchain service-endpoints-check {\n\t\tip daddr . meta l4proto . th dport vmap @no-endpoint-services\n" +
		"\t\tip daddr . meta l4proto . th dport vmap { 10.0.0.1 . tcp . 80 comment \"a/b:http\" : drop }\n\t}\n" +
		"\tchain reject-chain {\n\t\treject\n\t}\n}\n"
	sets, err := NFT(strings.NewReader(in), "p.nft")
	if err != nil {
		t.Fatal(err)
	}
	tb := sets[0].Tables[0]
	for name, want := range map[string]string{
		"filter-prerouting": "filter prerouting -110", "nat-prerouting": "nat prerouting -100",
		"filter-output-post-dnat": "filter output -90", "nat-postrouting": "nat postrouting 105", "reject-chain": "  0",
	} {
		c := tb.Chain(name)
		if c == nil {
			t.Fatalf("no chain %s", name)
		}
		if got := fmt.Sprintf("%s %s %d", c.Type, c.Hook, c.Priority); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if got, ok := tb.SetElems("@nodeport-ips"); !ok || fmt.Sprint(got) != "[10.34.4.246 10.0.0.0/8]" {
		t.Errorf("nodeport-ips %v %v", got, ok)
	}
	if _, ok := tb.SetElems("@no-endpoint-services"); ok {
		t.Error("a verdict map is kept as a set")
	}
	r := tb.Chain("service-endpoints-check").Rules
	if len(r) != 2 {
		t.Fatalf("%d rules", len(r))
	}
	if r[0].Dst != "10.43.21.102" || r[0].Proto != "tcp" || r[0].DPort != "4317" || r[0].Target != "reject-chain" || !r[0].Goto ||
		r[0].Comment != "riset/otelcol-opentelemetry-collector:otlp" || r[0].Pos.Line != 8 {
		t.Errorf("element with a comment %+v", r[0])
	}
	if r[1].DPort != "80" || r[1].Comment != "a/b:http" || r[1].Target != "DROP" {
		t.Errorf("inline element with a comment %+v", r[1])
	}
}

// iptables-nft's translations of kube-proxy's statistic and recent
// matches, as `nft list ruleset` shows them (dataplane/testdata/nft has the
// whole listing).
func TestNFTIPTablesCompat(t *testing.T) {
	in := "table ip nat {\n\tchain KUBE-SVC-A {\n" +
		"\t\t xt match recent counter packets 0 bytes 0 jump KUBE-SEP-1\n" +
		"\t\t meta random & 2147483647 < 1073741824 counter packets 0 bytes 0 jump KUBE-SEP-1\n" +
		"\t\t meta random & 2147483647 < 715827882 counter packets 0 bytes 0 jump KUBE-SEP-2\n" +
		"\t}\n\tchain KUBE-SEP-1 {\n" +
		"\t\tmeta l4proto tcp  xt match recent  counter packets 0 bytes 0 dnat to 10.0.0.1:80\n" +
		"\t\tmeta random & 2147483647 < x accept\n" +
		"\t}\n}\n"
	sets, err := NFT(strings.NewReader(in), "c.nft")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Line != 9 {
		t.Fatalf("errors %v, want one at line 9", err)
	}
	svc := sets[0].Tables[0].Chain("KUBE-SVC-A").Rules
	if svc[0].Recent == nil || svc[0].Recent.Set || svc[0].Target != "KUBE-SEP-1" || svc[0].Statistic != "" {
		t.Errorf("recent check %+v", svc[0])
	}
	if svc[1].Statistic != "random" || svc[1].Probability != 0.5 || svc[1].Recent != nil {
		t.Errorf("statistic %+v", svc[1])
	}
	if math.Abs(svc[2].Probability-1.0/3) > 1e-9 {
		t.Errorf("probability %v, want 1/3", svc[2].Probability)
	}
	sep := sets[0].Tables[0].Chain("KUBE-SEP-1").Rules
	if len(sep) != 1 || sep[0].Recent == nil || !sep[0].Recent.Set || sep[0].ToDestination != "10.0.0.1:80" {
		t.Errorf("recent set %+v", sep)
	}
}
