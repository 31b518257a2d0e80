package logs_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/logs"
)

// weave's refusal to allocate from a range that overlaps a route of the
// host, as people pasted it: with the kubectl logs command, and alone.
func TestWeaveOverlapRealLogs(t *testing.T) {
	for _, c := range []struct {
		file           string
		line           int
		network, route string
	}{
		{"fixtures/field/pod-cidr-overlap--kubevirt-site-issue-138/weave.log", 2, "172.26.0.0/16", "172.26.0.0/24"},
		{"fixtures/field/pod-cidr-overlap--weave-issue-3211/weave.log", 1, "10.32.0.0/12", "10.0.0.0/8"},
	} {
		t.Run(c.file, func(t *testing.T) {
			snap, warns, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), c.file), nil)
			if err != nil || len(warns) != 0 {
				t.Fatalf("open: %v %v", err, warns)
			}
			if len(snap.Inputs) != 1 || snap.Inputs[0].Format != "weave-log" || len(snap.Logs) != 1 {
				t.Fatalf("inputs %+v, %d events", snap.Inputs, len(snap.Logs))
			}
			ev := snap.Logs[0]
			if ev.Source != "weave" || ev.Level != "error" || ev.Pos.Line != c.line ||
				ev.Fields["network"] != c.network || ev.Fields["route"] != c.route {
				t.Errorf("event: %+v", ev)
			}
		})
	}
}

// The router's lines: level, time and message, the launch script's line
// after a fatal one continuing it; an overlap line among them; kubectl's
// note of the container it chose is not a line of the log.
func TestWeaveRouterLines(t *testing.T) {
	in := "Defaulted container \"weave\" out of: weave, weave-npc, weave-init (init)\n" +
		"FATA: 2023/07/05 05:09:36.639718 [kube-peers] Could not get peers: Get \"https://10.96.0.1:443/api/v1/nodes\": dial tcp 10.96.0.1:443: i/o timeout\n" +
		"Failed to get peers\n" +
		"INFO: 2019/10/08 09:14:30.409305 Command line options: map[conn-limit:200]\n" +
		"Network 10.96.0.0/16 overlaps with existing route 10.96.0.0/16 on host\n"
	evs, err := logs.Logs(strings.NewReader(in), "weave.log")
	if err != nil || len(evs) != 3 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	want := []struct {
		level, msg string
		at         time.Time
	}{
		{"fatal", "[kube-peers] Could not get peers", time.Date(2023, 7, 5, 5, 9, 36, 639718000, time.UTC)},
		{"info", "Command line options", time.Date(2019, 10, 8, 9, 14, 30, 409305000, time.UTC)},
		{"error", "Network 10.96.0.0/16 overlaps", time.Time{}},
	}
	if !strings.HasSuffix(evs[0].Message, "i/o timeout\nFailed to get peers") {
		t.Errorf("fatal entry: %q", evs[0].Message)
	}
	for i, w := range want {
		ev := evs[i]
		if ev.Source != "weave" || ev.Level != w.level || !strings.HasPrefix(ev.Message, w.msg) || !ev.Time.Equal(w.at) ||
			ev.Pos.Line != []int{2, 4, 5}[i] {
			t.Errorf("event %d: %+v", i, ev)
		}
	}
}

func TestWeaveSniff(t *testing.T) {
	own := []string{
		"fixtures/field/pod-cidr-overlap--kubevirt-site-issue-138/weave.log",
		"fixtures/field/pod-cidr-overlap--weave-issue-3211/weave.log",
	}
	others := []string{
		"fixtures/field/coredns-loop--k8s-issue-71705/coredns.log",
		"fixtures/real/incident-evidence/image-builder-pr536_calico-felix-FATAL-loose-rpf_hard-wrapped.log",
		"fixtures/incidents/pod-cidr-overlap/ip-route.txt",
	}
	parsetest.CheckSniff(t, parse.Formats(), logs.WeaveLogFormat, own, others)
}
