package facts_test

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
)

// The capture of a node that DNATs a Service to a Pod on its bridge shows
// each connection twice, joined by its sequence number; with
// bridge-nf-call-iptables = 0 the endpoint's SYN/ACK is seen only
// untranslated, with 1 it is seen translated back as well.
func TestNATPairs(t *testing.T) {
	for _, tc := range []struct {
		file         string
		untranslated bool
	}{
		{"fixtures/incidents/nat-reply-untranslated/capture.pcap", true},
		{"fixtures/incidents/nat-reply-untranslated-control/capture.pcap", false},
	} {
		pairs := facts.NATPairs.Get(open(t, tc.file)).Pairs()
		if len(pairs) != 2 {
			t.Fatalf("%s: %d pairs, want 2", tc.file, len(pairs))
		}
		for _, p := range pairs {
			got := fmt.Sprintf("%s -> %s then %s -> %s dnat=%v snat=%v untranslated=%v isn-equal=%v",
				p.Before.Client.Addr(), p.Before.Server, p.After.Client.Addr(), p.After.Server, p.DNAT, p.SNAT,
				p.ReplyUntranslated(), p.Before.ISN == p.After.ISN)
			want := fmt.Sprintf("10.244.0.5 -> 10.96.0.10:80 then 10.244.0.5 -> 10.244.0.6:8080 dnat=true snat=false "+
				"untranslated=%v isn-equal=true", tc.untranslated)
			if got != want {
				t.Errorf("%s: pair %s\nwant %s", tc.file, got, want)
			}
			if p.Before.Client != p.After.Client || p.Before.SYN[0].Frame >= p.After.SYN[0].Frame {
				t.Errorf("%s: pair at frames %d and %d: the client port changed or the order is wrong", tc.file,
					p.Before.SYN[0].Frame, p.After.SYN[0].Frame)
			}
		}
	}
	// The client Pod's own capture: its SYN to the Service, and the SYN/ACK
	// from the endpoint that acknowledges it.
	pod := facts.NATPairs.Get(open(t, "fixtures/incidents/nat-reply-untranslated-pod/capture.pcap")).Pairs()
	if len(pod) != 2 {
		t.Fatalf("the Pod's capture: %d pairs, want 2", len(pod))
	}
	for _, p := range pod {
		if p.Before.Server.String() != "10.96.0.10:80" || p.After.Server.String() != "10.244.0.6:8080" || len(p.After.SYN) != 0 ||
			p.Before.ISN != p.After.ISN || !p.ReplyUntranslated() || !p.DNAT {
			t.Errorf("the Pod's capture: pair %+v / %+v", p.Before, p.After)
		}
	}
	// Captures where nothing is translated have no pairs.
	if n := len(facts.NATPairs.Get(open(t, "fixtures/incidents/ephemeral-nodeport/capture.pcap")).Pairs()); n != 0 {
		t.Errorf("ephemeral-nodeport: %d NAT pairs, want none", n)
	}
}

// Two connections with nothing in common but their sequence number are
// not one connection translated: the incident's translated copies, given
// another client, are joined to nothing.
func TestNATPairsKeepOneEnd(t *testing.T) {
	snap := open(t, "fixtures/incidents/nat-reply-untranslated/capture.pcap").Snapshot()
	moved := 0
	for i := range snap.Attempts {
		a := &snap.Attempts[i]
		if a.Server.String() == "10.244.0.6:8080" {
			a.Client = netip.AddrPortFrom(netip.MustParseAddr("10.244.0.77"), a.Client.Port())
			moved++
		}
	}
	if moved != 2 {
		t.Fatalf("%d translated copies in the capture, want 2", moved)
	}
	if n := len(facts.NATPairs.Get(analyzer.NewFactSet(snap)).Pairs()); n != 0 {
		t.Errorf("%d pairs joined with both ends changed, want none", n)
	}
}
