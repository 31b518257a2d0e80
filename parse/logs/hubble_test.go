package logs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/logs"
)

// hubble observe's flow line as a ticket published it (hubble-observer
// issue #8): the Pod names elided, no time, no identities.
func TestHubbleObserveRealLine(t *testing.T) {
	file := filepath.Join(testutil.Root(), "fixtures/field/network-policy-deny--hubble-observer-8/hubble-observe.txt")
	snap, warns, err := parse.Open(context.Background(), file, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Inputs) != 1 || snap.Inputs[0].Format != "hubble-observe" || len(snap.Logs) != 1 {
		t.Fatalf("inputs %+v, %d events", snap.Inputs, len(snap.Logs))
	}
	want := "1  - direction=<> dst=kube-system/coredns-…:53 event=Policy denied src=hubble-observer/… summary=UDP verdict=DROPPED"
	if got := ciliumEvent(snap.Logs[0]); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if snap.Logs[0].Source != "hubble" {
		t.Errorf("source %q", snap.Logs[0].Source)
	}
}

// The full line of hubble observe, with the time and the identities, as
// Cilium's getting-started guide prints it.
func TestHubbleObserveFields(t *testing.T) {
	in := "Jun 14 06:29:32.553: default/xwing:43314 (ID:3040) <> default/deathstar-6fb5694d48-5hmds:80 (ID:32460) " +
		"Policy denied DROPPED (TCP Flags: SYN)\n" +
		"Jun 14 06:29:32.553: default/tiefighter:58034 (ID:1234) -> default/deathstar-6fb5694d48-5hmds:80 (ID:32460) " +
		"to-endpoint FORWARDED (TCP Flags: SYN)\n"
	file := filepath.Join(t.TempDir(), "flows.txt")
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, warns, err := parse.Open(context.Background(), file, nil)
	if err != nil || len(warns) != 0 || len(snap.Logs) != 2 || snap.Inputs[0].Format != "hubble-observe" {
		t.Fatalf("open: %v %v %+v", err, warns, snap.Inputs)
	}
	want := "1  0000-06-14 06:29:32 direction=<> dst=default/deathstar-6fb5694d48-5hmds:80 dst_identity=ID:32460 " +
		"event=Policy denied src=default/xwing:43314 src_identity=ID:3040 summary=TCP Flags: SYN verdict=DROPPED"
	if got := ciliumEvent(snap.Logs[0]); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := snap.Logs[1].Fields["verdict"]; got != "FORWARDED" {
		t.Errorf("second flow's verdict %q", got)
	}
}

// The sniff takes hubble's flows for hubble-observe, not for cilium
// monitor's text or a klog log.
func TestHubbleObserveSniff(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/field/network-policy-deny--hubble-observer-8/hubble-observe.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if s := logs.HubbleObserveFormat.Sniff("hubble-observe.txt", b); s == 0 {
		t.Errorf("hubble-observe sniffs its own line %d", s)
	}
	for _, f := range []*format.Format{logs.CiliumMonitorFormat, logs.KlogFormat} {
		if s := f.Sniff("hubble-observe.txt", b); s != 0 {
			t.Errorf("%s sniffs hubble's line %d", f.Name, s)
		}
	}
}
