package decode

import (
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
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
		var d Decoder
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
	var d Decoder
	var p Packet
	if err := d.decode(layers.LinkTypeEthernet, outer(t, layers.IPProtocolUDP, []byte("not vxlan at all, just bytes"), portVXLAN), &p); err != nil || p.Proto != "udp" || p.Outer != nil {
		t.Errorf("plain UDP: %v %s %v", err, p.Proto, p.Outer)
	}
}
