package logs_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// ciliumEvent formats an event as "line node time k=v ..." (Fields sorted).
func ciliumEvent(ev model.LogEvent) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(ev.Fields)) {
		kv = append(kv, k+"="+ev.Fields[k])
	}
	ts := "-"
	if !ev.Time.IsZero() {
		ts = ev.Time.Format(time.DateTime)
	}
	return fmt.Sprintf("%d %s %s %s", ev.Pos.Line, ev.Node, ts, strings.Join(kv, " "))
}

// cilium monitor's drop lines as published: the 1.2/1.3 line with its
// identities, a CI's monitor.log with its trace and debug lines, and the
// 2017 format without addresses. Every line is read; the drops keep their
// reason, addresses and ports.
func TestCiliumMonitorRealLogs(t *testing.T) {
	for _, c := range []struct {
		file string
		n    int
		want map[int]string // by event index
	}{
		{"cilium-issue5496_monitor-drop-line_policy-denied-L3_identity.txt", 1, map[int]string{
			0: "1  - dst=10.6.2.169:53 dst_identity=7318 endpoint=0 event=drop flow=0x3a91d07e proto=udp " +
				"reason=Policy denied (L3) src=10.6.1.104:50733 src_identity=10472",
		}},
		{"cilium-pr5869_monitor-log-grep_policy-denied-L3_dns.log", 10, map[int]string{
			0: "2 kn2 2018-10-17 06:34:51 dst=10.96.0.10:53 dst_labels=reserved:unknown event=trace src=10.12.1.209:57214",
			1: "3 kn2 2018-10-17 06:34:51 event=debug",
			4: "6 kn2 2018-10-17 06:34:51 dst=10.12.1.182:53 dst_labels=kube-system/coredns-6c8d7f5b9e-w8rkz event=drop " +
				"reason=Policy denied (L3) src=10.12.1.209:57214",
			9: "11 kn2 2018-10-17 06:34:51 dst=10.12.1.182:53 dst_labels=kube-system/coredns-6c8d7f5b9e-w8rkz event=drop " +
				"reason=Policy denied (L3) src=10.12.1.209:53091",
		}},
		{"cilium-pr1112_monitor-2017-format_policy-denied-invalid-mac.txt", 16, map[int]string{
			0:  "1  - container=402 endpoint=37114 event=from",
			1:  "2  - endpoint=37114 event=drop ifindex=402 reason=Policy denied",
			7:  "8  - endpoint=30571 event=drop ifindex=388 reason=Invalid destination mac",
			11: "12  - event=from seclabel=431 to_container=30571",
			12: "13  - endpoint=30571 event=from to_ifindex=388",
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			file := filepath.Join(testutil.Root(), "fixtures/real/incident-evidence", c.file)
			snap, warns, err := parse.Open(context.Background(), file, nil)
			if err != nil || len(warns) != 0 {
				t.Fatalf("open: %v %v", err, warns)
			}
			if len(snap.Inputs) != 1 || snap.Inputs[0].Format != "cilium-monitor" || len(snap.Logs) != c.n {
				t.Fatalf("inputs %+v, %d events, want %d", snap.Inputs, len(snap.Logs), c.n)
			}
			for i, w := range c.want {
				if got := ciliumEvent(snap.Logs[i]); got != w {
					t.Errorf("event %d:\n got %s\nwant %s", i, got, w)
				}
				if snap.Logs[i].Source != "cilium-monitor" {
					t.Errorf("event %d: source %q", i, snap.Logs[i].Source)
				}
			}
		})
	}
}

// A drop line of a later release, with ifindex and file before the
// identities and the TCP flags after the protocol.
func TestCiliumMonitorDropFields(t *testing.T) {
	in := "xx drop (Policy denied) flow 0x0 to endpoint 0, ifindex 29, file bpf_lxc.c:1497, , identity 62535->16777217: " +
		"10.0.1.36:37060 -> 10.0.2.15:8080 tcp SYN\n"
	file := filepath.Join(t.TempDir(), "drops.txt")
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, warns, err := parse.Open(context.Background(), file, nil)
	if err != nil || len(warns) != 0 || len(snap.Logs) != 1 {
		t.Fatalf("open: %v %v %+v", err, warns, snap.Logs)
	}
	want := "1  - dst=10.0.2.15:8080 dst_identity=16777217 endpoint=0 event=drop file=bpf_lxc.c:1497 flags=SYN " +
		"flow=0x0 ifindex=29 proto=tcp reason=Policy denied src=10.0.1.36:37060 src_identity=62535"
	if got := ciliumEvent(snap.Logs[0]); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// cilium monitor -t drop as a ticket pasted it: the prompt, the banner,
// the agent's info line and three drop lines, read without a warning.
func TestCiliumMonitorBanner(t *testing.T) {
	file := filepath.Join(testutil.Root(), "fixtures/field/network-policy-deny--cilium-13308/cilium-monitor.txt")
	snap, warns, err := parse.Open(context.Background(), file, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	var events []string
	for _, le := range snap.Logs {
		events = append(events, le.Fields["event"])
	}
	if got, want := strings.Join(events, " "), "banner banner  drop drop drop"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
}
