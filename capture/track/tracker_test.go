package track

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/model"
)

// A 4-tuple used again: ten seconds after a clean close it is still in
// TIME-WAIT; while the first connection is open it is reuse of an open one.
func TestReuse(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	t0 := time.Unix(1700000000, 0)
	tr := NewTracker("r.pcap", Options{})
	frame := 0
	add := func(d time.Duration, src, dst netip.AddrPort, flags uint8, seq uint32) {
		frame++
		tr.Add(&decode.Packet{Pos: model.Pos{Frame: frame}, Time: t0.Add(d), Proto: "tcp", Src: src, Dst: dst, Flags: flags, Seq: seq})
	}
	add(0, c, s, decode.SYN, 100)
	add(1*time.Millisecond, s, c, decode.SYN|decode.ACK, 500)
	add(2*time.Millisecond, c, s, decode.ACK, 101)
	add(3*time.Millisecond, c, s, decode.FIN|decode.ACK, 101)
	add(4*time.Millisecond, s, c, decode.FIN|decode.ACK, 501)
	add(5*time.Millisecond, c, s, decode.ACK, 102)
	add(10*time.Second, c, s, decode.SYN, 9000)                  // again, within TIME-WAIT
	add(10*time.Second+time.Millisecond, c, s, decode.SYN, 9500) // again, the previous one never closed
	res := tr.Finish()
	var got []string
	for _, a := range res.Attempts {
		got = append(got, a.Reused)
	}
	if fmt.Sprint(got) != "[ time-wait open]" {
		t.Errorf("reuse %q", got)
	}
}

// A connection left open does not hold back the finalization of the
// connections that close after it: memory follows the live connections.
func TestLingerLists(t *testing.T) {
	srv := netip.MustParseAddrPort("10.0.0.2:80")
	t0 := time.Unix(1700000000, 0)
	tr := NewTracker("l.pcap", Options{Summary: Summary{Enabled: true}})
	frame := 0
	add := func(d time.Duration, src, dst netip.AddrPort, flags uint8, seq uint32) {
		frame++
		tr.Add(&decode.Packet{Pos: model.Pos{Frame: frame}, Time: t0.Add(d), Proto: "tcp", Src: src, Dst: dst, Flags: flags, Seq: seq})
	}
	open := netip.MustParseAddrPort("10.0.0.1:1000")
	add(0, open, srv, decode.SYN, 1)
	add(time.Millisecond, srv, open, decode.SYN|decode.ACK, 1)
	add(2*time.Millisecond, open, srv, decode.ACK, 2)
	// Five closed connections a second for ten minutes.
	for i := range 3000 {
		c := netip.AddrPortFrom(netip.MustParseAddr("10.0.1.1"), uint16(20000+i))
		d := time.Duration(i) * 200 * time.Millisecond
		add(d, c, srv, decode.SYN, 100)
		add(d+time.Millisecond, srv, c, decode.SYN|decode.ACK, 500)
		add(d+2*time.Millisecond, c, srv, decode.ACK, 101)
		add(d+3*time.Millisecond, c, srv, decode.FIN|decode.ACK, 101)
		add(d+4*time.Millisecond, srv, c, decode.FIN|decode.ACK, 501)
		add(d+5*time.Millisecond, c, srv, decode.ACK, 102)
	}
	// Sweeps run every sweepEvery packets: by the end only the open
	// connection and the last two minutes' closed ones (plus at most a
	// sweep interval's worth) are live.
	if live := tr.live(); live > 1+600+sweepEvery/6+1 || live < 500 {
		t.Errorf("%d streams live after ten minutes, want the open one and about two minutes' closed ones", live)
	}
	if k := keyOf(open, srv); tr.shards[tr.shardOf(hashKey(&k))].streams.get(&k, hashKey(&k)) == nil {
		t.Errorf("the open connection was finalized before its idle linger")
	}
	res := tr.Finish()
	if len(res.Endpoints) != 1 || res.Endpoints[0].Attempts != 3001 {
		t.Errorf("endpoints %+v, want 3001 attempts folded", res.Endpoints)
	}
}

// An ARP frame whose hardware address length does not fit its hardware
// type claims nothing, but still counts, gratuitous or not, as tshark
// counts it.
func TestARPHardwareLength(t *testing.T) {
	arp := func(htype uint16, hlen uint8, spa, tpa [4]byte) []byte {
		b := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06}
		b = append(b, byte(htype>>8), byte(htype), 0x08, 0x00, hlen, 4, 0, 1)
		sha := make([]byte, hlen)
		for i := range sha {
			sha[i] = byte(i + 1)
		}
		b = append(b, sha...)
		b = append(b, spa[:]...)
		b = append(b, make([]byte, hlen)...)
		return append(b, tpa[:]...)
	}
	ip1, ip2 := [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
	for _, c := range []struct {
		name       string
		frame      []byte
		mac        string // "" when no claim
		gratuitous bool
	}{
		{"ethernet", arp(1, 6, ip1, ip2), "01:02:03:04:05:06", false},
		{"ethernet, 8-byte addresses", arp(1, 8, ip1, ip2), "", false},
		{"ethernet, 8-byte addresses, gratuitous", arp(1, 8, ip1, ip1), "", true},
		{"infiniband", arp(32, 20, ip1, ip1), "01:02:03:04:05:06:07:08:09:0a:0b:0c:0d:0e:0f:10:11:12:13:14", true},
	} {
		var d decode.Decoder
		var p decode.Packet
		if err := d.Decode(layers.LinkTypeEthernet, c.frame, 0, &p); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		tr := NewTracker("a.pcap", Options{})
		tr.Add(&p)
		res := tr.Finish()
		if res.Info.Counts.ARP != 1 || (res.Info.Counts.ARPGratuitous == 1) != c.gratuitous {
			t.Errorf("%s: counts %+v", c.name, res.Info.Counts)
		}
		switch {
		case c.mac == "" && len(res.ARP) != 0:
			t.Errorf("%s: claims %+v", c.name, res.ARP)
		case c.mac != "" && (len(res.ARP) != 1 || res.ARP[0].MAC != c.mac):
			t.Errorf("%s: claims %+v, want %s", c.name, res.ARP, c.mac)
		}
	}
}
