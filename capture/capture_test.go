package capture_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

func readFixture(t testing.TB, rel string) (*capture.Result, error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", rel))
	if err != nil {
		t.Fatal(err)
	}
	return capture.Read(context.Background(), bytes.NewReader(b), rel, capture.Options{Node: "node1"})
}

// The seed-002 incident reproduced in network namespaces: two probes from
// source ports that are NodePorts get their SYN/ACKs reset, three times each.
func TestIncidentAttempts(t *testing.T) {
	res, err := readFixture(t, "incidents/ephemeral-nodeport/capture.pcap")
	if err != nil {
		t.Fatal(err)
	}
	if res.Info.Format != "pcap" || res.Info.LinkType != "Linux SLL2" {
		t.Errorf("format %q link %q, want pcap, Linux SLL2 (tcpdump -i any)", res.Info.Format, res.Info.LinkType)
	}
	var reset []model.Attempt
	for _, a := range res.Attempts {
		if a.Node != "node1" || a.Pos.File != "incidents/ephemeral-nodeport/capture.pcap" {
			t.Fatalf("attempt %+v: node or file not set", a.Pos)
		}
		if a.Outcome == model.OutcomeSynAckClientRST {
			reset = append(reset, a)
		}
	}
	if len(reset) != 2 {
		t.Fatalf("%d attempts reset after SYN/ACK, want 2", len(reset))
	}
	for i, port := range []uint16{36704, 32080} {
		a := reset[i]
		if a.Client.Port() != port || a.Server.String() != "10.23.77.138:80" {
			t.Errorf("reset attempt %d: %s -> %s, want port %d -> 10.23.77.138:80", i, a.Client, a.Server, port)
		}
		if len(a.SYN) != 3 || len(a.SYNACK) != 3 || len(a.ClientRST) != 3 || a.SYNRetransmissions() != 2 {
			t.Errorf("reset attempt %d: %d SYN, %d SYN/ACK, %d RST, want 3 each", i, len(a.SYN), len(a.SYNACK), len(a.ClientRST))
		}
		for j := range a.SYNACK {
			if !(a.SYN[j].Frame < a.SYNACK[j].Frame && a.SYNACK[j].Frame < a.ClientRST[j].Frame) {
				t.Errorf("reset attempt %d round %d: frames SYN %d SYN/ACK %d RST %d out of order", i, j, a.SYN[j].Frame, a.SYNACK[j].Frame, a.ClientRST[j].Frame)
			}
		}
		if a.ConnState != "RSTO" || a.History != "ShR" {
			t.Errorf("reset attempt %d: conn_state %s history %s, want RSTO ShR", i, a.ConnState, a.History)
		}
		if d, ok := a.TimeToSYNACK(); !ok || d <= 0 {
			t.Errorf("reset attempt %d: time to SYN/ACK %v %v", i, d, ok)
		}
	}
}

func TestHandshakesICMP(t *testing.T) {
	res, err := readFixture(t, "captures/handshakes.pcap")
	if err != nil {
		t.Fatal(err)
	}
	var what []string
	for _, ev := range res.ICMP {
		if ev.QuotedProto != "tcp" || ev.AttemptFrame == 0 {
			t.Errorf("%s: %s quotes %s %v, attempt frame %d", ev.Pos, ev.What, ev.QuotedProto, ev.Quoted, ev.AttemptFrame)
		}
		what = append(what, fmt.Sprintf("%s %d", ev.What, ev.Quoted.Dst.Port()))
	}
	want := []string{"port-unreachable 84", "host-unreachable 85", "admin-prohibited 86"}
	if fmt.Sprint(what) != fmt.Sprint(want) {
		t.Errorf("ICMP events %v, want %v", what, want)
	}
	states := map[string]string{}
	for _, a := range res.Attempts {
		states[fmt.Sprint(a.Server.Port())] = a.ConnState
	}
	for port, st := range map[string]string{"80": "SF", "81": "REJ", "82": "S0", "83": "RSTO", "8081": "REJ"} {
		if states[port] != st {
			t.Errorf("attempt to port %s: conn_state %q, want %q", port, states[port], st)
		}
	}
}

func TestContainersGiveSameAttempts(t *testing.T) {
	base, err := readFixture(t, "captures/handshakes.pcap")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"handshakes.pcap.gz", "handshakes.pcapng", "handshakes-nsec.pcap"} {
		res, err := readFixture(t, "captures/"+f)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Attempts) != len(base.Attempts) {
			t.Fatalf("%s: %d attempts, pcap has %d", f, len(res.Attempts), len(base.Attempts))
		}
		for i := range res.Attempts {
			a, b := res.Attempts[i], base.Attempts[i]
			if a.Client != b.Client || a.Outcome != b.Outcome || !a.Start.Equal(b.Start) || a.Pos.Frame != b.Pos.Frame {
				t.Errorf("%s attempt %d: %s %s %v, pcap %s %s %v", f, i, a.Client, a.Outcome, a.Start, b.Client, b.Outcome, b.Start)
			}
		}
	}
}

func TestARPClaims(t *testing.T) {
	res, err := readFixture(t, "captures/arp.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	macs := map[string]bool{}
	for _, ev := range res.ARP {
		if ev.IP.String() == "192.168.200.99" && (ev.Op == "reply" || ev.Gratuitous) {
			macs[ev.MAC] = true
		}
	}
	if len(macs) != 2 || !macs["02:00:00:00:0a:01"] || !macs["02:00:00:00:0b:01"] {
		t.Errorf("MACs claiming 192.168.200.99: %v, want both nodes' MACs", macs)
	}
}

func TestVXLANInnerFlows(t *testing.T) {
	res, err := readFixture(t, "captures/vxlan.pcap")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Attempts {
		if a.Outer == nil || a.Outer.Src.Addr().String() != "192.168.77.1" {
			t.Errorf("%s -> %s: outer %v, want the underlay 192.168.77.1", a.Client, a.Server, a.Outer)
		}
		if p := a.Outer.Dst.Port(); p != 4789 && p != 8472 {
			t.Errorf("%s -> %s: outer port %d", a.Client, a.Server, p)
		}
	}
}

func TestNotCapture(t *testing.T) {
	res, err := capture.Read(context.Background(), bytes.NewReader([]byte("net.ipv4.ip_forward = 1\n")), "sysctl.txt", capture.Options{})
	if res != nil || !errors.Is(err, capture.ErrNotCapture) {
		t.Fatalf("got %v, %v; want ErrNotCapture", res, err)
	}
}

func TestTruncatedCapture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/captures/handshakes.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	cut := b[:len(b)-30]
	res, err := capture.Read(context.Background(), bytes.NewReader(cut), "cut.pcap", capture.Options{})
	if res == nil || err == nil {
		t.Fatalf("got %v, %v; want the packets before the cut and an error", res, err)
	}
	var list model.ErrorList
	if !errors.As(err, &list) || list[0].Pos.Frame != res.Info.Packets+1 {
		t.Errorf("error %v: want one at frame %d", err, res.Info.Packets+1)
	}
}

// A read whose context ends keeps what it read before: the Result of the
// frames before the one it stopped at, and an error there that says so.
func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Cancellation is checked every few thousand frames; build enough.
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/captures/handshakes.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	big := append([]byte(nil), b...)
	for len(big) < 2<<20 {
		big = append(big, b[24:]...)
	}
	res, err := capture.Read(ctx, bytes.NewReader(big), "big.pcap", capture.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	cutAt(t, res, err)
}

// cutAt checks that res, a read cut short, holds packets, and that err
// names the frame after its last as the first not read.
func cutAt(t *testing.T, res *capture.Result, err error) {
	t.Helper()
	if res == nil || res.Info.Packets == 0 || len(res.Attempts) == 0 {
		t.Fatalf("result %v: want what was read before the cut", res)
	}
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Frame != res.Info.Packets+1 ||
		!strings.Contains(list[0].Error(), "not read from here on, what came before kept") {
		t.Errorf("error %v: want one at frame %d", err, res.Info.Packets+1)
	}
}

// A read whose reader stops as its context ends (as the CLI's readers do
// on Ctrl-C) is cut short: it is not a truncated or corrupt record, and
// what came before is kept.
func TestCanceledReader(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/captures/handshakes.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &testutil.CancelingReader{R: bytes.NewReader(b), Left: len(b) / 2, Ctx: ctx, Cancel: cancel}
	res, err := capture.Read(ctx, r, "cut.pcap", capture.Options{})
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("err %v, want context.Canceled alone", err)
	}
	cutAt(t, res, err)
}

func FuzzRead(f *testing.F) {
	for _, p := range []string{"captures/handshakes.pcap", "captures/arp.pcapng", "captures/vxlan.pcap", "incidents/ephemeral-nodeport/capture.pcap"} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", p))
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 4096 {
			b = b[:4096]
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := capture.Read(context.Background(), bytes.NewReader(b), "fuzz.pcap", capture.Options{})
		if res == nil && err == nil {
			t.Fatal("nil result without an error")
		}
		if res != nil && len(res.Attempts) != res.Info.Counts.TCPStreams {
			t.Fatalf("%d attempts but %d streams", len(res.Attempts), res.Info.Counts.TCPStreams)
		}
	})
}

func BenchmarkRead(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/captures/handshakes.pcap"))
	if err != nil {
		b.Fatal(err)
	}
	// Repeat the packets so that a run reads about 4 MB.
	big := append([]byte(nil), data...)
	for len(big) < 4<<20 {
		big = append(big, data[24:]...)
	}
	b.SetBytes(int64(len(big)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := capture.Read(context.Background(), bytes.NewReader(big), "bench.pcap", capture.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// In summary mode the attempts that ended normally become per-server
// counters; the failures and the counts stay the same.
func TestSummarize(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/incidents/ephemeral-nodeport/capture.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	full, err := capture.Read(context.Background(), bytes.NewReader(b), "c.pcap", capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := capture.Read(context.Background(), bytes.NewReader(b), "c.pcap", capture.Options{Summary: capture.Summary{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Info.Counts != full.Info.Counts {
		t.Errorf("counts differ:\n%+v\n%+v", sum.Info.Counts, full.Info.Counts)
	}
	if len(sum.Attempts) != 2 || sum.Attempts[0].Client.Port() != 36704 || sum.Attempts[1].Client.Port() != 32080 {
		t.Fatalf("kept %d attempts, want the 2 reset ones: %+v", len(sum.Attempts), sum.Attempts)
	}
	if len(sum.Endpoints) != 1 {
		t.Fatalf("endpoints %+v", sum.Endpoints)
	}
	ep := sum.Endpoints[0]
	if ep.Server.String() != "10.23.77.138:80" || ep.Attempts != 6 || ep.Clients != 1 || ep.MedianSYNACK <= 0 || ep.Packets != 92-18 {
		t.Errorf("endpoint %+v", ep)
	}
	if len(ep.ClientAddrs) != 1 || ep.ClientAddrs[0] != full.Attempts[0].Client.Addr() {
		t.Errorf("client addresses %v, want the one client %v", ep.ClientAddrs, full.Attempts[0].Client.Addr())
	}
}

// splitPcap cuts a classic pcap after record n into two files, as tcpdump
// -C rotates them.
func splitPcap(t *testing.T, b []byte, n int) ([]byte, []byte) {
	t.Helper()
	off := 24
	for i := 0; i < n; i++ {
		caplen := int(b[off+8]) | int(b[off+9])<<8 | int(b[off+10])<<16 | int(b[off+11])<<24
		off += 16 + caplen
	}
	first := append([]byte(nil), b[:off]...)
	second := append(append([]byte(nil), b[:24]...), b[off:]...)
	return first, second
}

func TestReadSeries(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/captures/handshakes.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := capture.Read(context.Background(), bytes.NewReader(b), "h.pcap", capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside the first connection, after its request.
	cut := whole.Attempts[0].Pos.Frame + 4
	one, two := splitPcap(t, b, cut)
	open := func(b []byte) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	res, infos, err := capture.ReadSeries(context.Background(), []capture.SeriesFile{{Name: "h.pcap", Open: open(one)}, {Name: "h.pcap1", Open: open(two)}}, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Info.Counts != whole.Info.Counts {
		t.Errorf("series counts\n%+v\nwhole\n%+v", res.Info.Counts, whole.Info.Counts)
	}
	if len(infos) != 2 || infos[0].Packets != cut || infos[1].Packets != whole.Info.Packets-cut {
		t.Errorf("per-file infos %+v", infos)
	}
	if len(res.Attempts) != len(whole.Attempts) {
		t.Fatalf("%d attempts, whole file %d", len(res.Attempts), len(whole.Attempts))
	}
	a := res.Attempts[0]
	if a.Outcome != whole.Attempts[0].Outcome || a.ClientFIN == nil || a.ClientFIN.File != "h.pcap1" ||
		a.SegPos(*a.ClientFIN).String() != fmt.Sprintf("h.pcap1#frame=%d", whole.Attempts[0].ClientFIN.Frame-cut) {
		t.Errorf("attempt across the cut: %+v FIN %+v", a, a.ClientFIN)
	}
	if a.SYN[0].File != "" || a.Pos.File != "h.pcap" {
		t.Errorf("first file's segments must not repeat their file: %+v", a.SYN[0])
	}
	// Read apart, the same files split that connection in two.
	r2, _ := capture.Read(context.Background(), bytes.NewReader(two), "h.pcap1", capture.Options{})
	if r2.Attempts[0].Outcome != model.OutcomeMidstream {
		t.Errorf("second file alone starts with %s", r2.Attempts[0].Outcome)
	}
}

// The real kernel's fragmentation-needed and Packet Too Big errors
// (fixtures/make-fixtures.sh, mtu-blackhole-control: a router whose link
// carries 1400 bytes) give that MTU.
func TestICMPMTU(t *testing.T) {
	res, err := readFixture(t, "incidents/mtu-blackhole-control/capture.pcap")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range res.ICMP {
		if e.What == "frag-needed" || e.What == "packet-too-big" {
			n++
			if e.MTU != 1400 {
				t.Errorf("%s %s: mtu %d, want 1400", e.Pos, e.What, e.MTU)
			}
		}
	}
	if n == 0 {
		t.Error("no fragmentation-needed or Packet Too Big error")
	}
}

// A capture read to its end is not stopped, whatever its context says
// then: one of exactly 4,095 records, the context checked before the
// 4,096th, which there is not, ends whole; one of 20,000 is stopped.
func TestCanceledAtTheEnd(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/captures/handshakes.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]byte // the fixture's records, repeated below
	for off := 24; off < len(b); {
		n := 16 + int(binary.LittleEndian.Uint32(b[off+8:]))
		recs = append(recs, b[off:off+n])
		off += n
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, n := range []int{4095, 20000} {
		data := slices.Clone(b[:24])
		for i := range n {
			data = append(data, recs[i%len(recs)]...)
		}
		res, err := capture.Read(ctx, bytes.NewReader(data), "exact.pcap", capture.Options{})
		if res == nil {
			t.Fatalf("%d records: no result, %v", n, err)
		}
		switch got := res.Info.Packets; {
		case n == 4095 && (got != n || err != nil):
			t.Errorf("%d records: %d read, error %v; want all, none", n, got, err)
		case n > 4095 && got >= n:
			t.Errorf("%d records: %d read, not stopped", n, got)
		case n > 4095:
			cutAt(t, res, err)
		}
	}
}
