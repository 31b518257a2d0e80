package rules_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
)

func conntrackFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "parse/testdata/conntrack", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Real counters of an idle namespace and of one where DNS queries raced
// through DNAT (parse/testdata/make-conntrack-stats.sh): this kernel
// resolved the clashes, so nothing was dropped.
func TestConntrackDropsNone(t *testing.T) {
	for _, name := range []string{"conntrack-S-idle.txt", "conntrack-S-races.txt", "proc-stat-nf_conntrack.txt"} {
		if f := runOnFiles(t, rules.ConntrackDrops, map[string]string{name: conntrackFile(t, name)}).Findings; len(f) != 0 {
			t.Errorf("%s: %+v", name, f)
		}
	}
}

func TestConntrackInsertFailed(t *testing.T) {
	files := map[string]string{"conntrack-S.txt": conntrackFile(t, "conntrack-S-insert-failed.txt")}
	f := runOnFiles(t, rules.ConntrackDrops, files).Findings
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["insert_failed"] != uint64(708) || f[0].Facts["cpus"] != 4 {
		t.Fatalf("%+v", f)
	}
	if ev := fmt.Sprint(evPositions(f[0])); ev != "[conntrack-S.txt:1 conntrack-S.txt:2 conntrack-S.txt:3 conntrack-S.txt:4]" {
		t.Errorf("evidence %s", ev)
	}
	// DNS lookups timing out in the logs make it the cause of an outage.
	files["app.log"] = `{"level":"error","ts":"2024-06-05T22:35:17Z","msg":"dial tcp: lookup api.example.com on 10.96.0.10:53: read udp 10.244.1.5:41234->10.96.0.10:53: i/o timeout"}` + "\n"
	f = runOnFiles(t, rules.ConntrackDrops, files).Findings
	if len(f) != 1 || f[0].Severity != analyzer.Error || f[0].Facts["dns_timeouts"] != 1 {
		t.Fatalf("with DNS timeouts: %+v", f)
	}
}

func TestConntrackTableFull(t *testing.T) {
	files := map[string]string{"nf_conntrack.txt": conntrackFile(t, "proc-stat-nf_conntrack-full.txt"),
		"sysctl.txt": "net.netfilter.nf_conntrack_max = 262144\n"}
	f := runOnFiles(t, rules.ConntrackDrops, files).Findings
	if len(f) != 1 || f[0].Severity != analyzer.Error || f[0].Facts["drop"] != uint64(0x3a21+0x39ff) ||
		f[0].Facts["early_drop"] != uint64(0x12f4+0x1302) || f[0].Facts["entries"] != uint64(262144) || f[0].Facts["nf_conntrack_max"] != "262144" {
		t.Fatalf("%+v", f)
	}
	if f[0].Title != "conntrack table full on this node: 29728 new packets dropped, 9718 early drops" {
		t.Errorf("title %q", f[0].Title)
	}
}

func evPositions(f analyzer.Finding) []string {
	var out []string
	for _, e := range f.Evidence {
		out = append(out, e.Pos.String())
	}
	return out
}

// The kernel's "table full, dropping packet" lines alone tell it (a
// warning: one source); with the counters of the same node they make one
// finding, an error.
func TestConntrackTableFullKernelLog(t *testing.T) {
	dmesg, err := os.ReadFile(filepath.Join(testutil.Root(), "parse/testdata/logs/dmesg-conntrack-full.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f := runOnFiles(t, rules.ConntrackDrops, map[string]string{"dmesg.txt": string(dmesg)}).Findings
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["kernel_messages"] != 4 ||
		f[0].Title != "conntrack table full on this node: the kernel dropped packets of new connections" {
		t.Fatalf("%+v", f)
	}
	if ev := fmt.Sprint(evPositions(f[0])); ev != "[dmesg.txt:1 dmesg.txt:2 dmesg.txt:3]" {
		t.Errorf("evidence %s", ev)
	}
	f = runOnFiles(t, rules.ConntrackDrops, map[string]string{"dmesg.txt": string(dmesg),
		"nf_conntrack.txt": conntrackFile(t, "proc-stat-nf_conntrack-full.txt")}).Findings
	if len(f) != 1 || f[0].Severity != analyzer.Error || f[0].Facts["kernel_messages"] != 4 || f[0].Facts["drop"] != uint64(0x3a21+0x39ff) {
		t.Fatalf("with the counters: %+v", f)
	}
}
