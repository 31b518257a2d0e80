package decode

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/model"
)

func (d *Decoder) decodeARP(data []byte, p *Packet) error {
	// Count every ARP frame by its opcode, as tshark does, even when its
	// address fields are malformed; RARP (3, 4) is not ARP.
	if len(data) < 8 {
		return errShort
	}
	if op := binary.BigEndian.Uint16(data[6:8]); op == 3 || op == 4 {
		return nil
	}
	if binary.BigEndian.Uint16(data[0:2]) == 19 { // ATMARP has another layout
		return nil
	}
	p.Proto = "arp"
	if err := d.arp.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		return err
	}
	a := &d.arp
	if a.Protocol != layers.EthernetTypeIPv4 || a.ProtAddressSize != 4 || len(a.SourceProtAddress) != 4 || len(a.DstProtAddress) != 4 {
		return nil
	}
	var op string
	switch a.Operation {
	case layers.ARPRequest:
		op = "request"
	case layers.ARPReply:
		op = "reply"
	default: // other opcodes count as ARP but claim nothing
		return nil
	}
	ip := netip.AddrFrom4([4]byte(a.SourceProtAddress))
	target := netip.AddrFrom4([4]byte(a.DstProtAddress))
	if !arpHardwareOK(a.AddrType, a.HwAddressSize) {
		// A hardware address whose length does not fit its type (an
		// Ethernet ARP with 255-byte addresses) claims nothing: the
		// frame is counted, but its bytes are not a MAC.
		p.GratuitousARP = ip == target
		return nil
	}
	p.ARP = &model.ARPEvent{
		Op:         op,
		IP:         ip,
		MAC:        net.HardwareAddr(a.SourceHwAddress).String(),
		Target:     target,
		Gratuitous: ip == target,
	}
	return nil
}

// arpHardwareOK reports whether an ARP hardware address length fits its
// hardware type: 6 bytes for Ethernet and IEEE 802 (types 1 and 6, which
// Linux bridges, veths and most links use), 20 for InfiniBand (32), and
// 1 to 20 bytes for the others.
func arpHardwareOK(typ layers.LinkType, size uint8) bool {
	switch typ {
	case 1, 6: // ARPHRD_ETHER, ARPHRD_IEEE802
		return size == 6
	case 32: // ARPHRD_INFINIBAND
		return size == 20
	}
	return size >= 1 && size <= 20
}

// icmp decodes an ICMP or ICMPv6 message. Errors (unreachable, redirect,
// time exceeded, packet too big) become ICMP events with the header they
// quote; IPv6 neighbor advertisements become ARP-like claims.
func (d *Decoder) icmp(l ipLoad, p *Packet, v6 bool) error {
	b := l.data
	if len(b) < 8 {
		return errShort
	}
	typ, code := int(b[0]), int(b[1])
	ev := &model.ICMPEvent{From: l.src, To: l.dst, V6: v6, Type: typ, Code: code}
	quoted := b[8:]
	if !v6 {
		switch typ {
		case 3:
			ev.What = unreachName4(code)
			if code == 4 {
				ev.MTU = int(b[6])<<8 | int(b[7]) // RFC 1191
			}
		case 5:
			ev.What = "redirect"
			ev.Gateway = netip.AddrFrom4([4]byte(b[4:8]))
		case 11:
			ev.What = "ttl-exceeded"
		case 12:
			ev.What = "parameter-problem"
		default:
			return nil
		}
	} else {
		switch typ {
		case 1:
			ev.What = unreachName6(code)
		case 2:
			ev.What = "packet-too-big"
			ev.MTU = int(b[4])<<24 | int(b[5])<<16 | int(b[6])<<8 | int(b[7])
		case 3:
			ev.What = "ttl-exceeded"
		case 4:
			ev.What = "parameter-problem"
		case 136, 135:
			return d.neighbor(typ, b, l, p)
		case 137:
			if len(b) < 40 {
				return errShort
			}
			ev.What = "redirect"
			ev.Gateway = netip.AddrFrom16([16]byte(b[8:24]))
			quoted = redirectedHeader(b[40:])
		default:
			return nil
		}
	}
	ev.QuotedProto, ev.Quoted = quotedHeader(quoted)
	if v6 && typ == 137 && !ev.Quoted.Dst.Addr().IsValid() {
		// A redirect names the destination it redirects in its own body
		// (RFC 4861 4.5), and is sent to the host that sent the packet;
		// the quoted packet is optional.
		ev.Quoted.Src = netip.AddrPortFrom(l.dst, 0)
		ev.Quoted.Dst = netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[24:40])), 0)
	}
	p.ICMP = ev
	return nil
}

// redirectedHeader finds the Redirected Header option (type 4) of an ICMPv6
// redirect and returns the packet it quotes.
func redirectedHeader(opts []byte) []byte {
	for len(opts) >= 8 {
		n := int(opts[1]) * 8
		if n == 0 || n > len(opts) {
			return nil
		}
		if opts[0] == 4 {
			return opts[8:n]
		}
		opts = opts[n:]
	}
	return nil
}

// neighbor turns an IPv6 neighbor solicitation or advertisement into a claim.
func (d *Decoder) neighbor(typ int, b []byte, l ipLoad, p *Packet) error {
	if len(b) < 24 {
		return errShort
	}
	target := netip.AddrFrom16([16]byte(b[8:24]))
	ev := &model.ARPEvent{Op: "ns", IP: l.src, Target: target}
	want := byte(1) // source link-layer address
	if typ == 136 {
		ev.Op = "na"
		ev.IP = target
		want = 2                            // target link-layer address
		ev.Gratuitous = l.dst.IsMulticast() // unsolicited advertisement
		if !ev.Gratuitous {
			ev.Target = l.dst // a solicited one answers its solicitor, as an ARP reply does
		}
	}
	for opts := b[24:]; len(opts) >= 8; {
		n := int(opts[1]) * 8
		if n == 0 || n > len(opts) {
			break
		}
		if opts[0] == want && n >= 8 {
			ev.MAC = net.HardwareAddr(opts[2:8]).String()
		}
		opts = opts[n:]
	}
	if ev.MAC == "" {
		return nil // no link-layer address: not a claim
	}
	p.ARP = ev
	return nil
}

// quotedHeader reads the IP header and the first transport bytes an ICMP
// error quotes.
func quotedHeader(b []byte) (string, model.Tuple) {
	var t model.Tuple
	if len(b) < 1 {
		return "", t
	}
	var proto byte
	var src, dst netip.Addr
	var rest []byte
	switch b[0] >> 4 {
	case 4:
		ihl := int(b[0]&0x0f) * 4
		if len(b) < 20 || ihl < 20 || len(b) < ihl {
			return "", t
		}
		proto = b[9]
		src = netip.AddrFrom4([4]byte(b[12:16]))
		dst = netip.AddrFrom4([4]byte(b[16:20]))
		rest = b[ihl:]
	case 6:
		if len(b) < 40 {
			return "", t
		}
		proto = b[6]
		src = netip.AddrFrom16([16]byte(b[8:24]))
		dst = netip.AddrFrom16([16]byte(b[24:40]))
		rest = b[40:]
	default:
		return "", t
	}
	t.Src, t.Dst = netip.AddrPortFrom(src, 0), netip.AddrPortFrom(dst, 0)
	name := ""
	switch proto {
	case 6:
		name = "tcp"
	case 17:
		name = "udp"
	case 1:
		name = "icmp"
	case 58:
		name = "icmp6"
	default:
		name = fmt.Sprintf("proto-%d", proto)
	}
	if (proto == 6 || proto == 17) && len(rest) >= 4 {
		t.Src = netip.AddrPortFrom(src, binary.BigEndian.Uint16(rest[0:2]))
		t.Dst = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(rest[2:4]))
	}
	return name, t
}

func unreachName4(code int) string {
	switch code {
	case 0:
		return "net-unreachable"
	case 1:
		return "host-unreachable"
	case 2:
		return "protocol-unreachable"
	case 3:
		return "port-unreachable"
	case 4:
		return "frag-needed"
	case 9, 10, 13:
		return "admin-prohibited"
	}
	return fmt.Sprintf("unreachable-code-%d", code)
}

func unreachName6(code int) string {
	switch code {
	case 0:
		return "no-route"
	case 1:
		return "admin-prohibited"
	case 3:
		return "host-unreachable"
	case 4:
		return "port-unreachable"
	case 5, 6:
		return "policy-reject"
	}
	return fmt.Sprintf("unreachable-code-%d", code)
}
