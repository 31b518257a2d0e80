package netfilter_test

// The netfilter formats among all the formats parse.Open tries.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/netfilter"
)

// Of all formats, an iptables input's own format wins.
func TestSniffIPTablesWins(t *testing.T) {
	for rel, format := range netfilter.IPTablesTestInputs {
		head, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
		if err != nil {
			t.Fatal(err)
		}
		if best, score := parsetest.Best(parse.Formats(), rel, head); best != format {
			t.Errorf("%s: sniffed as %s (%d), want %s", rel, best, score, format)
		}
	}
}

// The shared corpus of public dumps: every iptables-save and listing reads
// without a warning and sniffs as an iptables format.
func TestIPTablesCorpus(t *testing.T) {
	var files []string
	for _, sub := range []string{"iptables-save", "iptables-list"} {
		dir := testutil.CorpusDir(t, "dumps", sub)
		m, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range m {
			if filepath.Ext(f) != ".md" {
				files = append(files, f)
			}
		}
	}
	if len(files) < 10 {
		t.Fatalf("%d corpus files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sets, err := netfilter.IPTables(bytes.NewReader(b), filepath.Base(f))
		if err != nil {
			t.Errorf("%v", err)
		}
		n := 0
		for _, rs := range sets {
			n += rs.Rules()
		}
		if n < 15 {
			t.Errorf("%s: %d rules", filepath.Base(f), n)
		}
		best, score := "", 0
		for _, ff := range parse.Formats() {
			if s := ff.Sniff(f, b); s > score {
				best, score = ff.Name, s
			}
		}
		if !strings.HasPrefix(best, "iptables-") {
			t.Errorf("%s: sniffed as %s", filepath.Base(f), best)
		}
	}
}

func TestSniffConntrack(t *testing.T) {
	others := append(append(append([]string{}, parsetest.OtherHostOutputs...), parsetest.AddrFiles...), parsetest.RouteFiles...)
	parsetest.CheckSniff(t, parse.Formats(), netfilter.ConntrackFormat, parsetest.ConntrackFiles, others)
}

func TestSniffConntrackStats(t *testing.T) {
	parsetest.CheckSniff(t, parse.Formats(), netfilter.ConntrackStatsFormat, netfilter.ConntrackStatsFiles, append(append([]string{}, parsetest.ConntrackFiles...), parsetest.RouteFiles...))
}

func TestConntrackEventsSniff(t *testing.T) {
	parsetest.CheckSniff(t, parse.Formats(), netfilter.ConntrackEventsFormat, []string{
		"fixtures/real/conntrack/jc-issue646_conntrack-E_aligned-event-tags_udp-dns.txt",
		"fixtures/real/local/conntrack/local_conntrack-E-o-timestamp_tcp-udp-icmp-dnat.txt",
		"fixtures/real/local/conntrack/local_conntrack-E_plain_same-traffic.txt",
		"fixtures/real/local/journald/local_journalctl-o-cat.txt",
	}, []string{
		"fixtures/real/local/conntrack/local_conntrack-L_tcp-udp-icmp-sctp_v1.4.7.txt",
		"fixtures/real/conntrack/weave-scope-issue1110_conntrack-L_tcp-udp-mixed.txt",
		"fixtures/real/local/conntrack/local_conntrack-S_v1.4.7_tab-after-cpu.txt",
	})
}

func TestConntrackOpen(t *testing.T) {
	snap, warns, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), "parse/testdata/conntrack/conntrack-L.txt"), nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Inputs) != 1 || snap.Inputs[0].Format != "conntrack" || snap.Inputs[0].Kind != model.KindConntrack || snap.Inputs[0].Records != 5 {
		t.Errorf("inputs %+v", snap.Inputs)
	}
	if len(snap.Conntrack) != 5 || !snap.Conntrack[1].DNAT() || snap.Conntrack[1].Reply.Src.String() != "127.0.0.53:53" {
		t.Errorf("conntrack %+v", snap.Conntrack)
	}
}

// Rules cut out of iptables-save with grep sniff as iptables-S, or as
// iptables-save when their [packets:bytes] counters say -c.
func TestSniffIPTablesFragments(t *testing.T) {
	for rel, want := range map[string]string{
		"fixtures/real/iptables/kube-router-issue425_nat-KUBE-SERVICES-fragment_masq-rules.rules":         "iptables-S",
		"fixtures/real/iptables/kubernetes-issue26292_nat-KUBE-SERVICES-fragment_no-table-header.rules":   "iptables-S",
		"fixtures/real/iptables/weave-issue3392_nat-KUBE-SERVICES-fragment_external-ip-physdev.rules":     "iptables-S",
		"fixtures/real/local/iptables/local_iptables-save-grep-A-KUBE_fragment.txt":                       "iptables-S",
		"fixtures/real/iptables/submariner-subctl-pr1205_iptables-save-c_counter-prefixed-fragment.rules": "iptables-save",
		"fixtures/real/iptables/kube-hetzner-issue1210_iptables-save-grep-KUBE-SVC_suse-prompt.txt":       "iptables-save",
		"fixtures/real/local/iptables/local_legacy-and-nft-save-side-by-side_nat.txt":                     "iptables-save",
	} {
		if got := parsetest.SniffAs(t, parse.Formats(), rel); got != want {
			t.Errorf("%s: sniffed as %q, want %s", rel, got, want)
		}
	}
}

// ipvsadm -l --timeout is read as the timeouts, not as a service table;
// service tables and other host outputs are not timeouts.
func TestSniffIPVSTimeout(t *testing.T) {
	own := []string{"fixtures/field/ipvs-idle-timeout--kubeasz-pr-688/ipvsadm-l-timeout.txt"}
	others := append([]string{"fixtures/field/ipvs-stale-realserver--k8s-issue-81775/ipvsadm-Ln.txt",
		"fixtures/field/ipvs-stale-realserver--k8s-issue-76664/ipvsadm-Lnc.txt",
		"fixtures/field/ipvs-idle-timeout--kubeasz-pr-688/sysctl.txt"}, parsetest.OtherHostOutputs...)
	parsetest.CheckSniff(t, parse.Formats(), netfilter.IPVSTimeoutFormat, own, others)
}
