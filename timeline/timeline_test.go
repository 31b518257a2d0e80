package timeline

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// laneNamed returns tl's lane called name, failing the test without one.
func laneNamed(t *testing.T, tl *report.Timeline, name string) *report.Lane {
	t.Helper()
	for i := range tl.Lanes {
		if tl.Lanes[i].Name == name {
			return &tl.Lanes[i]
		}
	}
	names := make([]string, 0, len(tl.Lanes))
	for _, l := range tl.Lanes {
		names = append(names, l.Name)
	}
	t.Fatalf("timeline %q has no lane %q (lanes %q)", tl.Title, name, names)
	return nil
}

// counts sums a lane's events by kind, each standing for Count.
func counts(l *report.Lane) map[string]int {
	out := map[string]int{}
	for _, e := range l.Events {
		out[e.Kind] += max(e.Count, 1)
	}
	return out
}

// timelineOf builds the timelines of an incident and returns f's.
func timelineOf(t *testing.T, snap *model.Snapshot, fs []analyzer.Finding, f *analyzer.Finding) *report.Timeline {
	t.Helper()
	tl := Build(context.Background(), snap, rules.All(), fs)[f.Fingerprint]
	if tl == nil {
		t.Fatalf("%s %v: no timeline", f.Rule, f.Subject)
	}
	if tl.Start.IsZero() || tl.End.Before(tl.Start) {
		t.Errorf("%s: timeline bounds %v..%v", f.Rule, tl.Start, tl.End)
	}
	return tl
}

// The stale-dnat incident: the attempts to the stale target, all
// unanswered, with a mark at the first; kube-proxy's errors on their own
// clock (the log has no year and another date than the capture).
func TestStaleDNATTimeline(t *testing.T) {
	snap, fs := incident(t, "incidents/stale-dnat")
	target := netip.MustParseAddrPort("10.244.2.7:53")
	var want int
	var first time.Time
	for _, a := range snap.Attempts {
		if a.Server == target {
			want++
			if !a.Outcome.Failed() {
				t.Fatalf("fixture: attempt %s → %s is %s", a.Client, a.Server, a.Outcome)
			}
			if first.IsZero() || a.Start.Before(first) {
				first = a.Start
			}
		}
	}
	if want == 0 {
		t.Fatal("fixture: no attempt to the stale target")
	}
	tl := timelineOf(t, snap, fs, find(t, fs, "stale-dnat"))
	l := laneNamed(t, tl, target.String())
	if got := counts(l); got[report.EventFailed] != want || len(got) != 1 {
		t.Errorf("stale target lane: %v, want %d failed", got, want)
	}
	if len(tl.Marks) != 1 || !tl.Marks[0].Time.Equal(first) || !strings.Contains(tl.Marks[0].Label, "first stale DNAT") {
		t.Errorf("marks %+v, want one at %v", tl.Marks, first)
	}
	for _, l := range tl.Lanes {
		for _, e := range l.Events {
			if e.Time.Year() != first.Year() {
				t.Errorf("lane %s: event at %v on a timeline of %d", l.Name, e.Time, first.Year())
			}
		}
	}

	var errs int
	for _, e := range snap.Logs {
		if strings.Contains(e.Pos.File, "kube-proxy") && e.Level == "E" {
			errs++
		}
	}
	kp := timelineOf(t, snap, fs, find(t, fs, "kube-proxy-sync-errors"))
	if len(kp.Lanes) != 1 || counts(&kp.Lanes[0])[report.EventError] != errs || errs == 0 {
		t.Errorf("kube-proxy-sync-errors: lanes %+v, want one of %d errors", kp.Lanes, errs)
	}
	if len(kp.Marks) != 0 {
		t.Errorf("kube-proxy-sync-errors: mark %+v drawn against logs of another date", kp.Marks)
	}
}

// arp-flap: one lane for the VIP, one owner span per MAC change, the
// claims of the capture as events.
func TestARPFlapTimeline(t *testing.T) {
	snap, fs := incident(t, "incidents/lb-conflict")
	vip := netip.MustParseAddr("192.168.200.99")
	var claims int
	var macs []string
	for _, e := range snap.ARP {
		if e.IP == vip && !e.Copy && (e.Op == "reply" || e.Gratuitous) {
			claims += 1 + e.Repeats
			if m := strings.ToLower(e.MAC); len(macs) == 0 || macs[len(macs)-1] != m {
				macs = append(macs, m)
			}
		}
	}
	if len(macs) < 2 {
		t.Fatalf("fixture: owners %v", macs)
	}
	for _, rule := range []string{"arp-flap", "lb-controller-conflict"} {
		tl := timelineOf(t, snap, fs, find(t, fs, rule))
		l := laneNamed(t, tl, "IP "+vip.String())
		if got := counts(l)[report.EventARP]; got != claims {
			t.Errorf("%s: %d claims drawn, the capture has %d", rule, got, claims)
		}
		var owners []string
		for i, s := range l.Spans {
			owners = append(owners, s.Label)
			if s.Kind != report.SpanOwner || s.End.Before(s.Start) {
				t.Errorf("%s: span %+v", rule, s)
			}
			if i > 0 && !s.Start.Equal(l.Spans[i-1].End) {
				t.Errorf("%s: owner %d does not hold the address until the next claims it: %+v", rule, i-1, l.Spans)
			}
		}
		if !slices.Equal(owners, macs) {
			t.Errorf("%s: owners %v, want %v", rule, owners, macs)
		}
	}
}

// arp-unanswered: the requests nobody answered, with their repeats.
func TestARPUnansweredTimeline(t *testing.T) {
	snap, fs := incident(t, "incidents/vip-unannounced")
	vip := netip.MustParseAddr("192.168.210.99")
	want := 0
	for _, e := range snap.ARP {
		if e.Unanswered && e.Target == vip && !e.Copy {
			want += 1 + e.Repeats
		}
	}
	tl := timelineOf(t, snap, fs, find(t, fs, "arp-unanswered"))
	if got := counts(laneNamed(t, tl, "IP "+vip.String())); got[report.EventFailed] != want || want == 0 {
		t.Errorf("unanswered requests %v, want %d", got, want)
	}
}

// synack-reset on the ephemeral-nodeport incident: every attempt of the
// client to the server, kept or counted, by outcome.
func TestSynAckResetTimeline(t *testing.T) {
	snap, fs := incident(t, "incidents/ephemeral-nodeport")
	client, server := netip.MustParseAddr("10.23.77.129"), netip.MustParseAddrPort("10.23.77.138:80")
	want := map[string]int{}
	for _, a := range snap.Attempts {
		if a.Client.Addr() == client && a.Server == server {
			want[outcomeKind(a.Outcome)]++
		}
	}
	for _, st := range snap.EndpointStats {
		if st.Server == server && slices.Contains(st.ClientAddrs, client) {
			want[outcomeKind(st.Outcome)] += st.Attempts
		}
	}
	tl := timelineOf(t, snap, fs, find(t, fs, "synack-reset"))
	if len(tl.Lanes) != 1 {
		t.Fatalf("lanes %+v, want the server's only", tl.Lanes)
	}
	got := counts(laneNamed(t, tl, server.String()))
	if want[report.EventReset] == 0 || len(got) != len(want) {
		t.Fatalf("drawn %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d drawn, want %d", k, got[k], n)
		}
	}
	// ephemeral-nodeport-overlap draws the attempts whose source port is
	// an allocated NodePort: the reset ones.
	eo := timelineOf(t, snap, fs, find(t, fs, "ephemeral-nodeport-overlap"))
	for _, l := range eo.Lanes {
		for _, e := range l.Events {
			if e.Kind != report.EventReset {
				t.Errorf("ephemeral-nodeport-overlap: %s event %q", e.Kind, e.Label)
			}
		}
	}
}

// probe-restart-loop: the container's runs from the pod status, the
// kubelet's events, and a probe window after each known start.
func TestProbeRestartTimeline(t *testing.T) {
	snap, fs := incident(t, "incidents/probe-restart-loop")
	f := find(t, fs, "probe-restart-loop")
	tl := timelineOf(t, snap, fs, f)
	l := laneNamed(t, tl, "container etcd (pod kube-system/etcd-cp-1)")
	var starts int
	for _, p := range snap.Kube.Pods {
		if p.Name != "etcd-cp-1" {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name != "etcd" {
				continue
			}
			if cs.State.Running != nil {
				starts++
			}
			if cs.LastTerminationState.Terminated != nil {
				starts++
			}
		}
	}
	if len(tl.Spans) != starts || starts == 0 {
		t.Errorf("%d probe windows, want one per known start (%d)", len(tl.Spans), starts)
	}
	// The window is as long as the finding says the failures take:
	// failureThreshold checks the timeout apart, the timeout (15 s) being
	// longer than the period (10 s).
	failing, ok := factInt(f, "failing_window_s")
	period, _ := factInt(f, "period_s")
	if threshold, _ := factInt(f, "failure_threshold"); !ok || failing == 0 || period*threshold == failing {
		t.Fatalf("failing_window_s %d (period %d s): the fixture no longer has a timeout longer than its period", failing, period)
	}
	for _, s := range tl.Spans {
		if s.Kind != report.SpanWindow || s.End.Sub(s.Start) != time.Duration(failing)*time.Second {
			t.Errorf("window %+v, want the finding's %d s", s, failing)
		}
	}
	if c := counts(l); c[report.EventRestart] == 0 || c[report.EventError] == 0 {
		t.Errorf("container lane %v: want restarts and probe failures", c)
	}
}

// A finding whose symptom the capture shows gets only the attempts to its
// own servers: nat-hairpin has two syn-unanswered findings, each drawn
// alone; a finding about a server no attempt went to gets no timeline,
// however many failed attempts the capture holds.
func TestOtherServersLeftOut(t *testing.T) {
	snap, fs := incident(t, "incidents/nat-hairpin")
	tls := Build(context.Background(), snap, rules.All(), fs)
	for _, addr := range []string{"10.96.0.10:80", "10.244.0.5:8080"} {
		f := find(t, fs, "syn-unanswered", "address", addr)
		tl := tls[f.Fingerprint]
		if tl == nil {
			t.Fatalf("%s: no timeline", addr)
		}
		if len(tl.Lanes) != 1 || tl.Lanes[0].Name != addr {
			t.Errorf("%s: lanes %+v, want its own only", addr, tl.Lanes)
		}
	}
	f := *find(t, fs, "syn-unanswered", "address", "10.96.0.10:80")
	f.Subject = map[string]string{"address": "10.99.99.99:80", "proto": "tcp"}
	f.Evidence = nil
	f.Fingerprint = "other"
	if tl := Build(context.Background(), snap, rules.All(), []analyzer.Finding{f})["other"]; tl != nil {
		t.Errorf("a finding about a server no attempt went to got %+v", tl)
	}

	// The same server, another client: none of the client's attempts.
	snap, fs = incident(t, "incidents/ephemeral-nodeport")
	g := *find(t, fs, "synack-reset")
	g.Subject = map[string]string{"address": g.Subject["address"], "client": "10.23.77.200"}
	g.Evidence = nil
	g.Fingerprint = "other-client"
	if tl := Build(context.Background(), snap, rules.All(), []analyzer.Finding{g})["other-client"]; tl != nil {
		t.Errorf("a finding about another client of the server got %+v", tl.Lanes)
	}
}

// Every finding of an incident that cites a packet gets a timeline with
// events; the rules whose evidence has no time get none.
func TestEveryCaptureFindingHasTimeline(t *testing.T) {
	n := 0
	all := incidentDirs(t)
	dirs := testutil.RaceSample(t, 4, all)
	for _, d := range dirs {
		snap, fs := incident(t, d)
		tls := Build(context.Background(), snap, rules.All(), fs)
		captures := map[string]bool{}
		for _, c := range snap.Captures {
			captures[c.File] = true
		}
		for _, f := range fs {
			packet := slices.ContainsFunc(f.Evidence, func(e analyzer.Evidence) bool {
				return e.Frame > 0 || e.Line > 0 && captures[e.File]
			})
			tl := tls[f.Fingerprint]
			switch {
			case packet && tl == nil:
				t.Errorf("%s: %s %v cites packets but has no timeline", d, f.Rule, f.Subject)
			case tl != nil && !slices.ContainsFunc(tl.Lanes, func(l report.Lane) bool { return len(l.Events) > 0 }):
				t.Errorf("%s: %s: timeline without events: %+v", d, f.Rule, tl)
			case tl != nil && slices.Contains([]string{"version-skew", "apiserver-affinity", "service-rule-shadowed", "nodeport-collision", "iptables-backend-split"}, f.Rule):
				t.Errorf("%s: %s has a timeline: %q", d, f.Rule, tl.Title)
			}
			if packet {
				n++
			}
		}
	}
	if n < 15*len(dirs)/len(all) {
		t.Errorf("only %d findings citing packets in %d incidents", n, len(dirs))
	}
}

// A lane with more events than MaxLaneEvents has them folded, each
// standing for its count: none is lost.
func TestFolding(t *testing.T) {
	server := netip.MustParseAddrPort("10.0.0.1:80")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	snap := &model.Snapshot{}
	for i := range 3000 {
		o := model.OutcomeEstablished
		if i%3 == 0 {
			o = model.OutcomeUnanswered
		}
		snap.Attempts = append(snap.Attempts, model.Attempt{Pos: model.Pos{File: "c.pcap", Frame: i + 1},
			Client: netip.AddrPortFrom(netip.MustParseAddr("10.0.0.2"), uint16(1024+i)), Server: server,
			Outcome: o, Start: t0.Add(time.Duration(i) * 10 * time.Millisecond)})
	}
	f := analyzer.Finding{Rule: "syn-unanswered", Fingerprint: "fp", Subject: map[string]string{"address": server.String()}}
	tl := Build(context.Background(), snap, rules.All(), []analyzer.Finding{f})["fp"]
	if tl == nil || len(tl.Lanes) != 1 {
		t.Fatalf("timeline %+v", tl)
	}
	l := tl.Lanes[0]
	if len(l.Events) > MaxLaneEvents {
		t.Errorf("%d events, bound %d", len(l.Events), MaxLaneEvents)
	}
	if c := counts(&l); c[report.EventFailed] != 1000 || c[report.EventEstablished] != 2000 {
		t.Errorf("folded counts %v, want 1000 failed and 2000 established", c)
	}
	if !sortedEvents(l.Events) {
		t.Error("folded events out of time order")
	}
	for _, e := range l.Events {
		if e.Label == "" || e.Count < 1 {
			t.Errorf("folded event %+v", e)
		}
	}
}

// At most MaxLanes lanes, those with the most failures kept, and the
// title says so.
func TestMaxLanes(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	snap := &model.Snapshot{}
	for s := range MaxLanes + 4 {
		server := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 1, byte(s + 1)}), 80)
		for i := range s + 1 { // server s gets s+1 failed attempts
			snap.Attempts = append(snap.Attempts, model.Attempt{Pos: model.Pos{File: "c.pcap", Frame: len(snap.Attempts) + 1},
				Client: netip.MustParseAddrPort("10.0.0.2:1000"), Server: server, Outcome: model.OutcomeUnanswered,
				Start: t0.Add(time.Duration(i) * time.Second)})
		}
	}
	f := analyzer.Finding{Rule: "timewait-churn", Fingerprint: "fp", Facts: map[string]any{"clients": []string{"10.0.0.2: 900 TIME-WAIT"}}}
	tl := Build(context.Background(), snap, rules.All(), []analyzer.Finding{f})["fp"]
	if tl == nil || len(tl.Lanes) != MaxLanes {
		t.Fatalf("timeline %+v", tl)
	}
	if tl.Lanes[0].Name != "10.0.1.20:80" || tl.Lanes[MaxLanes-1].Name != "10.0.1.5:80" {
		t.Errorf("lanes from %s to %s, want the busiest", tl.Lanes[0].Name, tl.Lanes[MaxLanes-1].Name)
	}
	if !strings.Contains(tl.Title, "of 20") {
		t.Errorf("title %q does not say lanes were left out", tl.Title)
	}
}

func sortedEvents(es []report.Event) bool {
	return slices.IsSortedFunc(es, func(a, b report.Event) int { return a.Time.Compare(b.Time) })
}

// Log times without a year join dated records within a day of them,
// taking their year; otherwise they are left out.
func TestAlignClock(t *testing.T) {
	dated := []time.Time{time.Date(2026, 1, 26, 20, 40, 0, 0, time.UTC)}
	near := part{lanes: []report.Lane{{Events: []report.Event{{Time: time.Date(0, 1, 26, 21, 0, 0, 0, time.UTC)}}}}}
	if !alignClock(&near, dated) || near.lanes[0].Events[0].Time.Year() != 2026 {
		t.Errorf("a yearless time an hour off: %v", near.lanes[0].Events[0].Time)
	}
	far := part{marks: []report.Mark{{Time: time.Date(0, 6, 1, 0, 0, 0, 0, time.UTC)}}}
	if alignClock(&far, dated) {
		t.Error("a yearless time months off was drawn")
	}
	other := part{marks: []report.Mark{{Time: time.Date(2024, 1, 26, 20, 40, 0, 0, time.UTC)}}}
	if alignClock(&other, dated) {
		t.Error("a time two years off was drawn")
	}
	yearless := []time.Time{time.Date(0, 1, 26, 20, 40, 0, 0, time.UTC)}
	if alignClock(&other, yearless) {
		t.Error("a dated part joined a yearless first part")
	}
}

// A nil snapshot, no findings, or an ended context give no timelines and
// no panic.
func TestBuildEmpty(t *testing.T) {
	if got := Build(context.Background(), nil, rules.All(), []analyzer.Finding{{Rule: "arp-flap"}}); len(got) != 0 {
		t.Errorf("nil snapshot: %v", got)
	}
	snap, fs := incident(t, "incidents/stale-dnat")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := Build(ctx, snap, rules.All(), fs); len(got) != 0 {
		t.Errorf("ended context: %d timelines", len(got))
	}
}

// The kubelet's "Liveness probe failed" lines of the pod are drawn as
// errors against the probe window; those of another pod are not.
func TestProbeRestartKubeletLog(t *testing.T) {
	started := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	snap := &model.Snapshot{Logs: []model.LogEvent{
		{Source: "kubelet", Time: started.Add(40 * time.Second), Level: "I", Pos: model.Pos{File: "kubelet.log", Line: 1},
			Message: `"Probe failed" probeType="Liveness" pod="shop/web-0" podUID="u" containerName="web" probeResult="failure"`},
		{Source: "kubelet", Time: started.Add(50 * time.Second), Level: "I", Pos: model.Pos{File: "kubelet.log", Line: 2},
			Message: `Liveness probe failed for pod shop/web-0 container web: Get "http://10.0.0.5:8080/healthz": context deadline exceeded`},
		{Source: "kubelet", Time: started.Add(55 * time.Second), Level: "I", Pos: model.Pos{File: "kubelet.log", Line: 3},
			Message: `Liveness probe failed for pod shop/other-1 container web: connection refused`},
	}}
	f := analyzer.Finding{Rule: "probe-restart-loop", Fingerprint: "fp",
		Subject: map[string]string{"object": "Pod shop/web-0", "container": "web"},
		Facts:   map[string]any{"period_s": int32(10), "failure_threshold": int32(3), "initial_delay_s": int32(5)}}
	tl := Build(context.Background(), snap, rules.All(), []analyzer.Finding{f})["fp"]
	if tl == nil || len(tl.Lanes) != 1 {
		t.Fatalf("timeline %+v", tl)
	}
	if c := counts(&tl.Lanes[0]); c[report.EventError] != 2 || len(c) != 1 {
		t.Errorf("kubelet lane %v, want the pod's 2 probe failures", c)
	}
}

// The last owner of an address holds it until the capture ends.
func TestARPLastOwnerUntilCaptureEnd(t *testing.T) {
	snap, fs := incident(t, "incidents/lb-conflict")
	tl := timelineOf(t, snap, fs, find(t, fs, "arp-flap"))
	spans := laneNamed(t, tl, "IP 192.168.200.99").Spans
	last := spans[len(spans)-1]
	for _, c := range snap.Captures {
		if c.File == last.Pos.File && !last.End.Equal(c.Last) {
			t.Errorf("last owner %s until %v, the capture ends at %v", last.Label, last.End, c.Last)
		}
	}
	if tl.End.Before(last.End) {
		t.Errorf("timeline ends at %v, before its last span (%v)", tl.End, last.End)
	}
}

// Attempts a capture read in summary mode only counted are drawn over the
// time they took, not at the first one alone: connection-skew's 8
// established connections span 0.3 s of its capture.
func TestCountedAttemptsSpanTheirTime(t *testing.T) {
	snap, fs := incident(t, "incidents/connection-skew")
	tl := timelineOf(t, snap, fs, find(t, fs, "connection-skew"))
	n := 0
	for _, l := range tl.Lanes {
		for _, e := range l.Events {
			if e.Count < 2 {
				continue
			}
			n++
			for _, st := range snap.EndpointStats {
				if st.Attempts == e.Count && st.First.Equal(e.Time) && !e.End.Equal(st.Last) {
					t.Errorf("%q ends at %v, the attempts it counts at %v", e.Label, e.End, st.Last)
				}
			}
			if !e.End.After(e.Time) {
				t.Errorf("%q (×%d) has no end after %v", e.Label, e.Count, e.Time)
			}
		}
	}
	if n == 0 {
		t.Fatal("no counted attempts drawn")
	}
}

// A kubelet event repeated count times from its first to its last
// timestamp is one event over that time, counting them all, not an
// instant at each end that looks like the only two.
func TestProbeRestartRepeatedEvent(t *testing.T) {
	snap, fs := incident(t, "incidents/probe-restart-loop")
	tl := timelineOf(t, snap, fs, find(t, fs, "probe-restart-loop"))
	l := laneNamed(t, tl, "container etcd (pod kube-system/etcd-cp-1)")
	n := 0
	for _, ke := range snap.Kube.Events {
		if ke.Count < 2 || !ke.LastTimestamp.After(ke.FirstTimestamp.Time) || ke.InvolvedObject.Name != "etcd-cp-1" {
			continue
		}
		n++
		var at []report.Event
		for _, e := range l.Events {
			if e.Pos == ke.Source.Pos {
				at = append(at, e)
			}
		}
		if len(at) != 1 || !at[0].Time.Equal(ke.FirstTimestamp.UTC()) || !at[0].End.Equal(ke.LastTimestamp.UTC()) || at[0].Count != int(ke.Count) {
			t.Errorf("event %s ×%d (%v to %v) drawn as %+v", ke.Reason, ke.Count, ke.FirstTimestamp, ke.LastTimestamp, at)
		}
	}
	if n == 0 {
		t.Fatal("the fixture has no repeated event of the pod")
	}
}

// Lanes with as many failures are ordered by address and port, the ports
// as numbers: 10.0.0.1:2 before 10.0.0.1:10 before 10.0.0.1:100.
func TestLanesByPortNumber(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	snap := &model.Snapshot{}
	for i, port := range []uint16{100, 10, 2} {
		snap.Attempts = append(snap.Attempts, model.Attempt{
			Client: netip.MustParseAddrPort(fmt.Sprintf("10.0.0.9:%d", 40000+i)), Server: netip.AddrPortFrom(netip.MustParseAddr("10.0.0.1"), port),
			Outcome: model.OutcomeUnanswered, Start: start.Add(time.Duration(i) * time.Second), Pos: model.Pos{File: "c.pcap", Frame: i + 1}})
	}
	f := analyzer.Finding{Rule: "syn-unanswered", Fingerprint: "fp", Subject: map[string]string{"address": "10.0.0.1"},
		Evidence: []analyzer.Evidence{{Pos: model.Pos{File: "c.pcap", Frame: 1}}}}
	tl := Build(context.Background(), snap, rules.All(), []analyzer.Finding{f})["fp"]
	if tl == nil {
		t.Fatal("no timeline")
	}
	var names []string
	for _, l := range tl.Lanes {
		names = append(names, l.Name)
	}
	if want := []string{"10.0.0.1:2", "10.0.0.1:10", "10.0.0.1:100"}; !slices.Equal(names, want) {
		t.Errorf("lanes %v, want %v", names, want)
	}
}
