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
