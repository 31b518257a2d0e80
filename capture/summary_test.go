package capture_test

import (
	"bytes"
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
)

// Summary mode's counters hold what full mode lists one by one, on a
// capture whose attempts to two servers end in turn established, refused
// and unanswered, from clients taken in turn, with a sample of one failed
// attempt per server, so that the counters of one server's outcomes are
// added to in turn: the attempts and packets of each host and outcome
// (failures past a host's sample are counted by host), and the clients of
// each server's established attempts, which are all counted.
func TestSummaryCountersInterleaved(t *testing.T) {
	const syn, rst, ackf, fin = 2, 4, 16, 1
	var frames []busyFrame
	tcp := func(at time.Duration, src, dst netip.AddrPort, flags uint8, seq, ack uint32) {
		frames = append(frames, busyFrame{at: at, ts: at, data: tcpFrame(src, dst, flags, seq, ack, 0)})
	}
	for i := range 600 {
		at := time.Duration(i) * 10 * time.Millisecond
		cli := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 21, 0, byte(1 + i%7%5)}), uint16(30000+i))
		srv := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 20, 0, byte(1 + i/3%2)}), 80)
		isn := uint32(1000 + 7*i)
		tcp(at, cli, srv, syn, isn, 0)
		switch i % 3 {
		case 0: // established and closed
			tcp(at+time.Millisecond, srv, cli, syn|ackf, 5000, isn+1)
			tcp(at+2*time.Millisecond, cli, srv, ackf, isn+1, 5001)
			tcp(at+3*time.Millisecond, cli, srv, fin|ackf, isn+1, 5001)
			tcp(at+4*time.Millisecond, srv, cli, fin|ackf, 5001, isn+2)
			tcp(at+5*time.Millisecond, cli, srv, ackf, isn+2, 5002)
		case 1: // refused
			tcp(at+time.Millisecond, srv, cli, rst|ackf, 0, isn+1)
		}
	}
	b := writePcap(frames)
	full, err := capture.Read(context.Background(), bytes.NewReader(b), "turns.pcap", capture.Options{Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := capture.Read(context.Background(), bytes.NewReader(b), "turns.pcap", capture.Options{Shards: 2, Summary: capture.Summary{Enabled: true, FailedSample: 1}})
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		host    netip.Addr
		outcome model.Outcome
	}
	type tally struct{ attempts, packets int }
	count := func(res *capture.Result) map[key]tally {
		m := map[key]tally{}
		for _, a := range res.Attempts {
			k := key{a.Server.Addr(), a.Outcome}
			m[k] = tally{m[k].attempts + 1, m[k].packets + a.Packets}
		}
		for _, st := range res.Endpoints {
			k := key{st.Server.Addr(), st.Outcome}
			m[k] = tally{m[k].attempts + st.Attempts, m[k].packets + st.Packets}
		}
		return m
	}
	want, got := count(full), count(sum)
	outcomes := map[netip.Addr]int{}
	for k, w := range want {
		outcomes[k.host]++
		if g := got[k]; g != w {
			t.Errorf("%v %s: %d attempts, %d packets; want %d, %d", k.host, k.outcome, g.attempts, g.packets, w.attempts, w.packets)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d host and outcome pairs, want %d", len(got), len(want))
	}
	clients := map[netip.AddrPort]map[netip.Addr]bool{}
	for _, a := range full.Attempts {
		if a.Outcome == model.OutcomeEstablished {
			if clients[a.Server] == nil {
				clients[a.Server] = map[netip.Addr]bool{}
			}
			clients[a.Server][a.Client.Addr()] = true
		}
	}
	established := 0
	for _, st := range sum.Endpoints {
		if st.Outcome == model.OutcomeEstablished {
			established++
			if st.Clients != len(clients[st.Server]) {
				t.Errorf("%v established: %d clients, want %d", st.Server, st.Clients, len(clients[st.Server]))
			}
		}
	}
	several := 0
	for _, n := range outcomes {
		if n > 1 {
			several++
		}
	}
	if several < 2 || established < 2 {
		t.Fatalf("%d hosts with several outcomes, %d servers' established attempts counted: the capture no longer tests the interleaving", several, established)
	}
}
