package facts_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
)

// policyDrops formats the policy drops of fs as "dataplane client -> server
// proto reason @line".
func policyDrops(fs *analyzer.FactSet) []string {
	var out []string
	for _, d := range facts.PolicyDrops.Get(fs).Drops {
		out = append(out, fmt.Sprintf("%s %s -> %s %s %q @%d", d.Dataplane, d.Client, d.Server, d.Proto, d.Reason, d.Event.Pos.Line))
	}
	return out
}

// Cilium's published drop lines: the 1.2/1.3 line of issue #5496, the
// monitor.log of PR #5869 (drops without a protocol, among trace and debug
// lines), and 2017's lines, which name no address and give no drop.
func TestPolicyDropsCilium(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"cilium-issue5496_monitor-drop-line_policy-denied-L3_identity.txt",
			[]string{`Cilium 10.6.1.104:50733 -> 10.6.2.169:53 UDP "Policy denied (L3)" @1`}},
		{"cilium-pr5869_monitor-log-grep_policy-denied-L3_dns.log", []string{
			`Cilium 10.12.1.209:57214 -> 10.12.1.182:53  "Policy denied (L3)" @6`,
			`Cilium 10.12.1.209:53091 -> 10.12.1.182:53  "Policy denied (L3)" @11`}},
		{"cilium-pr1112_monitor-2017-format_policy-denied-invalid-mac.txt", nil},
	} {
		got := policyDrops(open(t, "fixtures/real/incident-evidence/"+c.file))
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.file, got, c.want)
		}
	}
}

// Drops for other reasons are not policy drops.
func TestPolicyDropsOtherReason(t *testing.T) {
	line := "xx drop (CT: Map insertion failed) flow 0x3a91d07e to endpoint 0, identity 10472->7318: " +
		"10.6.1.104:50733 -> 10.6.2.169:53 udp\n"
	if got := policyDrops(openText(t, "drops.txt", line)); len(got) != 0 {
		t.Errorf("drops %q", got)
	}
}

// The kernel's line of Felix's LOG rule --log-prefix "calico-drop: "
// (felix issue #1118's rules): the fields nf_log prints after the prefix,
// here those of the real TRACE line of kubernetes issue #107965 (the same
// dump of the packet, with the spaces its paste put after "SRC=") behind
// Calico's prefix instead of TRACE's.
func TestPolicyDropsCalico(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/real/syslog/kubernetes-issue107965_kernel-TRACE_wrapped-fields.log"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	line := strings.Replace(first, "TRACE: nat:PREROUTING:rule:1 ", "calico-drop: ", 1)
	if line == first {
		t.Fatal("the TRACE line changed")
	}
	got := policyDrops(openText(t, "kern.log", line+"\n"+first+"\n"))
	want := `Calico 192.0.2.108:45847 -> 192.0.2.111:8089 TCP "calico-drop" @1`
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want [%q]", got, want)
	}
}

// openText reads text as a file called name.
func openText(t *testing.T, name, text string) *analyzer.FactSet {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, warns, err := parse.Open(context.Background(), p, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open %s: %v %v", name, err, warns)
	}
	return analyzer.NewFactSet(snap)
}
