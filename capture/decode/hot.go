package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket/layers"
)

// HotTCP is the fast path of capture reading: it fills g's 4-tuple, hash
// and TCP fields straight from a frame that is a plain TCP segment (Ethernet
// with up to two VLAN tags, Linux SLL or SLL2, or raw IP; IPv4 without
// options that is not a fragment, or IPv6 with hop-by-hop, routing and
// destination options headers), and reports false for any other frame,
// which then goes through Decoder.Decode. On the frames it takes, it gives
// what Decode and Segment.Set give (FuzzHotTCP holds them equal). cut is
// how many bytes the frame had on the wire past those captured, as
// Decoder.Decode takes it.
func HotTCP(link layers.LinkType, b []byte, cut int, g *Segment) bool {
	if link == layers.LinkTypeEthernet && len(b) >= 54 {
		if ok, done := hotEthIPv4(b, cut, g); done {
			return ok
		}
	}
	var typ uint16
	switch link {
	case layers.LinkTypeEthernet:
		if len(b) < 14 {
			return false
		}
		typ, b = binary.BigEndian.Uint16(b[12:14]), b[14:]
		for range 2 {
			if typ != uint16(layers.EthernetTypeDot1Q) && typ != uint16(layers.EthernetTypeQinQ) && typ != 0x9100 {
				break
			}
			if len(b) < 4 {
				return false
			}
			typ, b = binary.BigEndian.Uint16(b[2:4]), b[4:]
		}
	case layers.LinkTypeLinuxSLL:
		if len(b) < 16 {
			return false
		}
		typ, b = binary.BigEndian.Uint16(b[14:16]), b[16:]
	case layers.LinkTypeLinuxSLL2:
		if len(b) < 20 {
			return false
		}
		typ, b = binary.BigEndian.Uint16(b[0:2]), b[20:]
	case layers.LinkTypeRaw, 12, 14, layers.LinkTypeIPv4, layers.LinkTypeIPv6:
		if len(b) == 0 {
			return false
		}
		switch b[0] >> 4 {
		case 4:
			typ = uint16(layers.EthernetTypeIPv4)
		case 6:
			typ = uint16(layers.EthernetTypeIPv6)
		}
	}
	switch typ {
	case uint16(layers.EthernetTypeIPv4):
		return hotIPv4(b, cut, g)
	case uint16(layers.EthernetTypeIPv6):
		return hotIPv6(b, cut, g)
	}
	return false
}

// HotEthIPv4 is HotTCP for a link type of Ethernet and the commonest
// frame: an IPv4 TCP segment with no VLAN tag, IP options or
// fragmentation, at least 54 bytes captured and an IP length of at least
// 40. It reports false for any other frame, which HotTCP may still read.
func HotEthIPv4(b []byte, cut int, g *Segment) bool {
	if len(b) < 54 {
		return false
	}
	ok, _ := hotEthIPv4(b, cut, g)
	return ok
}

// hotEthIPv4 is HotTCP for the frames most captures hold, their link and
// IP headers read in one go: Ethernet without VLAN tags, IPv4 without
// options that is not a fragment, and 20 bytes of TCP header or more,
// captured, which hotTCPHeader reads as for any frame. done is false for
// any other frame, which HotTCP reads a header at a time. b holds at
// least 54 bytes.
func hotEthIPv4(b []byte, cut int, g *Segment) (ok, done bool) {
	p := (*[54]byte)(b)
	if p[12] != 0x08 || p[13] != 0x00 || p[14] != 0x45 || p[23] != uint8(layers.IPProtocolTCP) {
		return false, false
	}
	length := int(p[16])<<8 | int(p[17])
	if length < 40 || (p[20]&0x3f != 0 || p[21] != 0) {
		return false, false // as hotIPv4: a fragment; or a short TCP header
	}
	captured := min(len(b), 14+length) - 34 // TCP bytes, at least 20
	be := binary.BigEndian
	g.setKey4(be.Uint32(p[26:30]), be.Uint32(p[30:34]), be.Uint16(p[34:36]), be.Uint16(p[36:38]))
	hotTCPHeader(b[34:34+captured], min(length-20, captured+cut), g)
	return true, true
}

// hotIPv4 is HotTCP past the link header for IPv4: the header fastIPv4
// reads, carrying TCP.
func hotIPv4(b []byte, cut int, g *Segment) bool {
	if len(b) < 20 || b[0]&0x0f != 5 || b[9] != uint8(layers.IPProtocolTCP) {
		return false
	}
	length := int(binary.BigEndian.Uint16(b[2:4]))
	if length < 20 || binary.BigEndian.Uint16(b[6:8])&0x3fff != 0 {
		return false // as fastIPv4: a zero or short length, a fragment
	}
	if len(b) > length {
		b = b[:length]
	}
	t := b[20:]
	if len(t) < 14 {
		return false
	}
	sport, dport := binary.BigEndian.Uint16(t[0:2]), binary.BigEndian.Uint16(t[2:4])
	g.setKey4(binary.BigEndian.Uint32(b[12:16]), binary.BigEndian.Uint32(b[16:20]), sport, dport)
	hotTCPHeader(t, min(length-20, len(t)+cut), g)
	return true
}

// hotIPv6 is HotTCP past the link header for IPv6: the headers fastIPv6
// and Decoder.ipv6 walk, but for fragment and authentication headers,
// ending in TCP.
func hotIPv6(b []byte, cut int, g *Segment) bool {
	if len(b) < 40 {
		return false
	}
	length := int(binary.BigEndian.Uint16(b[4:6]))
	if length == 0 {
		return false // a jumbogram
	}
	next, t, reported := layers.IPProtocol(b[6]), b[40:], length
	if length < len(t) {
		t = t[:length]
	}
	if next == layers.IPProtocolIPv6HopByHop {
		n, ok := hopByHopLen(t)
		if !ok {
			return false
		}
		next, t, reported = layers.IPProtocol(t[0]), t[n:], reported-n
	}
	for range 8 {
		if next != layers.IPProtocolIPv6HopByHop && next != layers.IPProtocolIPv6Routing && next != layers.IPProtocolIPv6Destination {
			break
		}
		if len(t) < 8 {
			return false
		}
		n := 8 + int(t[1])*8
		if len(t) < n {
			return false
		}
		next, t, reported = layers.IPProtocol(t[0]), t[n:], reported-n
	}
	if next != layers.IPProtocolTCP || len(t) < 14 {
		return false
	}
	sport, dport := binary.BigEndian.Uint16(t[0:2]), binary.BigEndian.Uint16(t[2:4])
	g.setKey6(b[8:24], b[24:40], sport, dport)
	hotTCPHeader(t, min(reported, len(t)+cut), g)
	return true
}

// hotTCPHeader reads the TCP header fields into g as Decoder.transport
// reads them into a Packet; b holds at least 14 bytes.
func hotTCPHeader(b []byte, reported int, g *Segment) {
	h := (*[14]byte)(b) // one bounds check for the fields below
	g.Seq = binary.BigEndian.Uint32(h[4:8])
	g.Ack = binary.BigEndian.Uint32(h[8:12])
	g.Flags = h[13]
	hlen := int(h[12]>>4) * 4
	g.Payload = int32(max(reported-hlen, 0))
	g.Short = len(b) < 20 || reported < hlen
	g.MSS = 0
	if g.Flags&SYN != 0 && hlen > 20 && len(b) >= hlen {
		g.MSS = tcpMSS(b[20:hlen])
	}
}
