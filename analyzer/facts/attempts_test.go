package facts_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// The real sweep capture: one client tries port 9100 of 12 hosts behind a
// router that drops; each host is one group of unanswered attempts.
func TestFailedAttemptsSweep(t *testing.T) {
	fs := open(t, "fixtures/captures/sweep.pcap")
	groups := facts.FailedAttempts.Get(fs).Of(model.OutcomeUnanswered)
	if len(groups) != 12 {
		t.Fatalf("%d groups, want 12", len(groups))
	}
	hosts := map[netip.Addr]bool{}
	for _, g := range groups {
		hosts[g.Server.Addr()] = true
		if g.Server.Port() != 9100 || g.N != len(g.Attempts) || g.N == 0 || len(g.Clients) != 1 || g.First.After(g.Last) {
			t.Errorf("group %s: %d attempts (%d kept), clients %v, %s..%s", g.Server, g.N, len(g.Attempts), g.Clients, g.First, g.Last)
		}
	}
	if len(hosts) != 12 {
		t.Errorf("%d hosts", len(hosts))
	}
	if refused := facts.FailedAttempts.Get(fs).Of(model.OutcomeRefused); len(refused) != 0 {
		t.Errorf("refused groups %d", len(refused))
	}
}

func TestAttemptIndex(t *testing.T) {
	srv := netip.MustParseAddrPort("10.96.7.7:443")
	attempt := func(frame int, outcome model.Outcome) model.Attempt {
		return model.Attempt{Pos: model.Pos{File: "c.pcap", Frame: frame}, Client: netip.MustParseAddrPort("10.0.0.1:40000"),
			Server: srv, Outcome: outcome, SYN: []model.Seg{{Frame: frame}}}
	}
	s := &model.Snapshot{
		Attempts: []model.Attempt{attempt(1, model.OutcomeUnanswered), attempt(5, model.OutcomeUnanswered),
			attempt(9, model.OutcomeEstablished), attempt(12, model.OutcomeRefused)},
		ICMP:          []model.ICMPEvent{{Pos: model.Pos{File: "c.pcap", Frame: 6}, AttemptFrame: 5, What: "host-unreachable"}},
		EndpointStats: []model.EndpointStats{{File: "c.pcap", Server: srv, Outcome: model.OutcomeRefused, Attempts: 7}},
		Captures:      []model.CaptureInfo{{File: "syn.txt", Command: `tcpdump -nn "tcp[tcpflags] & (tcp-syn) != 0"`}},
	}
	fs := analyzer.NewFactSet(s)
	x := facts.Attempts.Get(fs)
	if a := x.At("c.pcap", 9); a == nil || a.Outcome != model.OutcomeEstablished {
		t.Errorf("At frame 9: %+v", a)
	}
	if a := x.At("c.pcap", 6); a != nil {
		t.Errorf("At frame 6: %+v", a)
	}
	if x.AnsweredByICMP(&s.Attempts[0]) || !x.AnsweredByICMP(&s.Attempts[1]) {
		t.Error("only the attempt of frame 5 is answered by an ICMP error")
	}
	if !x.SYNOnly("syn.txt") || x.SYNOnly("c.pcap") {
		t.Error("syn.txt alone is filtered on TCP flags")
	}
	failed, counted := x.FailedTo(srv)
	if len(failed) != 3 || counted != 7 {
		t.Errorf("failed to %s: %d kept, %d counted", srv, len(failed), counted)
	}
	g := facts.FailedAttempts.Get(fs)
	if u := g.Of(model.OutcomeUnanswered); len(u) != 1 || u[0].N != 1 || u[0].Attempts[0].Pos.Frame != 1 {
		t.Errorf("unanswered groups %+v: the one an ICMP error answers is left out", u)
	}
	if r := g.Of(model.OutcomeRefused); len(r) != 1 || r[0].N != 8 || len(r[0].Attempts) != 1 {
		t.Errorf("refused groups %+v: one kept, seven counted", r)
	}
	m := facts.MergeFailGroups("node1", netip.AddrPortFrom(srv.Addr(), 0), append(g.Of(model.OutcomeUnanswered), g.Of(model.OutcomeRefused)...))
	if m.N != 9 || len(m.Clients) != 1 || m.Node != "node1" || len(m.Attempts) != 0 {
		t.Errorf("merged %+v", m)
	}
}

// Attempts without times (text pasted from tcpdump -t) span nothing: a
// group's first and last times are its timed attempts', and zero when
// none has one.
func TestFailGroupSpanWithoutTimes(t *testing.T) {
	srv := netip.MustParseAddrPort("10.96.7.7:443")
	other := netip.MustParseAddrPort("10.96.7.8:443")
	t1 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	t2 := t1.Add(3 * time.Second)
	refused := func(file string, frame int, to netip.AddrPort, start time.Time) model.Attempt {
		return model.Attempt{Pos: model.Pos{File: file, Frame: frame}, Client: netip.MustParseAddrPort("10.0.0.1:40000"),
			Server: to, Outcome: model.OutcomeRefused, Start: start, SYN: []model.Seg{{Frame: frame, Time: start}}}
	}
	s := &model.Snapshot{
		Attempts: []model.Attempt{refused("a.pcap", 1, srv, t2), refused("t.txt", 2, srv, time.Time{}),
			refused("a.pcap", 3, srv, t1), refused("t.txt", 4, other, time.Time{})},
		EndpointStats: []model.EndpointStats{{File: "t.txt", Server: srv, Outcome: model.OutcomeRefused, Attempts: 5}},
	}
	for _, g := range facts.FailedAttempts.Get(analyzer.NewFactSet(s)).Of(model.OutcomeRefused) {
		want := [2]time.Time{t1, t2}
		if g.Server == other {
			want = [2]time.Time{}
		}
		if g.First != want[0] || g.Last != want[1] {
			t.Errorf("group %s: %s..%s, want %s..%s", g.Server, g.First, g.Last, want[0], want[1])
		}
	}
}
