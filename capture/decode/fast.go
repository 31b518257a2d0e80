package decode

import (
	"encoding/binary"
	"net/netip"

	"github.com/gopacket/gopacket/layers"
)

// The hot path reads the fixed IPv4, IPv6 and UDP headers straight from the
// frame instead of through gopacket's layers. Each reader handles only the
// common, well-formed case and reports false for anything else (IPv4
// options or fragments, a zero IPv4 length, an IPv6 jumbogram, a malformed
// header), which then goes through gopacket as
// before, so that a frame decodes to the same Packet and the same error on
// either path. FuzzFastDecode holds the two paths equal.

// fastIPv4 reads an IPv4 header without options that is not a fragment:
// its addresses, protocol and payload, trimmed to the total length as
// layers.IPv4 trims it.
func fastIPv4(data []byte) (ipLoad, bool) {
	if len(data) < 20 || data[0]&0x0f != 5 {
		return ipLoad{}, false
	}
	length := int(binary.BigEndian.Uint16(data[2:4]))
	if length < 20 {
		return ipLoad{}, false // zero (TSO) or too small: gopacket's handling
	}
	if flagsfrag := binary.BigEndian.Uint16(data[6:8]); flagsfrag&0x1fff != 0 || flagsfrag&(uint16(layers.IPv4MoreFragments)<<13) != 0 {
		return ipLoad{}, false // a fragment, for the defragmenter
	}
	if len(data) > length {
		data = data[:length]
	}
	return ipLoad{
		src:      netip.AddrFrom4([4]byte(data[12:16])),
		dst:      netip.AddrFrom4([4]byte(data[16:20])),
		proto:    layers.IPProtocol(data[9]),
		data:     data[20:],
		reported: length - 20,
	}, true
}

// fastIPv6 reads an IPv6 fixed header and a hop-by-hop options header
// after it: the addresses, the next header and the payload, trimmed to the
// payload length as layers.IPv6 trims it. The other extension headers are
// walked by ipv6.
func fastIPv6(data []byte) (ipLoad, bool) {
	if len(data) < 40 {
		return ipLoad{}, false
	}
	length := int(binary.BigEndian.Uint16(data[4:6]))
	if length == 0 {
		return ipLoad{}, false // a jumbogram: gopacket's handling
	}
	l := ipLoad{
		src:      netip.AddrFrom16([16]byte(data[8:24])),
		dst:      netip.AddrFrom16([16]byte(data[24:40])),
		proto:    layers.IPProtocol(data[6]),
		data:     data[40:],
		reported: length,
	}
	if length < len(l.data) {
		l.data = l.data[:length]
	}
	if l.proto == layers.IPProtocolIPv6HopByHop {
		n, ok := hopByHopLen(l.data)
		if !ok {
			return ipLoad{}, false
		}
		l.proto, l.data, l.reported = layers.IPProtocol(l.data[0]), l.data[n:], l.reported-n
	}
	return l, true
}

// hopByHopLen returns the length of a hop-by-hop options header whose
// options are all well formed and none of them a jumbo payload length
// (which layers.IPv6 checks against the IPv6 length).
func hopByHopLen(b []byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	n := int(b[1])*8 + 8
	if len(b) < n {
		return 0, false
	}
	for i := 2; i < n; {
		switch b[i] {
		case 0: // Pad1
			i++
			continue
		case byte(layers.IPv6HopByHopOptionJumbogram):
			return 0, false
		}
		if i+2 > n || i+2+int(b[i+1]) > n {
			return 0, false
		}
		i += 2 + int(b[i+1])
	}
	return n, true
}

// fastUDP reads a UDP header: the ports and the payload, cut to the UDP
// length as layers.UDP cuts it (a zero length, a jumbogram, keeps all).
func fastUDP(data []byte) (src, dst uint16, payload []byte, ok bool) {
	if len(data) < 8 {
		return 0, 0, nil, false
	}
	n := int(binary.BigEndian.Uint16(data[4:6]))
	switch {
	case n >= 8:
		payload = data[8:min(n, len(data))]
	case n == 0:
		payload = data[8:]
	default:
		return 0, 0, nil, false
	}
	return binary.BigEndian.Uint16(data[0:2]), binary.BigEndian.Uint16(data[2:4]), payload, true
}
