package netfilter

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// iptFile parses a file of the repository (path relative to its root).
func iptFile(t *testing.T, rel string) []*model.Ruleset {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	sets, err := IPTables(bytes.NewReader(b), filepath.Base(rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return sets
}

// iptChain returns the chain of table in rs, failing the test if absent.
func iptChain(t *testing.T, rs *model.Ruleset, table, chain string) *model.Chain {
	t.Helper()
	tb := rs.Table(table)
	if tb == nil {
		t.Fatalf("no table %q in %s", table, rs.Pos)
	}
	c := tb.Chain(chain)
	if c == nil {
		t.Fatalf("no chain %q in table %q of %s", chain, table, rs.Pos)
	}
	return c
}

func iptOne(t *testing.T, sets []*model.Ruleset) *model.Ruleset {
	t.Helper()
	if len(sets) != 1 {
		t.Fatalf("%d rulesets, want 1", len(sets))
	}
	return sets[0]
}

// Seed 000: `iptables -t nat -nvL` pasted with no-break spaces and "[...]"
// elisions: the apiserver Service's statistic chain and its endpoints.
func TestIPTablesSeedAPIServerAffinity(t *testing.T) {
	rs := iptOne(t, iptFile(t, "fixtures/seeds/000-apiserver-affinity/iptables-nat.txt"))
	if rs.Format != "iptables-list" || rs.Family != "ipv4" || rs.Pos.String() != "iptables-nat.txt:1" || len(rs.Tables) != 1 || rs.Tables[0].Name != "nat" {
		t.Fatalf("ruleset %s %s at %s, tables %d", rs.Format, rs.Family, rs.Pos, len(rs.Tables))
	}
	pre := iptChain(t, rs, "nat", "PREROUTING")
	if pre.Policy != "ACCEPT" || pre.Packets != 12 || pre.Bytes != 744 || len(pre.Rules) != 3 || pre.Pos.Line != 3 {
		t.Errorf("PREROUTING %+v", pre)
	}
	cali := pre.Rules[0]
	if cali.Target != "cali-PREROUTING" || cali.Packets != 62000000 || cali.Bytes != 4053000000 || !cali.Counted ||
		cali.Comment != "cali:6gwbT8clXdHdC1b1" || cali.Proto != "" || cali.Src != "" || cali.Dst != "" || cali.Pos.Line != 5 {
		t.Errorf("cali-PREROUTING jump %+v", cali)
	}
	if docker := pre.Rules[2]; docker.Target != "DOCKER" || docker.DstType != "LOCAL" || docker.Packets != 60000000 {
		t.Errorf("DOCKER jump %+v", docker)
	}
	svcs := iptChain(t, rs, "nat", "KUBE-SERVICES")
	if svcs.References != 2 || len(svcs.Rules) != 2 {
		t.Fatalf("KUBE-SERVICES %+v", svcs)
	}
	masq := svcs.Rules[0]
	if masq.Target != "KUBE-MARK-MASQ" || masq.Proto != "tcp" || masq.Src != "10.42.0.0/16" || !masq.NotSrc ||
		masq.Dst != "10.43.0.1" || masq.NotDst || masq.DPort != "443" || masq.Comment != "default/kubernetes:https cluster IP" || masq.Pos.Line != 14 {
		t.Errorf("KUBE-SERVICES masquerade rule %+v", masq)
	}
	if p, ok := masq.DstPrefix(); !ok || p.String() != "10.43.0.1/32" {
		t.Errorf("DstPrefix %v %v", p, ok)
	}
	svc := iptChain(t, rs, "nat", "KUBE-SVC-NPX46M4PTMTKRN6Y")
	want := []struct {
		target string
		prob   float64
	}{{"KUBE-SEP-JI2YDTPJGKQ65QZ6", 0.33332999982}, {"KUBE-SEP-QHIGH2IZY5DN2JMY", 0.5}, {"KUBE-SEP-QROB4HJUVU2OVFPU", 0}}
	if len(svc.Rules) != len(want) {
		t.Fatalf("%d rules in the Service chain, want %d", len(svc.Rules), len(want))
	}
	for i, w := range want {
		r := svc.Rules[i]
		mode := "random"
		if w.prob == 0 {
			mode = ""
		}
		if r.Target != w.target || r.Probability != w.prob || r.Statistic != mode || r.Pos.Line != 22+i {
			t.Errorf("Service chain rule %d: %s %v %q at %s, want %s %v", i, r.Target, r.Probability, r.Statistic, r.Pos, w.target, w.prob)
		}
	}
	for sep, ip := range map[string]string{"KUBE-SEP-JI2YDTPJGKQ65QZ6": "10.10.1.144", "KUBE-SEP-QHIGH2IZY5DN2JMY": "10.150.79.150", "KUBE-SEP-QROB4HJUVU2OVFPU": "10.150.79.151"} {
		c := iptChain(t, rs, "nat", sep)
		if len(c.Rules) != 2 || c.References != 1 {
			t.Fatalf("%s: %d rules", sep, len(c.Rules))
		}
		if m := c.Rules[0]; m.Target != "KUBE-MARK-MASQ" || m.Src != ip {
			t.Errorf("%s masquerade %+v", sep, m)
		}
		if d := c.Rules[1]; d.Target != "DNAT" || d.Proto != "tcp" || d.ToDestination != ip+":6443" {
			t.Errorf("%s DNAT %+v", sep, d)
		}
	}
}

// Seed 004: grep'd rows of KUBE-SERVICES, the kube-dns Service chain with
// its 65 endpoint jumps, and two endpoint chains whose DNAT lost its
// address ("to::0"), listed name-resolved (-L without -n).
func TestIPTablesSeedStaleDNAT(t *testing.T) {
	rs := iptOne(t, iptFile(t, "fixtures/seeds/004-stale-dnat/iptables-nat-kube-dns.txt"))
	if rs.Format != "iptables-list" || rs.Pos.Line != 3 || len(rs.Tables) != 1 || rs.Tables[0].Name != "nat" {
		t.Fatalf("ruleset %s at %s, %d tables", rs.Format, rs.Pos, len(rs.Tables))
	}
	if names := iptChainNames(rs.Tables[0]); strings.Join(names, " ") != "KUBE-SERVICES KUBE-SVC-ERIFXISQEP7F7OF4 KUBE-SEP-RVDWX7YLRKCSUDII KUBE-SEP-6PL2LOTBN64MN2IF" {
		t.Errorf("chains %q", names)
	}
	// The grep'd rows belong to the chain the prompt listed.
	svcs := iptChain(t, rs, "nat", "KUBE-SERVICES")
	if len(svcs.Rules) != 2 {
		t.Fatalf("KUBE-SERVICES: %d rules, want the 2 grep'd rows", len(svcs.Rules))
	}
	tcp, udp := svcs.Rules[0], svcs.Rules[1]
	if tcp.Target != "KUBE-SVC-ERIFXISQEP7F7OF4" || tcp.Proto != "tcp" || tcp.Src != "" || tcp.Dst != "10.178.64.10" || tcp.DPort != "domain" ||
		tcp.Comment != "kube-system/kube-dns:dns-tcp cluster IP" || tcp.Pos.Line != 4 {
		t.Errorf("dns-tcp row %+v", tcp)
	}
	if n, ok := model.PortNumber(tcp.DPort); !ok || n != 53 {
		t.Errorf("PortNumber(%q) = %d %v", tcp.DPort, n, ok)
	}
	if udp.Target != "KUBE-SVC-TCOU7JCQXEZGVUNU" || udp.Proto != "udp" || udp.DPort != "domain" || udp.Pos.Line != 5 {
		t.Errorf("dns row %+v", udp)
	}

	svc := iptChain(t, rs, "nat", "KUBE-SVC-ERIFXISQEP7F7OF4")
	if svc.References != 1 || svc.Pos.Line != 8 {
		t.Errorf("Service chain header %+v", svc)
	}
	seps := map[string]bool{}
	for i, r := range svc.Rules {
		if !strings.HasPrefix(r.Target, "KUBE-SEP-") {
			t.Errorf("rule %d jumps to %s", i, r.Target)
		}
		seps[r.Target] = true
		// kube-proxy gives rule i of n the probability 1/(n-i).
		if i < len(svc.Rules)-1 {
			if want := 1 / float64(len(svc.Rules)-i); r.Statistic != "random" || r.Probability < want-1e-8 || r.Probability > want+1e-8 {
				t.Errorf("rule %d: probability %v, want about %v", i, r.Probability, want)
			}
		}
	}
	if len(svc.Rules) != 65 || len(seps) != 65 {
		t.Fatalf("%d rules to %d KUBE-SEP chains, want 65", len(svc.Rules), len(seps))
	}
	first, third, last := svc.Rules[0], svc.Rules[62], svc.Rules[64]
	if first.Target != "KUBE-SEP-BMNCBK7ROA3MA6UU" || first.Probability != 0.01538461540 || first.Pos.Line != 10 {
		t.Errorf("first endpoint jump %+v", first)
	}
	if third.Target != "KUBE-SEP-3UNVKH34LEKZ2P5K" || third.Probability != 0.33333333349 || svc.Rules[63].Probability != 0.5 {
		t.Errorf("last random jumps %+v %+v", third, svc.Rules[63])
	}
	if last.Target != "KUBE-SEP-Z7ZOTGJIY44EKMWW" || last.Statistic != "" || last.Probability != 0 || last.Pos.Line != 74 {
		t.Errorf("last endpoint jump %+v", last)
	}
	for sep, src := range map[string]string{"KUBE-SEP-RVDWX7YLRKCSUDII": "10.179.94.16", "KUBE-SEP-6PL2LOTBN64MN2IF": "10.179.45.66"} {
		c := iptChain(t, rs, "nat", sep)
		if !seps[sep] || len(c.Rules) != 2 {
			t.Fatalf("%s: listed %v, %d rules", sep, seps[sep], len(c.Rules))
		}
		if m := c.Rules[0]; m.Target != "KUBE-MARK-MASQ" || m.Src != src || m.Dst != "" {
			t.Errorf("%s masquerade %+v", sep, m)
		}
		if d := c.Rules[1]; d.Target != "DNAT" || d.Proto != "tcp" || d.ToDestination != ":0" {
			t.Errorf("%s DNAT %+v", sep, d)
		}
	}
	if d := iptChain(t, rs, "nat", "KUBE-SEP-6PL2LOTBN64MN2IF").Rules[1]; d.Pos.Line != 87 {
		t.Errorf("last DNAT at %s", d.Pos)
	}
}

func iptChainNames(tb *model.Table) []string {
	var out []string
	for _, c := range tb.Chains {
		out = append(out, c.Name)
	}
	return out
}

// Seed 004: `iptables -L FORWARD -t filter`, name-resolved.
func TestIPTablesSeedFilterForward(t *testing.T) {
	rs := iptOne(t, iptFile(t, "fixtures/seeds/004-stale-dnat/iptables-filter-forward.txt"))
	fwd := iptChain(t, rs, "filter", "FORWARD")
	if fwd.Policy != "DROP" || fwd.Pos.Line != 3 || len(fwd.Rules) != 13 {
		t.Fatalf("FORWARD %+v", fwd)
	}
	targets := make([]string, len(fwd.Rules))
	for i, r := range fwd.Rules {
		targets[i] = r.Target
		if r.Src != "" || r.Dst != "" || r.Counted {
			t.Errorf("rule %d %+v", i, r)
		}
	}
	if got := strings.Join(targets, " "); got != "cali-FORWARD KUBE-FORWARD KUBE-SERVICES DOCKER-USER DOCKER-ISOLATION-STAGE-1 ACCEPT DOCKER ACCEPT ACCEPT ACCEPT ACCEPT ACCEPT ACCEPT" {
		t.Errorf("targets %s", got)
	}
	if s := fwd.Rules[2]; s.CTState != "NEW" || s.Comment != "kubernetes service portals" || s.Pos.Line != 7 {
		t.Errorf("KUBE-SERVICES jump %+v", s)
	}
	if e := fwd.Rules[5]; e.CTState != "RELATED,ESTABLISHED" || e.Comment != "" {
		t.Errorf("conntrack ACCEPT %+v", e)
	}
	var protos []string
	for _, r := range fwd.Rules[9:] {
		protos = append(protos, r.Proto)
	}
	if strings.Join(protos, " ") != "tcp udp icmp sctp" {
		t.Errorf("protocols %q", protos)
	}
}

// iptKey is what must be the same of a rule whatever the form of the dump.
type iptKey struct {
	Target, Proto, Src, Dst, In, Out, DPort, SPort  string
	Goto, NotProto, NotSrc, NotDst, NotIn, NotOut   bool
	NotDPort, NotSPort, NotMark, NotCTState         bool
	Comment, Statistic, MarkMatch, CTState, DstType string
	SetMark, ToDestination, ToSource                string
	Probability                                     float64
	NthEvery, NthPacket                             int
	Recent                                          model.RecentMatch
}

// iptCanonAddr reads "10.96.0.10", "10.96.0.10/32" and "10.96.0.10/255.255.255.255" alike.
func iptCanonAddr(s string) string {
	r := model.Rule{Src: s}
	if p, ok := r.SrcPrefix(); ok {
		return p.String()
	}
	return s
}

// iptCanonPorts reads service names of a listing made without -n.
func iptCanonPorts(s string) string {
	var b strings.Builder
	for i, part := range strings.Split(s, ",") {
		if i > 0 {
			b.WriteByte(',')
		}
		for j, p := range strings.Split(part, ":") {
			if j > 0 {
				b.WriteByte(':')
			}
			if n, ok := model.PortNumber(p); ok {
				p = strconv.Itoa(n)
			}
			b.WriteString(p)
		}
	}
	return b.String()
}

func iptKeyOf(r *model.Rule) iptKey {
	k := iptKey{
		Target: r.Target, Proto: r.Proto, Src: iptCanonAddr(r.Src), Dst: iptCanonAddr(r.Dst), In: r.InIface, Out: r.OutIface,
		DPort: iptCanonPorts(r.DPort), SPort: iptCanonPorts(r.SPort),
		Goto: r.Goto, NotProto: r.NotProto, NotSrc: r.NotSrc, NotDst: r.NotDst, NotIn: r.NotInIface, NotOut: r.NotOutIface,
		NotDPort: r.NotDPort, NotSPort: r.NotSPort, NotMark: r.NotMark, NotCTState: r.NotCTState,
		Comment: r.Comment, Statistic: r.Statistic, MarkMatch: r.MarkMatch, CTState: r.CTState, DstType: r.DstType,
		SetMark: r.SetMark, ToDestination: r.ToDestination, ToSource: r.ToSource,
		Probability: r.Probability, NthEvery: r.NthEvery, NthPacket: r.NthPacket,
	}
	if r.Recent != nil {
		k.Recent = *r.Recent
	}
	return k
}

// iptRound is how iptables -L without -x prints a counter.
func iptRound(n uint64) uint64 {
	if n <= 99999 {
		return n
	}
	mult := uint64(1)
	for _, unit := range []uint64{1000, 1000, 1000, 1000} {
		n = (n + 500) / 1000
		mult *= unit
		if n <= 9999 {
			break
		}
	}
	return n * mult
}

type iptForm struct {
	file     string
	ruleset  int    // which ruleset of the file
	table    string // which table
	counters string // "exact", "rounded", ""
	lineNums bool
	names    bool // listed without -n: addresses may be host names
}

// The real outputs of one ruleset (parse/testdata/iptables/make.sh) in
// every form give the same chains, rules, targets, probabilities and
// counters.
func TestIPTablesFormsAgree(t *testing.T) {
	dir := "parse/testdata/iptables/"
	refSets := iptFile(t, dir+"iptables-save-c.txt")
	ref := iptOne(t, refSets)
	check := func(f iptForm) {
		t.Helper()
		sets := iptFile(t, dir+f.file)
		if f.ruleset >= len(sets) {
			t.Fatalf("%s: %d rulesets", f.file, len(sets))
		}
		got := sets[f.ruleset].Table(f.table)
		want := ref.Table(f.table)
		if got == nil {
			t.Fatalf("%s: no table %s", f.file, f.table)
		}
		gn, wn := iptChainNames(got), iptChainNames(want)
		sort.Strings(gn)
		sort.Strings(wn)
		if !reflect.DeepEqual(gn, wn) {
			t.Errorf("%s: chains\n got  %q\n want %q", f.file, gn, wn)
			return
		}
		for _, wc := range want.Chains {
			gc := got.Chain(wc.Name)
			if gc.Policy != wc.Policy {
				t.Errorf("%s: %s policy %q, want %q", f.file, wc.Name, gc.Policy, wc.Policy)
			}
			switch f.counters {
			case "exact":
				if gc.Packets != wc.Packets || gc.Bytes != wc.Bytes {
					t.Errorf("%s: %s policy counters %d/%d, want %d/%d", f.file, wc.Name, gc.Packets, gc.Bytes, wc.Packets, wc.Bytes)
				}
			case "rounded":
				if gc.Packets != iptRound(wc.Packets) || gc.Bytes != iptRound(wc.Bytes) {
					t.Errorf("%s: %s policy counters %d/%d, want %d/%d rounded", f.file, wc.Name, gc.Packets, gc.Bytes, wc.Packets, wc.Bytes)
				}
			}
			if len(gc.Rules) != len(wc.Rules) {
				t.Errorf("%s: %s has %d rules, want %d", f.file, wc.Name, len(gc.Rules), len(wc.Rules))
				continue
			}
			for i, wr := range wc.Rules {
				gr := gc.Rules[i]
				gk, wk := iptKeyOf(gr), iptKeyOf(wr)
				if f.names {
					// name-resolved listings: "loopback/8", "anywhere"
					if _, ok := (&model.Rule{Src: gr.Src}).SrcPrefix(); !ok && gr.Src != "" {
						gk.Src, wk.Src = "", ""
					}
					if _, ok := (&model.Rule{Src: gr.Dst}).SrcPrefix(); !ok && gr.Dst != "" {
						gk.Dst, wk.Dst = "", ""
					}
				}
				if gk != wk {
					t.Errorf("%s: %s rule %d (%s)\n got  %+v\n want %+v", f.file, wc.Name, i+1, gr.Pos, gk, wk)
				}
				switch f.counters {
				case "exact":
					if !gr.Counted || gr.Packets != wr.Packets || gr.Bytes != wr.Bytes {
						t.Errorf("%s: %s rule %d counters %d/%d, want %d/%d", f.file, wc.Name, i+1, gr.Packets, gr.Bytes, wr.Packets, wr.Bytes)
					}
				case "rounded":
					if !gr.Counted || gr.Packets != iptRound(wr.Packets) || gr.Bytes != iptRound(wr.Bytes) {
						t.Errorf("%s: %s rule %d counters %d/%d, want %d/%d rounded", f.file, wc.Name, i+1, gr.Packets, gr.Bytes, wr.Packets, wr.Bytes)
					}
				default:
					if gr.Counted {
						t.Errorf("%s: %s rule %d has counters", f.file, wc.Name, i+1)
					}
				}
				if f.lineNums && gr.LineNumber != i+1 {
					t.Errorf("%s: %s rule %d has line number %d", f.file, wc.Name, i+1, gr.LineNumber)
				}
				if !f.lineNums && gr.LineNumber != 0 {
					t.Errorf("%s: %s rule %d has line number %d", f.file, wc.Name, i+1, gr.LineNumber)
				}
			}
		}
	}
	for _, f := range []iptForm{
		{file: "iptables-save.txt", table: "nat"},
		{file: "iptables-save.txt", table: "filter"},
		{file: "iptables-save-c.txt", table: "nat", counters: "exact"},
		{file: "iptables-legacy-save.txt", table: "nat"},
		{file: "iptables-save-with-warning.txt", table: "nat"},
		{file: "iptables-save-with-warning.txt", table: "filter"},
		{file: "kube-proxy.rules.txt", table: "nat", counters: "exact"},
		{file: "kube-proxy.rules.txt", table: "filter", counters: "exact"},
		{file: "iptables-nat-nvL.txt", table: "nat", counters: "rounded"},
		{file: "iptables-nat-nvxL-line-numbers.txt", table: "nat", counters: "exact", lineNums: true},
		{file: "iptables-nat-L-n-line-numbers.txt", table: "nat", lineNums: true},
		{file: "iptables-nat-S.txt", table: "nat"},
		{file: "iptables-S-v.txt", table: "filter", counters: "exact"},
		{file: "iptables-vL.txt", table: "filter", counters: "rounded", names: true},
		{file: "session.txt", table: "nat", counters: "rounded"},
		{file: "session.txt", table: "filter", counters: "rounded"},
	} {
		check(f)
	}
	if n := ref.Rules(); n != 64 {
		t.Errorf("reference: %d rules, want 64", n)
	}
}

// Exact values of the save form: counters, policies, what each option
// becomes.
func TestIPTablesSaveValues(t *testing.T) {
	rs := iptOne(t, iptFile(t, "parse/testdata/iptables/iptables-save-c.txt"))
	if rs.Format != "iptables-save" || rs.Family != "ipv4" || rs.Pos.String() != "iptables-save-c.txt:1" {
		t.Errorf("ruleset %s %s %s", rs.Format, rs.Family, rs.Pos)
	}
	if got := []string{rs.Tables[0].Name, rs.Tables[1].Name}; got[0] != "filter" || got[1] != "nat" || rs.Tables[1].Pos.Line != 40 {
		t.Errorf("tables %q, nat at %s", got, rs.Tables[1].Pos)
	}
	out := iptChain(t, rs, "nat", "OUTPUT")
	if out.Policy != "ACCEPT" || out.Packets != 62000000 || out.Bytes != 4053000000 || out.Pos.Line != 43 {
		t.Errorf("nat OUTPUT %+v", out)
	}
	if c := iptChain(t, rs, "nat", "KUBE-SERVICES"); c.Policy != "" || c.Pos.Line != 56 || len(c.Rules) != 5 {
		t.Errorf("KUBE-SERVICES %+v", c)
	}
	r := iptChain(t, rs, "nat", "OUTPUT").Rules[0]
	if r.Packets != 1234567 || r.Bytes != 98765432 || !r.Counted || r.Pos.Line != 62 ||
		r.Raw != `[1234567:98765432] -A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES` {
		t.Errorf("nat OUTPUT rule %+v", r)
	}
	mark := iptChain(t, rs, "nat", "KUBE-MARK-MASQ").Rules[0]
	if mark.Target != "MARK" || mark.SetMark != "0x4000/0x4000" {
		t.Errorf("KUBE-MARK-MASQ %+v", mark)
	}
	post := iptChain(t, rs, "nat", "KUBE-POSTROUTING").Rules
	if post[0].Target != "RETURN" || post[0].MarkMatch != "0x4000/0x4000" || !post[0].NotMark {
		t.Errorf("KUBE-POSTROUTING return %+v", post[0])
	}
	if post[1].SetMark != "0x4000/0x0" {
		t.Errorf("KUBE-POSTROUTING xor %+v", post[1])
	}
	if post[2].Target != "MASQUERADE" || post[2].Comment != "kubernetes service traffic requiring SNAT" {
		t.Errorf("KUBE-POSTROUTING masquerade %+v", post[2])
	}
	aff := iptChain(t, rs, "nat", "KUBE-SVC-NPX46M4PTMTKRN6Y").Rules[1]
	if aff.Recent == nil || *aff.Recent != (model.RecentMatch{Name: "KUBE-SEP-YIL6JZP7A3QYXJU2", Seconds: 10800}) || aff.Target != "KUBE-SEP-YIL6JZP7A3QYXJU2" {
		t.Errorf("affinity check %+v %+v", aff, aff.Recent)
	}
	set := iptChain(t, rs, "nat", "KUBE-SEP-YIL6JZP7A3QYXJU2").Rules[1]
	if set.Recent == nil || !set.Recent.Set || set.Recent.Name != "KUBE-SEP-YIL6JZP7A3QYXJU2" || set.ToDestination != "172.18.0.2:6443" || set.Proto != "tcp" {
		t.Errorf("affinity set %+v", set)
	}
	np := iptChain(t, rs, "nat", "KUBE-SERVICES").Rules[4]
	if np.Target != "KUBE-NODEPORTS" || np.DstType != "LOCAL" || np.Comment != "kubernetes service nodeports; NOTE: this must be the last rule in this chain" {
		t.Errorf("NodePort jump %+v", np)
	}
	extra := iptChain(t, rs, "filter", "NM-EXTRA").Rules
	if e := extra[0]; e.InIface != "eth0" || e.OutIface != "cni0" || e.DPort != "80,443,8080:8090" || e.Packets != 7 {
		t.Errorf("multiport rule %+v", e)
	}
	if e := extra[1]; e.InIface != "lo" || !e.NotInIface || e.SPort != "1024:65535" || e.DPort != "53" || e.Proto != "udp" {
		t.Errorf("negated interface rule %+v", e)
	}
	if e := extra[2]; e.DPort != "22" || !e.NotDPort || e.Statistic != "nth" || e.NthEvery != 3 || e.NthPacket != 1 {
		t.Errorf("nth rule %+v", e)
	}
	if e := extra[3]; !e.Goto || e.Target != "NM-GOTO" || e.Src != "10.244.1.0/24" || e.Dst != "10.244.0.0/16" || !e.NotDst {
		t.Errorf("goto rule %+v", e)
	}
	if e := extra[4]; e.Target != "" || e.Comment != "count-only" || e.Packets != 3 || e.Bytes != 180 {
		t.Errorf("rule without a target %+v", e)
	}
	if e := iptChain(t, rs, "filter", "NM-GOTO").Rules[0]; e.Comment != `a "quoted" word` || e.Proto != "tcp" || !e.NotProto {
		t.Errorf("quoted comment %+v", e)
	}
	fw := iptChain(t, rs, "filter", "KUBE-FIREWALL").Rules[0]
	if fw.Src != "127.0.0.0/8" || !fw.NotSrc || fw.Dst != "127.0.0.0/8" || fw.CTState != "RELATED,ESTABLISHED,DNAT" || !fw.NotCTState {
		t.Errorf("KUBE-FIREWALL %+v", fw)
	}
}

// The listing forms' own values: line numbers, rounded counters,
// references, "[goto]", name-resolved addresses and ports.
func TestIPTablesListValues(t *testing.T) {
	rs := iptOne(t, iptFile(t, "parse/testdata/iptables/iptables-nat-nvL.txt"))
	if rs.Format != "iptables-list" || rs.Tables[0].Name != "nat" {
		t.Fatalf("%s %q", rs.Format, rs.Tables[0].Name)
	}
	post := iptChain(t, rs, "nat", "POSTROUTING")
	if post.Packets != 123000 || post.Bytes != 7890000 || post.Rules[0].Packets != 123000 || post.Pos.Line != 12 {
		t.Errorf("POSTROUTING %+v", post)
	}
	if c := iptChain(t, rs, "nat", "KUBE-MARK-MASQ"); c.References != 12 || c.Rules[0].SetMark != "0x4000/0x4000" {
		t.Errorf("KUBE-MARK-MASQ %+v", c)
	}
	dnat := iptChain(t, rs, "nat", "KUBE-SEP-2TGVOKE5ZLAXXI5M").Rules[1]
	if dnat.Proto != "udp" || dnat.ToDestination != "10.244.0.3:53" || dnat.Packets != 3300 || dnat.Bytes != 201000 || dnat.Comment != "kube-system/kube-dns:dns" {
		t.Errorf("DNAT row %+v", dnat)
	}

	vl := iptOne(t, iptFile(t, "parse/testdata/iptables/iptables-vL.txt"))
	fw := iptChain(t, vl, "filter", "KUBE-FIREWALL").Rules[0]
	if fw.Src != "loopback/8" || !fw.NotSrc || fw.Dst != "loopback/8" || fw.InIface != "" || fw.OutIface != "" {
		t.Errorf("name-resolved KUBE-FIREWALL %+v", fw)
	}
	extra := iptChain(t, vl, "filter", "NM-EXTRA").Rules
	if extra[0].DPort != "http,https,http-alt:8090" || extra[1].DPort != "domain" || extra[2].DPort != "ssh" || !extra[2].NotDPort || !extra[3].Goto {
		t.Errorf("name-resolved ports %q %q %q", extra[0].DPort, extra[1].DPort, extra[2].DPort)
	}

	ln := iptOne(t, iptFile(t, "parse/testdata/iptables/iptables-nat-L-n-line-numbers.txt"))
	svc := iptChain(t, ln, "nat", "KUBE-SVC-TCOU7JCQXEZGVUNU").Rules
	if len(svc) != 4 || svc[1].LineNumber != 2 || svc[1].Probability != 0.33333333349 || svc[1].Counted || svc[0].Src != "10.244.0.0/16" || !svc[0].NotSrc || svc[0].Dst != "10.96.0.10" {
		t.Errorf("--line-numbers rows %+v %+v", svc[0], svc[1])
	}
}

func TestIPTablesIPv6(t *testing.T) {
	for _, f := range []string{"ip6tables-save.txt", "ip6tables-nat-nvL.txt", "kube-proxy-v6.rules.txt"} {
		rs := iptOne(t, iptFile(t, "parse/testdata/iptables/"+f))
		if rs.Family != "ipv6" {
			t.Errorf("%s: family %s", f, rs.Family)
		}
		svc := iptChain(t, rs, "nat", "KUBE-SVC-TCOU7JCQXEZGVUNU").Rules
		if len(svc) != 3 || svc[0].SetMark != "0x4000/0x4000" || svc[0].Src != "fd00:10:244::/56" || !svc[0].NotSrc || svc[1].Probability != 0.5 {
			t.Errorf("%s: Service chain %+v", f, svc)
		}
		if p, ok := svc[0].DstPrefix(); !ok || p.String() != "fd00:10:96::a/128" {
			t.Errorf("%s: destination %q", f, svc[0].Dst)
		}
		if d := iptChain(t, rs, "nat", "KUBE-SEP-V6AAAAAAAAAAAAAA").Rules[0]; d.ToDestination != "[fd00:10:244::2]:53" || d.Proto != "udp" {
			t.Errorf("%s: DNAT %+v", f, d)
		}
	}
}

// A terminal session: listings of several tables and chains with prompts
// between them; each dump that lists a chain again starts a ruleset.
func TestIPTablesSession(t *testing.T) {
	sets := iptFile(t, "parse/testdata/iptables/session.txt")
	if len(sets) != 4 {
		t.Fatalf("%d rulesets, want 4", len(sets))
	}
	type want struct {
		format, family, pos string
		tables              string
		rules               int
	}
	for i, w := range []want{
		{"iptables-list", "ipv4", "session.txt:1", "nat filter", 64},
		{"iptables-S", "ipv4", "session.txt:158", "nat", 4},
		{"iptables-list", "ipv4", "session.txt:164", "nat", 2},
		{"iptables-list", "ipv6", "session.txt:169", "nat", 3},
	} {
		rs := sets[i]
		var tables []string
		for _, tb := range rs.Tables {
			tables = append(tables, tb.Name)
		}
		if rs.Format != w.format || rs.Family != w.family || rs.Pos.String() != w.pos || strings.Join(tables, " ") != w.tables || rs.Rules() != w.rules {
			t.Errorf("ruleset %d: %s %s %s %q %d rules, want %+v", i, rs.Format, rs.Family, rs.Pos, tables, rs.Rules(), w)
		}
	}
	if c := iptChain(t, sets[1], "nat", "KUBE-SVC-TCOU7JCQXEZGVUNU"); c.Pos.Line != 159 || c.Rules[3].Target != "KUBE-SEP-N4G2XR5TDX7PQE7P" {
		t.Errorf("-S chain %+v", c)
	}
	dnat := iptChain(t, sets[2], "nat", "KUBE-SEP-YIL6JZP7A3QYXJU2").Rules[1]
	if dnat.Recent == nil || !dnat.Recent.Set || dnat.ToDestination != "172.18.0.2:6443" || dnat.Src != "" {
		t.Errorf("name-resolved affinity DNAT %+v", dnat)
	}
}

// iptables-nft's warning on standard error, captured with 2>&1, lands in
// the middle of a rule: the rule is joined back.
func TestIPTablesLegacyWarning(t *testing.T) {
	rs := iptOne(t, iptFile(t, "parse/testdata/iptables/iptables-save-with-warning.txt"))
	r := iptChain(t, rs, "nat", "KUBE-SVC-TCOU7JCQXEZGVUNU").Rules[2]
	if r.Comment != "kube-system/kube-dns:dns -> 10.244.0.3:53" || r.Probability != 0.5 || r.Target != "KUBE-SEP-2TGVOKE5ZLAXXI5M" || r.Pos.Line != 98 ||
		strings.Contains(r.Raw, "Warning") {
		t.Errorf("rule cut by the warning %+v", r)
	}
	if legacy := iptOne(t, iptFile(t, "parse/testdata/iptables/iptables-legacy-save.txt")); legacy.Rules() != 64 || legacy.Tables[0].Name != "nat" {
		t.Errorf("legacy save: %d rules, first table %s", legacy.Rules(), legacy.Tables[0].Name)
	}
}

// kube-proxy's own iptables-restore input (as its proxier writes it, and
// logs it at -v=5): options in its order, "-m tcp -p tcp", addresses without
// /32, bare comments, --or-mark / --xor-mark, "-X" of stale chains.
const kubeProxyRestore = `*filter
:KUBE-SERVICES - [0:0]
:KUBE-FORWARD - [0:0]
-A KUBE-SERVICES -m comment --comment "ns6/svc6:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.46 --dport 80 -j REJECT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
COMMIT
*nat
:KUBE-SERVICES - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
:KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]
:KUBE-SEP-OLDOLDOLDOLDOLDO - [0:0]
-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-SXIVWICOYRO3J4NJ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80
-X KUBE-SEP-OLDOLDOLDOLDOLDO
COMMIT
`

func TestIPTablesKubeProxyRestoreInput(t *testing.T) {
	sets, err := IPTables(strings.NewReader(kubeProxyRestore), "restore.txt")
	if err != nil {
		t.Fatal(err)
	}
	rs := iptOne(t, sets)
	if tb := rs.Table("nat"); tb.Chain("KUBE-SEP-OLDOLDOLDOLDOLDO") != nil || len(tb.Chains) != 5 {
		t.Errorf("-X did not delete the stale chain: %q", iptChainNames(tb))
	}
	svc := iptChain(t, rs, "nat", "KUBE-SERVICES").Rules[0]
	if svc.Proto != "tcp" || svc.Dst != "172.30.0.41" || svc.DPort != "80" || svc.Target != "KUBE-SVC-XPGD46QRK7WJZT7O" || svc.Comment != "ns1/svc1:p80 cluster IP" {
		t.Errorf("Service rule %+v", svc)
	}
	if m := iptChain(t, rs, "nat", "KUBE-SVC-XPGD46QRK7WJZT7O").Rules[0]; m.Src != "10.0.0.0/8" || !m.NotSrc || m.DPort != "80" || m.Target != "KUBE-MARK-MASQ" {
		t.Errorf("masquerade rule %+v", m)
	}
	if p := iptChain(t, rs, "nat", "KUBE-SVC-XPGD46QRK7WJZT7O").Rules[1]; p.Probability != 0.5 || p.Statistic != "random" {
		t.Errorf("probability rule %+v", p)
	}
	sep := iptChain(t, rs, "nat", "KUBE-SEP-SXIVWICOYRO3J4NJ").Rules
	if sep[0].Comment != "ns1/svc1:p80" || sep[0].Src != "10.180.0.1" || sep[1].ToDestination != "10.180.0.1:80" || sep[1].Proto != "tcp" {
		t.Errorf("endpoint chain %+v %+v", sep[0], sep[1])
	}
	if m := iptChain(t, rs, "nat", "KUBE-MARK-MASQ").Rules[0]; m.SetMark != "0x4000/0x4000" {
		t.Errorf("--or-mark read as %q", m.SetMark)
	}
	if m := iptChain(t, rs, "nat", "KUBE-POSTROUTING").Rules[1]; m.SetMark != "0x4000/0x0" {
		t.Errorf("--xor-mark read as %q", m.SetMark)
	}
}

func TestIPTablesMarkForms(t *testing.T) {
	for _, c := range []struct{ op, v, want string }{
		{"xset", "0x4000/0x4000", "0x4000/0x4000"},
		{"xset", "0x1", "0x1/0xffffffff"},
		{"set", "0x1", "0x1/0xffffffff"},
		{"or", "0x4000", "0x4000/0x4000"},
		{"xor", "0x4000", "0x4000/0x0"},
		{"and", "0xffffbfff", "0x0/0x4000"},
		{"or", "16384", "0x4000/0x4000"},
	} {
		got, err := iptMark(c.op, c.v)
		if err != nil || got != c.want {
			t.Errorf("MARK %s %s = %q, %v; want %q", c.op, c.v, got, err, c.want)
		}
	}
	if _, err := iptMark("or", "0xzz"); !errors.Is(err, format.ErrValue) {
		t.Errorf("bad mark: %v", err)
	}
}

// Prompts and the bundle's command name the table, the chain and the form.
func TestParseIPTablesCmd(t *testing.T) {
	for cmd, want := range map[string]iptCmd{
		"iptables -t nat -nvL": {family: "ipv4", form: formList, table: "nat"},
		"iptables -L KUBE-SERVICES -t nat | grep kube-system/kube-dns": {family: "ipv4", form: formList, table: "nat", chain: "KUBE-SERVICES"},
		"sudo /usr/sbin/ip6tables -nvL INPUT":                          {family: "ipv6", form: formList, chain: "INPUT"},
		"iptables --wait 1 --numeric --verbose --list --table nat":     {family: "ipv4", form: formList, table: "nat"},
		"iptables -L -n -v KUBE-POSTROUTING --line-numbers -tnat":      {family: "ipv4", form: formList, table: "nat", chain: "KUBE-POSTROUTING"},
		"iptables-save -t nat":                                         {family: "ipv4", form: formSave, table: "nat"},
		"ip netns exec cni-1 ip6tables-legacy-save":                    {family: "ipv6", form: formSave, backend: model.BackendLegacy},
		"iptables-nft -t nat -S":                                       {family: "ipv4", form: formRules, table: "nat", backend: model.BackendNFT},
		"iptables -t filter -S":                                        {family: "ipv4", form: formRules, table: "filter"},
		"iptables -S KUBE-SVC-TCOU7JCQXEZGVUNU -t nat":                 {family: "ipv4", form: formRules, table: "nat", chain: "KUBE-SVC-TCOU7JCQXEZGVUNU"},
		"iptables --table=mangle --list-rules":                         {family: "ipv4", form: formRules, table: "mangle"},
		"iptables -vnxL":                                               {family: "ipv4", form: formList},
	} {
		got, ok := parseIPTablesCmd(cmd)
		if !ok || got != want {
			t.Errorf("%q: %+v %v, want %+v", cmd, got, ok, want)
		}
	}
	for _, cmd := range []string{"List rules in KUBE-SVC-ERIFXISQEP7F7OF4 chain's nat table", "iptables-restore < rules", "ipvsadm -Ln", ""} {
		if c, ok := parseIPTablesCmd(cmd); ok {
			t.Errorf("%q read as an iptables command: %+v", cmd, c)
		}
	}
}

// The bundle layout's command tells the table of a listing without a
// prompt (Rancher's and EKS's collectors).
func TestIPTablesCommandFromLayout(t *testing.T) {
	in := "Chain INPUT (policy ACCEPT 0 packets, 0 bytes)\n pkts bytes target     prot opt in     out     source               destination\n    1    60 KUBE-SERVICES  0    --  *      *       0.0.0.0/0            0.0.0.0/0            /* kubernetes service portals */\n"
	var errs model.ErrorList
	sets := readIPTables(strings.NewReader(in), &format.File{Name: "iptablesnat", Node: "node-b", Command: "iptables --wait 1 --numeric --verbose --list --table nat"}, &errs)
	if len(errs) != 0 || len(sets) != 1 {
		t.Fatalf("%d rulesets, errors %v", len(sets), errs)
	}
	if rs := sets[0]; rs.Node != "node-b" || rs.Tables[0].Name != "nat" || rs.Tables[0].Chains[0].Rules[0].Packets != 1 {
		t.Errorf("%+v %+v", rs, rs.Tables[0])
	}
	// Without a command, an INPUT listing is the filter table and a
	// PREROUTING one nat.
	for first, want := range map[string]string{"INPUT": "filter", "PREROUTING": "nat", "KUBE-SEP-ABC": "nat"} {
		rs := iptOne(t, must(IPTables(strings.NewReader("Chain "+first+" (policy ACCEPT)\ntarget     prot opt source               destination\n"), "x")))
		if rs.Tables[0].Name != want {
			t.Errorf("listing of %s read as table %s, want %s", first, rs.Tables[0].Name, want)
		}
	}
	// iptables -S output without a prompt
	rs := iptOne(t, must(IPTables(strings.NewReader("-P INPUT ACCEPT\n-N KUBE-FIREWALL\n-A INPUT -j KUBE-FIREWALL\n"), "x")))
	if rs.Format != "iptables-S" || rs.Tables[0].Name != "filter" || rs.Rules() != 1 || iptChain(t, rs, "filter", "KUBE-FIREWALL").Pos.Line != 2 {
		t.Errorf("-S ruleset %+v", rs.Tables[0])
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Old ip6tables leave the opt column blank; rows must still be read.
func TestIPTablesOldIP6TablesRows(t *testing.T) {
	in := `Chain INPUT (policy ACCEPT 0 packets, 0 bytes)
 pkts bytes target     prot opt in     out     source               destination
   10   800 ACCEPT     all      lo     *       ::/0                 ::/0
    0     0            tcp      *      *       ::/0                 fd00::1              tcp dpt:22
`
	rs := iptOne(t, must(IPTables(strings.NewReader(in), "x")))
	rules := iptChain(t, rs, "filter", "INPUT").Rules
	if rs.Family != "ipv6" || len(rules) != 2 || rules[0].Target != "ACCEPT" || rules[0].InIface != "lo" || rules[0].Packets != 10 ||
		rules[1].Target != "" || rules[1].Proto != "tcp" || rules[1].Dst != "fd00::1" || rules[1].DPort != "22" {
		t.Errorf("%s %+v", rs.Family, rules)
	}
}

func TestIPTablesErrors(t *testing.T) {
	in := `*nat
:KUBE-SERVICES - [0:0]
:BROKEN - [x:y]
-A KUBE-SERVICES -m comment --comment "unterminated -j KUBE-SVC-X
-A KUBE-SERVICES -m statistic --mode random --probability 1.5 -j KUBE-SEP-X
-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp --dport 443 -j KUBE-SVC-OK
-A
COMMIT
garbage that is no rule
Chain KUBE-SVC-OK (1 references)
target     prot opt source               destination
KUBE-SEP-A  all  --  0.0.0.0/0            0.0.0.0/0            statistic mode random probability abc
KUBE-SEP-B  all  --  0.0.0.0/0            0.0.0.0/0
`
	sets, err := IPTables(strings.NewReader(in), "bad.txt")
	var list model.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v, want a list", err)
	}
	want := []string{"bad.txt:3: ", "bad.txt:4: ", "bad.txt:5: ", "bad.txt:7: ", "bad.txt:9: ", "bad.txt:12: "}
	if len(list) != len(want) {
		t.Fatalf("%d errors, want %d: %v", len(list), len(want), list)
	}
	for i, w := range want {
		if !strings.HasPrefix(list[i].Error(), w) {
			t.Errorf("error %d: %v, want it at %s", i, list[i], w)
		}
	}
	if !errors.Is(list[2], format.ErrValue) || !errors.Is(list[1], format.ErrSyntax) {
		t.Errorf("sentinels: %v / %v", list[2], list[1])
	}
	if len(sets) != 2 || sets[0].Rules() != 1 || sets[1].Rules() != 1 {
		t.Fatalf("rulesets %d, want the readable rules of the save and of the listing", len(sets))
	}
	if r := iptChain(t, sets[0], "nat", "KUBE-SERVICES").Rules[0]; r.Target != "KUBE-SVC-OK" || r.Pos.Line != 6 {
		t.Errorf("readable rule %+v", r)
	}
	if r := iptChain(t, sets[1], "nat", "KUBE-SVC-OK").Rules[0]; r.Target != "KUBE-SEP-B" || r.Pos.Line != 13 {
		t.Errorf("readable row %+v", r)
	}
}

// IPTablesTestInputs are the real outputs with the format each must sniff as.
var IPTablesTestInputs = map[string]string{
	"parse/testdata/iptables/iptables-save.txt":                                 "iptables-save",
	"parse/testdata/iptables/iptables-save-c.txt":                               "iptables-save",
	"parse/testdata/iptables/iptables-legacy-save.txt":                          "iptables-save",
	"parse/testdata/iptables/iptables-save-with-warning.txt":                    "iptables-save",
	"parse/testdata/iptables/ip6tables-save.txt":                                "iptables-save",
	"parse/testdata/iptables/kube-proxy.rules.txt":                              "iptables-save",
	"parse/testdata/iptables/kube-proxy-v6.rules.txt":                           "iptables-save",
	"parse/testdata/iptables/iptables-nat-nvL.txt":                              "iptables-list",
	"parse/testdata/iptables/iptables-nat-nvxL-line-numbers.txt":                "iptables-list",
	"parse/testdata/iptables/iptables-nat-L-n-line-numbers.txt":                 "iptables-list",
	"parse/testdata/iptables/iptables-vL.txt":                                   "iptables-list",
	"parse/testdata/iptables/ip6tables-nat-nvL.txt":                             "iptables-list",
	"parse/testdata/iptables/session.txt":                                       "iptables-list",
	"parse/testdata/iptables/iptables-nat-S.txt":                                "iptables-S",
	"parse/testdata/iptables/iptables-S-v.txt":                                  "iptables-S",
	"fixtures/seeds/000-apiserver-affinity/iptables-nat.txt":                    "iptables-list",
	"fixtures/seeds/004-stale-dnat/iptables-nat-kube-dns.txt":                   "iptables-list",
	"fixtures/seeds/004-stale-dnat/iptables-filter-forward.txt":                 "iptables-list",
	"parse/testdata/bundles/node-b-2026-11-22_10_11_12/networking/iptablessave": "iptables-save",
	// rules cut out of iptables-save with grep
	"fixtures/real/iptables/kube-router-issue425_nat-KUBE-SERVICES-fragment_masq-rules.rules":         "iptables-S",
	"fixtures/real/iptables/weave-issue3392_nat-KUBE-SERVICES-fragment_external-ip-physdev.rules":     "iptables-S",
	"fixtures/real/iptables/submariner-subctl-pr1205_iptables-save-c_counter-prefixed-fragment.rules": "iptables-save",
	"fixtures/real/local/iptables/local_legacy-and-nft-save-side-by-side_nat.txt":                     "iptables-save",
	"fixtures/real/iptables/kubernetes-pr110328_iptables-save-t-filter-c-grep_indented-session.txt":   "iptables-save",
}

// Every input sniffs as its own format, and the other two iptables
// formats score it 0 (registry_test.go: of all formats, its own wins).
func TestSniffIPTables(t *testing.T) {
	sniffs := map[string]func(string, []byte) int{
		"iptables-save": sniffIPTablesSave, "iptables-list": sniffIPTablesList, "iptables-S": sniffIPTablesRules,
	}
	for rel, format := range IPTablesTestInputs {
		head, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
		if err != nil {
			t.Fatal(err)
		}
		for name, sniff := range sniffs {
			got := sniff(rel, head)
			if name == format && got < 90 {
				t.Errorf("%s: %s scores %d, want at least 90", rel, name, got)
			}
			if name != format && got != 0 {
				t.Errorf("%s: %s scores %d, want 0", rel, name, got)
			}
		}
	}
	// Other formats' inputs score 0.
	for _, in := range []string{
		parsetest.IPVSListing,
		"-A -t 10.96.0.1:443 -s rr\n-a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1\n",
		"net.ipv4.ip_local_port_range = 1024 65000\n",
		"tcp   LISTEN 0      4096   127.0.0.1:10248   0.0.0.0:*\n",
		"--service-node-port-range=20000-40000\n--proxy-mode=iptables\n",
		"table ip filter {\n\tchain INPUT {\n\t\ttype filter hook input priority 0; policy accept;\n\t}\n}\n",
		"NAME         TYPE        CLUSTER-IP     EXTERNAL-IP   PORT(S)         AGE\nkube-dns     ClusterIP   10.178.64.10   <none>        53/UDP,53/TCP   2y\n",
	} {
		for name, sniff := range sniffs {
			if got := sniff("x", []byte(in)); got != 0 {
				t.Errorf("%s scores %d on %.30q", name, got, in)
			}
		}
	}
}

func TestIPTablesFormatParse(t *testing.T) {
	f, err := os.Open(filepath.Join(testutil.Root(), "parse/testdata/iptables/iptables-save.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	snap := &model.Snapshot{}
	src := &format.File{Name: "iptables-save.txt", Node: "node1"}
	n, err := IPTablesSaveFormat.Parse(t.Context(), f, src, snap)
	if err != nil || n != 64 || len(snap.Netfilter) != 1 || snap.Netfilter[0].Node != "node1" {
		t.Fatalf("%d records, %d rulesets, %v", n, len(snap.Netfilter), err)
	}
	if src.Details["rules"] != 64 || src.Details["chains"] != 31 {
		t.Errorf("details %v", src.Details)
	}
}
