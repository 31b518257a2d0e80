package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/model"
)

// overlayUDP decodes the inner packet of VXLAN and Geneve.
func (d *Decoder) overlayUDP(port uint16, b []byte, p *Packet, depth int) error {
	switch port {
	case portVXLAN, portVXLANFlannel:
		// Flags: I set, the other bits clear but G (group policy); the
		// last reserved byte zero.
		if len(b) < 8+14 || b[0]&0x08 == 0 || b[0]&0x77 != 0 || b[7] != 0 {
			return nil
		}
		outer := model.Tuple{Src: p.Src, Dst: p.Dst}
		typ, payload, err := etherHeader(b[8:])
		if err != nil || !innerEtherType(typ) {
			return nil // not VXLAN after all: stays a UDP packet
		}
		p.Outer = &outer
		return d.ether(typ, payload, p, depth+1)
	case portGTPU:
		// GTP-U G-PDU: version 1, message type 255, optional fields and
		// extension headers, then an IP packet.
		if len(b) < 8 || b[0]>>5 != 1 || b[1] != 0xff {
			return nil
		}
		n := 8
		if b[0]&0x07 != 0 {
			n = 12
			if len(b) < n {
				return nil
			}
			for next := b[11]; b[0]&0x04 != 0 && next != 0; {
				if len(b) < n+1 || b[n] == 0 || len(b) < n+int(b[n])*4 {
					return nil
				}
				l := int(b[n]) * 4
				next = b[n+l-1]
				n += l
			}
		}
		p.Outer = &model.Tuple{Src: p.Src, Dst: p.Dst}
		return d.rawIP(b[n:], p, depth+1)
	case portGeneve:
		if len(b) < 8 || b[0]>>6 != 0 {
			return nil
		}
		n := 8 + int(b[0]&0x3f)*4
		if len(b) < n {
			return nil
		}
		outer := model.Tuple{Src: p.Src, Dst: p.Dst}
		typ := layers.EthernetType(binary.BigEndian.Uint16(b[2:4]))
		inner := b[n:]
		p.Outer = &outer
		if typ == 0x6558 { // transparent Ethernet bridging
			typ, payload, err := etherHeader(inner)
			if err != nil {
				return err
			}
			return d.ether(typ, payload, p, depth+1)
		}
		return d.ether(typ, inner, p, depth+1)
	}
	return nil
}

// innerEtherType reports whether an encapsulated frame's EtherType is one
// an overlay carries.
func innerEtherType(t layers.EthernetType) bool {
	switch t {
	case layers.EthernetTypeIPv4, layers.EthernetTypeIPv6, layers.EthernetTypeARP, layers.EthernetTypeDot1Q:
		return true
	}
	return false
}

// mpls skips an MPLS label stack and decodes what it carries: IPv4 or IPv6
// by their version nibble, else an Ethernet pseudowire (with its control
// word when the first nibble is 0).
func (d *Decoder) mpls(b []byte, p *Packet, depth int) error {
	for {
		if len(b) < 4 {
			return errShort
		}
		bottom := b[2]&0x01 != 0
		b = b[4:]
		if bottom {
			break
		}
	}
	if len(b) == 0 {
		return nil
	}
	switch b[0] >> 4 {
	case 4, 6:
		return d.rawIP(b, p, depth)
	case 0:
		if len(b) < 4 {
			return errShort
		}
		b = b[4:]
	}
	if depth >= maxEncapDepth {
		return nil
	}
	typ, payload, err := etherHeader(b)
	if err != nil {
		return err
	}
	return d.ether(typ, payload, p, depth+1)
}

// nflog decodes Linux NFLOG (tcpdump -i nflog:N): a 4-byte header, then
// TLVs in host byte order; NFULA_PAYLOAD (9) holds the IP packet.
func (d *Decoder) nflog(b []byte, p *Packet) error {
	if len(b) < 4 {
		return errShort
	}
	family := b[0]
	tlvs := b[4:]
	for len(tlvs) >= 4 {
		n := int(binary.LittleEndian.Uint16(tlvs[0:2]))
		typ := binary.LittleEndian.Uint16(tlvs[2:4])
		if n < 4 || n > len(tlvs) { // written on a big-endian host?
			n = int(binary.BigEndian.Uint16(tlvs[0:2]))
			typ = binary.BigEndian.Uint16(tlvs[2:4])
		}
		if n < 4 || n > len(tlvs) {
			return errShort
		}
		if typ == 9 {
			payload := tlvs[4:n]
			if family == 10 {
				return d.ipv6(payload, p, 0)
			}
			return d.rawIP(payload, p, 0)
		}
		tlvs = tlvs[min((n+3)&^3, len(tlvs)):]
	}
	return nil
}
