package track

import (
	"net/netip"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/model"
)

// Once a connection is tracked, its packets cost no allocation: not in the
// shard's table and stream, not in the tracker's settling, with or
// without summary mode.
func TestHotPathAllocs(t *testing.T) {
	for _, summary := range []bool{false, true} {
		tr := NewTracker("c.pcap", Options{Summary: Summary{Enabled: summary}})
		cli, srv := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		frame := 0
		add := func(src, dst netip.AddrPort, flags uint8, seq, ack uint32, payload int) {
			frame++
			at = at.Add(time.Millisecond)
			p := decode.Packet{Pos: posFrame(frame), Time: at, Proto: "tcp", Src: src, Dst: dst, Flags: flags, Seq: seq, Ack: ack, Payload: payload}
			tr.Add(&p)
		}
		add(cli, srv, decode.SYN, 100, 0, 0)
		add(srv, cli, decode.SYN|decode.ACK, 500, 101, 0)
		add(cli, srv, decode.ACK, 101, 501, 0)
		seq, rseq := uint32(101), uint32(501)
		allocs := testing.AllocsPerRun(2000, func() {
			add(cli, srv, decode.PSH|decode.ACK, seq, rseq, 100)
			seq += 100
			add(srv, cli, decode.ACK, rseq, seq, 0)
		})
		if allocs != 0 {
			t.Errorf("summary %v: %.2f allocations per pair of packets of a tracked connection", summary, allocs)
		}
		if res := tr.Finish(); res.Info.Counts.TCPPackets < 4000 || res.Info.Counts.TCPStreams != 1 {
			t.Errorf("summary %v: counts %+v", summary, res.Info.Counts)
		}
	}
}

func posFrame(n int) (p model.Pos) {
	p.Frame = n
	return p
}
