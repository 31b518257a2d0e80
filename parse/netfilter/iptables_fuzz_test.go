package netfilter

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func FuzzIPTables(f *testing.F) {
	for rel := range IPTablesTestInputs {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 4096 {
			b = b[:4096]
		}
		f.Add(string(b))
	}
	f.Add(kubeProxyRestore)
	f.Fuzz(func(t *testing.T, in string) {
		sets, err := IPTables(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, rs := range sets {
			if rs.Pos.Line == 0 || (rs.Family != "ipv4" && rs.Family != "ipv6") {
				t.Fatalf("ruleset %+v", rs)
			}
			for _, tb := range rs.Tables {
				for _, c := range tb.Chains {
					if c.Pos.Line == 0 {
						t.Fatalf("chain without a line: %+v", c)
					}
					for _, r := range c.Rules {
						if r.Pos.Line == 0 || r.Raw == "" || r.Probability < 0 || r.Probability > 1 {
							t.Fatalf("rule %+v", r)
						}
					}
				}
			}
		}
	})
}

// FuzzIPTablesForms writes one kube-proxy rule in the save form and as a
// -nvL row and checks both read the same.
func FuzzIPTablesForms(f *testing.F) {
	f.Add("KUBE-SEP-IT2ZTR26TO4XFPTO", "kube-system/kube-dns:dns -> 10.244.0.2:53", uint32(0x0a60000a), uint16(53), 0.33333333349, true, uint64(3400), uint64(207000))
	f.Add("KUBE-MARK-MASQ", "default/kubernetes:https cluster IP", uint32(0x0a600001), uint16(443), 0.0, false, uint64(62000000), uint64(0))
	f.Fuzz(func(t *testing.T, target, comment string, dst uint32, port uint16, prob float64, udp bool, pk, by uint64) {
		if !iptFuzzWord(target) || strings.HasPrefix(target, "-") || comment != strings.TrimSpace(comment) || strings.ContainsAny(comment, "\"\\\n\r\t*\u00a0") || strings.Contains(comment, "  ") {
			return
		}
		if iptIsCount(target) || iptIsProto(target) || target == "[goto]" {
			return
		}
		if prob < 0 || prob > 1 || prob != prob {
			return
		}
		proto := "tcp"
		if udp {
			proto = "udp"
		}
		addr := fmt.Sprintf("%d.%d.%d.%d", byte(dst>>24), byte(dst>>16), byte(dst>>8), byte(dst))
		probS := strconv.FormatFloat(prob, 'f', 11, 64)
		save := fmt.Sprintf("[%d:%d] -A KUBE-SERVICES -d %s/32 -p %s", pk, by, addr, proto)
		row := fmt.Sprintf("%5d %5d %s  %s  --  *      *       0.0.0.0/0            %s       ", pk, by, target, map[bool]string{false: "6", true: "17"}[udp], addr)
		if comment != "" {
			save += ` -m comment --comment "` + comment + `"`
			row += " /* " + comment + " */"
		}
		save += fmt.Sprintf(" -m %s --dport %d", proto, port)
		row += fmt.Sprintf(" %s dpt:%d", proto, port)
		if prob > 0 {
			save += " -m statistic --mode random --probability " + probS
			row += " statistic mode random probability " + probS
		}
		save += " -j " + target
		in := "*nat\n:KUBE-SERVICES - [0:0]\n" + save + "\nCOMMIT\nroot@n:~# iptables -t nat -nvxL KUBE-SERVICES\nChain KUBE-SERVICES (2 references)\n    pkts      bytes target     prot opt in     out     source               destination\n" + row + "\n"
		sets, err := IPTables(strings.NewReader(in), "forms.txt")
		if err != nil {
			t.Fatalf("%v\n%s", err, in)
		}
		if len(sets) != 2 {
			t.Fatalf("%d rulesets\n%s", len(sets), in)
		}
		a := sets[0].Table("nat").Chain("KUBE-SERVICES").Rules[0]
		b := sets[1].Table("nat").Chain("KUBE-SERVICES").Rules[0]
		if ka, kb := iptKeyOf(a), iptKeyOf(b); ka != kb || a.Packets != b.Packets || a.Bytes != b.Bytes {
			t.Fatalf("forms differ\n save %+v\n list %+v\n%s", ka, kb, in)
		}
		if a.Target != target || a.Comment != comment || a.DPort != strconv.Itoa(int(port)) || a.Packets != pk {
			t.Fatalf("save form read as %+v\n%s", a, in)
		}
		if want, _ := strconv.ParseFloat(probS, 64); a.Probability != want {
			t.Fatalf("probability %v, want %v", a.Probability, want)
		}
	})
}

func iptFuzzWord(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func TestKubeProxySaveGenerator(t *testing.T) {
	rs := iptOne(t, must(IPTables(bytes.NewReader(parsetest.KubeProxySave(50)), "gen.txt")))
	// 4 base rules + per Service: 1 in KUBE-SERVICES, 4 in its chain, 2 per endpoint
	if n := rs.Rules(); n != 3+4+1+50*(1+4+6) {
		t.Errorf("%d rules", n)
	}
	if c := len(rs.Table("nat").Chains); c != 7+50*4 {
		t.Errorf("%d chains", c)
	}
}

// BenchmarkIPTablesSave reads the iptables-save of a node with 10,000
// Services (40,000 chains, 110,000 rules), generated in kube-proxy's
// layout.
func BenchmarkIPTablesSave(b *testing.B) {
	in := parsetest.KubeProxySave(10000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		sets, err := IPTables(bytes.NewReader(in), "bench.txt")
		if err != nil || len(sets) != 1 {
			b.Fatal(err)
		}
	}
}
