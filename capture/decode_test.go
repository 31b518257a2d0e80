package capture

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/model"
)

// frame serializes layers into one frame.
func frame(t *testing.T, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func innerSYN(t *testing.T, withEthernet bool) []byte {
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IP{10, 244, 1, 5}, DstIP: net.IP{10, 244, 2, 7}}
	tcp := &layers.TCP{SrcPort: 40000, DstPort: 8080, SYN: true, Seq: 1000, Window: 64240}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	if withEthernet {
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		return frame(t, eth, ip, tcp)
	}
	return frame(t, ip, tcp)
}

func outer(t *testing.T, proto layers.IPProtocol, payload []byte, udpPort uint16) []byte {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 1, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 1, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: proto, SrcIP: net.IP{192, 168, 77, 1}, DstIP: net.IP{192, 168, 77, 2}}
	if udpPort == 0 {
		return frame(t, eth, ip, gopacket.Payload(payload))
	}
	udp := &layers.UDP{SrcPort: 51000, DstPort: layers.UDPPort(udpPort)}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	return frame(t, eth, ip, udp, gopacket.Payload(payload))
}

// Overlays the kernel of the fixture machine cannot make (Geneve, IP-in-IP,
// GTP-U): frames built byte for byte around a SYN, decoded to the inner
// flow with the outer addresses kept.
func TestOverlayDecode(t *testing.T) {
	geneve := append([]byte{0x00, 0x00, 0x65, 0x58, 0x00, 0x00, 0x2a, 0x00}, innerSYN(t, true)...)                            // no options, Ethernet inside
	geneveOpt := append([]byte{0x01, 0x00, 0x65, 0x58, 0x00, 0x00, 0x2a, 0x00, 0x01, 0x02, 0x80, 0x00}, innerSYN(t, true)...) // one 4-byte option
	gtp := append([]byte{0x30, 0xff, 0x00, 0x28, 0x00, 0x00, 0x00, 0x01}, innerSYN(t, false)...)
	for _, c := range []struct {
		name  string
		frame []byte
	}{
		{"ipip", outer(t, layers.IPProtocolIPv4, innerSYN(t, false), 0)},
		{"geneve", outer(t, layers.IPProtocolUDP, geneve, portGeneve)},
		{"geneve with an option", outer(t, layers.IPProtocolUDP, geneveOpt, portGeneve)},
		{"vxlan", outer(t, layers.IPProtocolUDP, append([]byte{0x08, 0, 0, 0, 0, 0, 0x2a, 0}, innerSYN(t, true)...), portVXLAN)},
		{"gtp-u", outer(t, layers.IPProtocolUDP, gtp, portGTPU)},
	} {
		var d decoder
		var p Packet
		if err := d.decode(layers.LinkTypeEthernet, c.frame, &p); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if p.Proto != "tcp" || p.Src.String() != "10.244.1.5:40000" || p.Dst.String() != "10.244.2.7:8080" || p.Flags != SYN {
			t.Errorf("%s: decoded %s %s -> %s flags %x", c.name, p.Proto, p.Src, p.Dst, p.Flags)
		}
		if p.Outer == nil || p.Outer.Src.Addr().String() != "192.168.77.1" || p.Outer.Dst.Addr().String() != "192.168.77.2" {
			t.Errorf("%s: outer %v", c.name, p.Outer)
		}
	}
	// A UDP packet to 4789 that is not VXLAN stays a UDP packet.
	var d decoder
	var p Packet
	if err := d.decode(layers.LinkTypeEthernet, outer(t, layers.IPProtocolUDP, []byte("not vxlan at all, just bytes"), portVXLAN), &p); err != nil || p.Proto != "udp" || p.Outer != nil {
		t.Errorf("plain UDP: %v %s %v", err, p.Proto, p.Outer)
	}
}

// A 4-tuple used again: ten seconds after a clean close it is still in
// TIME-WAIT; while the first connection is open it is reuse of an open one.
func TestReuse(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	t0 := time.Unix(1700000000, 0)
	tr := NewTracker("r.pcap", Options{})
	frame := 0
	add := func(d time.Duration, src, dst netip.AddrPort, flags uint8, seq uint32) {
		frame++
		tr.Add(&Packet{Pos: model.Pos{Frame: frame}, Time: t0.Add(d), Proto: "tcp", Src: src, Dst: dst, Flags: flags, Seq: seq})
	}
	add(0, c, s, SYN, 100)
	add(1*time.Millisecond, s, c, SYN|ACK, 500)
	add(2*time.Millisecond, c, s, ACK, 101)
	add(3*time.Millisecond, c, s, FIN|ACK, 101)
	add(4*time.Millisecond, s, c, FIN|ACK, 501)
	add(5*time.Millisecond, c, s, ACK, 102)
	add(10*time.Second, c, s, SYN, 9000)                  // again, within TIME-WAIT
	add(10*time.Second+time.Millisecond, c, s, SYN, 9500) // again, the previous one never closed
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
		tr.Add(&Packet{Pos: model.Pos{Frame: frame}, Time: t0.Add(d), Proto: "tcp", Src: src, Dst: dst, Flags: flags, Seq: seq})
	}
	open := netip.MustParseAddrPort("10.0.0.1:1000")
	add(0, open, srv, SYN, 1)
	add(time.Millisecond, srv, open, SYN|ACK, 1)
	add(2*time.Millisecond, open, srv, ACK, 2)
	// Five closed connections a second for ten minutes.
	for i := range 3000 {
		c := netip.AddrPortFrom(netip.MustParseAddr("10.0.1.1"), uint16(20000+i))
		d := time.Duration(i) * 200 * time.Millisecond
		add(d, c, srv, SYN, 100)
		add(d+time.Millisecond, srv, c, SYN|ACK, 500)
		add(d+2*time.Millisecond, c, srv, ACK, 101)
		add(d+3*time.Millisecond, c, srv, FIN|ACK, 101)
		add(d+4*time.Millisecond, srv, c, FIN|ACK, 501)
		add(d+5*time.Millisecond, c, srv, ACK, 102)
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
		var d decoder
		var p Packet
		if err := d.decode(layers.LinkTypeEthernet, c.frame, &p); err != nil {
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
