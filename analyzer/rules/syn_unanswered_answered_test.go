package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/model"
)

// SYNs left unanswered by an endpoint that answered other attempts in the
// same capture (a scanner's probe with odd flags among ordinary
// connections, as in the chrissanders activeosfingerprinting capture) do
// not show a backend that is down: the finding says so, in its facts, its
// contradictions and its cause. Without answered attempts, the finding is
// as before.
func TestSynUnansweredEndpointAnsweredOthers(t *testing.T) {
	const srv = "172.16.16.150:135"
	established := func(frame int) model.Attempt {
		return model.Attempt{Pos: model.Pos{File: "c.pcap", Frame: frame}, Client: netip.MustParseAddrPort(fmt.Sprintf("172.16.16.128:%d", 40000+frame)),
			Server: netip.MustParseAddrPort(srv), Outcome: model.OutcomeEstablished, Start: time.Unix(1700000000, 0)}
	}
	for _, answered := range []int{0, 7} {
		s := &model.Snapshot{}
		for i := range answered {
			s.Attempts = append(s.Attempts, established(1+2*i))
		}
		// Attempts the server is not seen answering do not count.
		for i, o := range []model.Outcome{model.OutcomeOther, model.OutcomeMidstream, model.OutcomeClientOnly} {
			a := established(100 + i)
			a.Outcome = o
			s.Attempts = append(s.Attempts, a)
		}
		f := run1(t, SynUnanswered, withAttempts(s, unanswered("172.16.16.128:51000", srv, 21, 3)))
		if len(f) != 1 {
			t.Fatalf("%d answered: %d findings: %+v", answered, len(f), f)
		}
		mentions := strings.Contains(strings.Join(f[0].Contradicts, "\n"),
			"the capture shows 172.16.16.150:135 answering 7 other connection attempts (the first at c.pcap#frame=1)")
		if answered == 0 {
			if f[0].Facts["answered_attempts"] != nil || mentions || !strings.Contains(f[0].Cause, "the backend is down or gone") {
				t.Errorf("no answered attempts: facts %v, contradicts %q, cause %q", f[0].Facts, f[0].Contradicts, f[0].Cause)
			}
			continue
		}
		if f[0].Facts["answered_attempts"] != 7 || !mentions || strings.Contains(f[0].Cause, "the backend is down or gone") ||
			!strings.Contains(f[0].Cause, "so it is not simply down") {
			t.Errorf("7 answered attempts: facts %v, contradicts %q, cause %q", f[0].Facts, f[0].Contradicts, f[0].Cause)
		}
	}
}

// Attempts a capture read in summary mode counted rather than kept are
// answered too, and the finding names the file and time of the first.
func TestSynUnansweredEndpointAnsweredCounted(t *testing.T) {
	const srv = "10.85.0.1:8080"
	s := &model.Snapshot{EndpointStats: []model.EndpointStats{
		{File: "c.pcap", Server: netip.MustParseAddrPort(srv), Outcome: model.OutcomeEstablished, Attempts: 6,
			First: time.Unix(1700000010, 0)},
		{File: "c.pcap", Server: netip.MustParseAddrPort(srv), Outcome: model.OutcomeRefused, Attempts: 4,
			First: time.Unix(1700000005, 0)},
		{File: "c.pcap", Server: netip.MustParseAddrPort(srv), Outcome: model.OutcomeUnanswered, Attempts: 50,
			First: time.Unix(1700000000, 0)},
	}}
	f := run1(t, SynUnanswered, withAttempts(s, unanswered("10.84.0.1:57556", srv, 21, 3)))
	if len(f) != 1 {
		t.Fatalf("%d findings: %+v", len(f), f)
	}
	want := "the capture shows 10.85.0.1:8080 answering 10 other connection attempts (the first at c.pcap, counted from 2023-11-14T22:13:25Z): it was up and reachable in that capture"
	if f[0].Facts["answered_attempts"] != 10 || !slices.Contains(f[0].Contradicts, want) {
		t.Errorf("facts %v, contradicts %q; want 10 answered and %q", f[0].Facts, f[0].Contradicts, want)
	}
}
