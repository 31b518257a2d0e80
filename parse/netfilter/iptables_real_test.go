package netfilter

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// iptRuleLines formats the rules of a table as "line chain target dst
// dport packets/bytes counted".
func iptRuleLines(tb *model.Table) []string {
	var s []string
	for _, c := range tb.Chains {
		for _, r := range c.Rules {
			s = append(s, fmt.Sprintf("%d %s %s %s %s %d/%d %v", r.Pos.Line, c.Name, r.Target, r.Dst, r.DPort, r.Packets, r.Bytes, r.Counted))
		}
	}
	return s
}

// Rules cut out of iptables-save with grep, without *table header, chain
// lines or COMMIT, as pasted into issues: the table is nat, guessed from
// the rules' targets (KUBE-SERVICES is a chain of filter too).
func TestIPTablesFragmentsReal(t *testing.T) {
	tests := []struct {
		rel         string
		form        string
		rules, masq int
		first, last string
	}{
		{"fixtures/real/iptables/kube-router-issue425_nat-KUBE-SERVICES-fragment_masq-rules.rules", formRules, 8, 4,
			"1 KUBE-SERVICES KUBE-MARK-MASQ 10.96.0.1/32 443 0/0 false",
			"8 KUBE-SERVICES KUBE-SVC-LYSH5S4ATKSZBGWX 10.225.22.172/32 443 0/0 false"},
		{"fixtures/real/iptables/kubernetes-issue26292_nat-KUBE-SERVICES-fragment_no-table-header.rules", formRules, 8, 0,
			"1 KUBE-SERVICES KUBE-SVC-2E2RIZ6HWR2EYEAW 192.168.121.3/32 5000 0/0 false", ""},
		{"fixtures/real/iptables/weave-issue3392_nat-KUBE-SERVICES-fragment_external-ip-physdev.rules", formRules, 7, 1, "", ""},
		{"fixtures/real/iptables/submariner-subctl-pr1205_iptables-save-c_counter-prefixed-fragment.rules", formSave, 9, 4,
			"1 KUBE-SEP-EHRALZ2IVFLIEMXK DNAT   102/8638 true", ""},
		{"fixtures/real/local/iptables/local_iptables-save-grep-A-KUBE_fragment.txt", formRules, 3, 0,
			"2 KUBE-SEP-NMREAL0000000001 DNAT   0/0 false", ""},
	}
	for _, tt := range tests {
		rs := iptOne(t, iptFile(t, tt.rel))
		if rs.Format != tt.form || len(rs.Tables) != 1 || rs.Tables[0].Name != "nat" {
			t.Errorf("%s: format %s, %d tables", tt.rel, rs.Format, len(rs.Tables))
			continue
		}
		got := iptRuleLines(rs.Tables[0])
		masq := 0
		for _, g := range got {
			if strings.Contains(g, " KUBE-MARK-MASQ ") {
				masq++
			}
		}
		if len(got) != tt.rules || masq != tt.masq || (tt.first != "" && got[0] != tt.first) || (tt.last != "" && got[len(got)-1] != tt.last) {
			t.Errorf("%s: %d rules, %d to KUBE-MARK-MASQ:\n%s", tt.rel, len(got), masq, strings.Join(got, "\n"))
		}
	}
}

// The counted fragment keeps every rule's counters and its DNAT
// destinations; the unnamed port's comment is kept as written.
func TestIPTablesFragmentsValues(t *testing.T) {
	rs := iptOne(t, iptFile(t, "fixtures/real/iptables/submariner-subctl-pr1205_iptables-save-c_counter-prefixed-fragment.rules"))
	var dnat []string
	for _, c := range rs.Tables[0].Chains {
		for _, r := range c.Rules {
			if r.Target == "DNAT" && r.Packets > 0 {
				dnat = append(dnat, fmt.Sprintf("%s %s %d/%d", r.Proto, r.ToDestination, r.Packets, r.Bytes))
			}
		}
	}
	if strings.Join(dnat, ";") != "udp 10.34.0.2:53 102/8638;udp 10.34.0.4:53 90/7626" {
		t.Errorf("counted DNAT rules %q", dnat)
	}
	rs = iptOne(t, iptFile(t, "fixtures/real/iptables/kubernetes-issue26292_nat-KUBE-SERVICES-fragment_no-table-header.rules"))
	unnamed := 0
	for _, r := range iptChain(t, rs, "nat", "KUBE-SERVICES").Rules {
		if strings.HasSuffix(r.Comment, ": cluster IP") {
			unnamed++
		}
	}
	if unnamed != 2 {
		t.Errorf("%d rules of unnamed ports", unnamed)
	}
}

// iptables-save | grep KUBE-SVC behind a SUSE root prompt: chain lines and
// rules without their table are read, not reported.
func TestIPTablesGrepChainLines(t *testing.T) {
	rel := "fixtures/real/iptables/kube-hetzner-issue1210_iptables-save-grep-KUBE-SVC_suse-prompt.txt"
	b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	sets, err := IPTables(bytes.NewReader(b), "g.txt")
	if err != nil && strings.TrimSpace(strings.SplitN(err.Error(), ":", 3)[1]) != "1" {
		t.Errorf("errors beyond the prompt line: %v", err)
	}
	rs := iptOne(t, sets)
	if len(rs.Tables) != 1 {
		t.Fatalf("%d tables", len(rs.Tables))
	}
	svc, rules := 0, 0
	for _, c := range rs.Tables[0].Chains {
		if strings.HasPrefix(c.Name, "KUBE-SVC-") && c.Pos.Line >= 2 && c.Pos.Line <= 13 {
			svc++
		}
		rules += len(c.Rules)
	}
	dns := iptRuleLines(rs.Tables[0])
	if svc != 12 || rules != 6 || dns[len(dns)-1] != "19 KUBE-SERVICES KUBE-SVC-TCOU7JCQXEZGVUNU 10.43.0.10/32 53 0/0 false" {
		t.Errorf("%d KUBE-SVC chain lines, %d rules:\n%s", svc, rules, strings.Join(dns, "\n"))
	}
}

// iptables-save -t filter -c | grep in an indented session: the chain line
// of a user chain and two counted rules, then the same grep again after a
// restore, a second dump.
func TestIPTablesGrepIndentedSession(t *testing.T) {
	in := "    :FOO - [0:0]\n    [61:10342] -A OUTPUT -j FOO\n    [2:120] -A FOO -d 1.2.3.4/32 -j REJECT --reject-with icmp-port-unreachable\n\n    :FOO - [0:0]\n"
	sets, err := IPTables(strings.NewReader(in), "s.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || sets[1].Pos.Line != 5 {
		t.Fatalf("%d rulesets", len(sets))
	}
	got := iptRuleLines(sets[0].Tables[0])
	if strings.Join(got, ";") != "3 FOO REJECT 1.2.3.4/32  2/120 true;2 OUTPUT FOO   61/10342 true" || sets[0].Tables[0].Name != "filter" {
		t.Errorf("rules %q in table %q", got, sets[0].Tables[0].Name)
	}
}

// iptables-legacy-save and iptables-nft-save of one host one after the
// other: two dumps of the nat table, each with its own rules.
func TestIPTablesLegacyAndNFTSideBySide(t *testing.T) {
	sets := iptFile(t, "fixtures/real/local/iptables/local_legacy-and-nft-save-side-by-side_nat.txt")
	if len(sets) != 2 || sets[0].Format != formSave || sets[1].Format != formSave {
		t.Fatalf("%d rulesets", len(sets))
	}
	legacy, nft := sets[0], sets[1]
	if got := iptRuleLines(legacy.Table("nat")); strings.Join(got, ";") != "9 PREROUTING KUBE-SERVICES   0/0 false;10 KUBE-SERVICES DNAT 10.96.77.10/32 8081 0/0 false" {
		t.Errorf("legacy rules %q", got)
	}
	if c := iptChain(t, legacy, "nat", "PREROUTING"); c.Packets != 7 || c.Bytes != 382 || c.Policy != "ACCEPT" {
		t.Errorf("legacy PREROUTING %+v", c)
	}
	if r := iptChain(t, legacy, "nat", "KUBE-SERVICES").Rules[0]; r.ToDestination != "10.77.2.99:8081" {
		t.Errorf("legacy DNAT to %q", r.ToDestination)
	}
	if got := iptRuleLines(nft.Table("nat")); len(got) != 4 || got[0] != "24 PREROUTING KUBE-SERVICES   0/0 false" ||
		iptChain(t, nft, "nat", "KUBE-SEP-NMREAL0000000001").Rules[0].ToDestination != "10.77.2.2:8080" {
		t.Errorf("nft rules %q", got)
	}
	if nft.Pos.Line <= legacy.Table("nat").Chains[0].Pos.Line || nft.Pos.Line > 18 {
		t.Errorf("second dump starts at %s", nft.Pos)
	}
}

// iptables-nft-save -c: [packets:bytes] on chain lines and rules of the
// filter and nat tables.
func TestIPTablesNFTSaveCounters(t *testing.T) {
	rs := iptOne(t, iptFile(t, "fixtures/real/local/iptables/local_iptables-nft-save-c_with-legacy-warning.txt"))
	var hit []string
	for _, r := range iptChain(t, rs, "filter", "INPUT").Rules {
		hit = append(hit, fmt.Sprintf("%s %s %s %d %v", r.Target, r.Proto, r.DPort, r.Packets, r.Counted))
	}
	if len(hit) != 3 || !strings.HasPrefix(hit[1], "REJECT tcp 9 1 true") || !strings.HasPrefix(hit[2], "DROP udp 9 1 true") {
		t.Errorf("filter INPUT %q", hit)
	}
	if rs.Table("nat") == nil || len(iptChain(t, rs, "nat", "KUBE-SERVICES").Rules) != 1 {
		t.Errorf("nat table %+v", rs.Table("nat"))
	}
}

// iptables -L -v with and without -x: exact counters in wider columns,
// or K/M/G suffixes; the same rules either way.
func TestIPTablesListExactCounters(t *testing.T) {
	rel := "fixtures/real/local/iptables/local_iptables-nft-t-nat-L-n-v-line-numbers.txt"
	short, exact := iptOne(t, iptFile(t, rel)), iptOne(t, iptFile(t, strings.Replace(rel, "line-numbers.txt", "x-line-numbers_exact.txt", 1)))
	a, b := iptRuleLines(short.Table("nat")), iptRuleLines(exact.Table("nat"))
	if len(a) != 4 || strings.Join(a, ";") != strings.Join(b, ";") || a[0] != "4 PREROUTING KUBE-SERVICES   7/382 true" || a[2] != "21 KUBE-SERVICES KUBE-SVC-NMREAL0000000001 10.96.77.10 80 2/120 true" {
		t.Errorf("without -x %q\nwith -x    %q", a, b)
	}
	// A published pair: the policy counters with -x (exact) and without
	// (24M packets, 12G bytes), markdown between them.
	sets := iptFile(t, "fixtures/real/iptables/index17284542603_iptables-vnL-line-number-x_exact-vs-suffixed.txt")
	if len(sets) != 2 {
		t.Fatalf("%d rulesets, want 2", len(sets))
	}
	x, s := iptChain(t, sets[0], "filter", "INPUT"), iptChain(t, sets[1], "filter", "INPUT")
	if x.Packets != 23914077 || x.Bytes != 11265043312 || len(x.Rules) != 1 || len(s.Rules) != 4 || s.Rules[3].LineNumber != 4 || s.Rules[3].DPort != "67" {
		t.Errorf("-x %d/%d %d rules; suffixed %d rules", x.Packets, x.Bytes, len(x.Rules), len(s.Rules))
	}
	if s.Packets/1000000 != x.Packets/1000000 && s.Packets != 24000000 || s.Bytes < 11e9 || s.Bytes > 13e9 {
		t.Errorf("suffixed policy counters %d/%d", s.Packets, s.Bytes)
	}
}

// iptables -L listings as published and as iptables 1.8.9 prints them.
func TestIPTablesListReal(t *testing.T) {
	ruleLines := func(c *model.Chain) []string {
		var s []string
		for _, r := range c.Rules {
			s = append(s, fmt.Sprintf("%d #%d %s %s %s>%s %s %d/%d", r.Pos.Line, r.LineNumber, r.Target, r.Proto, r.Src, r.Dst, r.DPort, r.Packets, r.Bytes))
		}
		return s
	}
	// -L -n --line-numbers without -v: no counters, 15 numbered rules.
	rs := iptOne(t, iptFile(t, "fixtures/real/iptables/learningnotes_iptables-L-n-line-numbers_no-counters.txt"))
	in := iptChain(t, rs, "filter", "INPUT")
	got := ruleLines(in)
	if len(got) != 15 || got[3] != "6 #4 ACCEPT tcp > 22 0/0" || in.Policy != "ACCEPT" || got[14] != "17 #15 ACCEPT tcp > 8081 0/0" {
		t.Errorf("INPUT %q", got)
	}
	// -t nat -L -nv --line-numbers with K suffixes and a negated
	// destination glued to its column.
	rs = iptOne(t, iptFile(t, "fixtures/real/iptables/index183202279_iptables-t-nat-L-nv-line-numbers_dnat-masq.txt"))
	pre, out := iptChain(t, rs, "nat", "PREROUTING"), iptChain(t, rs, "nat", "OUTPUT")
	if got := ruleLines(pre); strings.Join(got, ";") != "6 #1 DNAT  192.0.2.10>  0/0;7 #2 DOCKER  >  4871/361000" ||
		pre.Rules[0].ToDestination != "192.168.149.3" || pre.Packets != 2990 || pre.Bytes != 128000 {
		t.Errorf("PREROUTING %q to %q, policy %d/%d", got, pre.Rules[0].ToDestination, pre.Packets, pre.Bytes)
	}
	if len(out.Rules) != 1 || !out.Rules[0].NotDst || out.Rules[0].Dst != "127.0.0.0/8" || out.Packets != 449 || out.Bytes != 38063 {
		t.Errorf("OUTPUT %+v", out.Rules)
	}
	if c := iptChain(t, rs, "nat", "INPUT"); len(c.Rules) != 0 {
		t.Errorf("INPUT %d rules", len(c.Rules))
	}
	// iptables 1.8.9 prints protocol numbers in the prot column (0 is
	// any); 0.0.0.0/0 matches everything and is read as no match.
	rs = iptOne(t, iptFile(t, "fixtures/real/local/iptables/local_iptables-nft-L-INPUT-n-v-line-numbers_reject-drop.txt"))
	got = ruleLines(iptChain(t, rs, "filter", "INPUT"))
	if strings.Join(got, ";") != "4 #1 ACCEPT  >  15/866;5 #2 REJECT tcp > 9 1/60;6 #3 DROP udp > 9 1/29" {
		t.Errorf("INPUT %q", got)
	}
	// iptables -L without -n (weave, kubernetes #61005): "anywhere".
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/real/iptables/kubernetes-issue61005_iptables-L_no-n_weave_typo-before.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sets, _ := IPTables(bytes.NewReader(b), "l.txt")
	rs = iptOne(t, sets)
	fwd := iptChain(t, rs, "filter", "FORWARD")
	if len(iptChain(t, rs, "filter", "INPUT").Rules) != 2 || len(fwd.Rules) != 10 || fwd.Policy != "DROP" || fwd.Rules[0].Target != "WEAVE-NPC" {
		t.Errorf("FORWARD %q", ruleLines(fwd))
	}
}

// iptables -t nat -S: policies, chain creations and rules; PREROUTING
// says the table is nat.
func TestIPTablesSReal(t *testing.T) {
	rs := iptOne(t, iptFile(t, "fixtures/real/local/iptables/local_iptables-nft-t-nat-S.txt"))
	if rs.Format != formRules || len(rs.Tables) != 1 || rs.Tables[0].Name != "nat" || len(rs.Tables[0].Chains) != 7 || rs.Rules() != 4 {
		t.Fatalf("%s: %d tables", rs.Format, len(rs.Tables))
	}
	if r := iptChain(t, rs, "nat", "KUBE-SERVICES").Rules[0]; r.Dst != "10.96.77.10/32" || r.DPort != "80" || r.Target != "KUBE-SVC-NMREAL0000000001" || r.Pos.Line != 11 {
		t.Errorf("KUBE-SERVICES rule %+v", r)
	}
}

// The same, as published (kubernetes PR #110328): a session indented in a
// quote, whose "# " root prompts name each command; the second grep, after
// an iptables-restore, is a dump of its own.
func TestIPTablesGrepIndentedSessionReal(t *testing.T) {
	sets := iptFile(t, "fixtures/real/iptables/kubernetes-pr110328_iptables-save-t-filter-c-grep_indented-session.txt")
	if len(sets) != 2 {
		t.Fatalf("%d rulesets", len(sets))
	}
	first, second := sets[0], sets[1]
	if first.Format != formSave || first.Table("filter") == nil || second.Table("filter") == nil {
		t.Fatalf("formats %s %s", first.Format, second.Format)
	}
	got := iptRuleLines(first.Table("filter"))
	if strings.Join(got, ";") != "10 FOO REJECT 1.2.3.4/32  2/120 true;9 OUTPUT FOO   61/10342 true" {
		t.Errorf("rules %q", got)
	}
	if c := iptChain(t, second, "filter", "FOO"); c.Pos.Line != 14 || c.Packets != 0 || len(c.Rules) != 0 {
		t.Errorf("second FOO %+v", c)
	}
}

// kubernetes issue 112477: the grep'd iptables-save of the host pasted
// under its command, without a prompt. The command line names the form;
// the rest is read as before, with the host's nf_tables backend.
func TestIPTablesBareCommandReal(t *testing.T) {
	rs := iptOne(t, iptFile(t, "fixtures/field/iptables-version-skew--k8s-issue-112477/iptables-save.txt"))
	if rs.Format != formSave || rs.Backend != model.BackendNFT || rs.Pos.Line != 3 || rs.Rules() != 1 {
		t.Fatalf("ruleset %s %s at %s, %d rules", rs.Format, rs.Backend, rs.Pos, rs.Rules())
	}
	r := iptChain(t, rs, "", "KUBE-FIREWALL").Rules[0] // grep kept no table line
	if r.Target != "DROP" || r.Pos.Line != 4 {
		t.Errorf("KUBE-FIREWALL rule %+v", r)
	}
}

// The command above an iptables-save, as pasted with and without its
// prompt, and the prompt left at the end: nothing but the dump is read.
func TestIPTablesPastedCommandLines(t *testing.T) {
	const dump = "*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n-A PREROUTING -j KUBE-SERVICES\nCOMMIT\n"
	for _, c := range []struct{ head, tail, table string }{
		{"$ sudo iptables-save\n", "$ \n", "nat"},
		{"[root@node ~]# iptables-save -t nat\n", "[root@node ~]# \n", "nat"},
		{"# iptables-save\n", "# \n", "nat"},
		{"iptables-save\n", "", "nat"},
		{"\n  sudo /usr/sbin/iptables-nft-save -t nat | head -50\n", "root@node1:~#\n", "nat"},
	} {
		in := c.head + dump + c.tail
		if sc := IPTablesSaveFormat.Sniff("x", []byte(in)); sc < 50 {
			t.Errorf("%q: sniff %d", c.head, sc)
		}
		sets, err := IPTables(strings.NewReader(in), "x")
		if err != nil {
			t.Errorf("%q: %v", c.head, err)
			continue
		}
		if len(sets) != 1 || sets[0].Format != formSave || sets[0].Table(c.table) == nil || sets[0].Rules() != 1 {
			t.Errorf("%q: %d rulesets", c.head, len(sets))
		}
	}
	// iptables' own messages name it too, and are not commands.
	for _, line := range []string{"iptables v1.8.7 (nf_tables): Couldn't load match `mark'", "iptables: No chain/target/match by that name."} {
		if cmd, ok := text.BareCommand(line); ok {
			t.Errorf("%q read as the command %q", line, cmd)
		}
	}
}
