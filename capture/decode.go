package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/ip4defrag"
	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/model"
)

// Overlay encapsulations whose inner packets are tracked as flows of their
// own.
const (
	portVXLAN        = 4789
	portVXLANFlannel = 8472 // flannel's vxlan backend and the Linux default
	portGeneve       = 6081
	portGTPU         = 2152
	linkTypeNFLOG    = 239
	maxEncapDepth    = 3
)

// decoder turns one frame into a Packet. It holds gopacket's layer structs so
// that a frame is decoded without allocating; it is not safe for concurrent
// use.
type decoder struct {
	dot1q layers.Dot1Q
	loop  layers.Loopback
	ip4   layers.IPv4
	ip6   layers.IPv6
	udp   layers.UDP
	arp   layers.ARP

	// defrag reassembles IPv4 fragments, as tshark does, so that a
	// fragmented SYN counts once, at its last fragment.
	defrag *ip4defrag.IPv4Defragmenter
	now    time.Time
}

var (
	errShort       = errors.New("frame too short for its headers")
	errUnsupported = errors.New("link type not supported")
)

// supportedLink reports whether decode understands a link type.
func supportedLink(l layers.LinkType) bool {
	switch l {
	case layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2,
		layers.LinkTypeRaw, 12, 14, layers.LinkTypeIPv4, layers.LinkTypeIPv6,
		layers.LinkTypeNull, layers.LinkTypeLoop, linkTypeNFLOG:
		return true
	}
	return false
}

// linkName names a link type as capinfos does, roughly.
func linkName(l layers.LinkType) string {
	switch l {
	case layers.LinkTypeRaw, 12, 14:
		return "Raw IP"
	case layers.LinkTypeIPv4:
		return "Raw IPv4"
	case layers.LinkTypeIPv6:
		return "Raw IPv6"
	case layers.LinkTypeNull:
		return "BSD loopback"
	case linkTypeNFLOG:
		return "NFLOG"
	}
	if s := l.String(); s != "" && s != "Unknown" {
		return s
	}
	return fmt.Sprintf("link type %d", int(l))
}

// decode fills p (already reset by the caller) from one frame. An error
// means the frame's headers could not be decoded; p keeps what was decoded
// before that.
func (d *decoder) decode(link layers.LinkType, data []byte, p *Packet) error {
	nf := gopacket.NilDecodeFeedback
	switch link {
	case layers.LinkTypeEthernet:
		typ, payload, err := etherHeader(data)
		if err != nil {
			return err
		}
		return d.ether(typ, payload, p, 0)
	case layers.LinkTypeLinuxSLL:
		// A fixed 16-byte header; the protocol type is its last field.
		// (gopacket's LinuxSLL rejects address lengths above 8, which
		// real captures of some interfaces carry.)
		if len(data) < 16 {
			return errShort
		}
		return d.ether(layers.EthernetType(binary.BigEndian.Uint16(data[14:16])), data[16:], p, 0)
	case layers.LinkTypeLinuxSLL2:
		// A fixed 20-byte header, the protocol type first.
		if len(data) < 20 {
			return errShort
		}
		return d.ether(layers.EthernetType(binary.BigEndian.Uint16(data[0:2])), data[20:], p, 0)
	case linkTypeNFLOG:
		return d.nflog(data, p)
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		if err := d.loop.DecodeFromBytes(data, nf); err != nil {
			return err
		}
		switch d.loop.Family {
		case layers.ProtocolFamilyIPv4:
			return d.ipv4(d.loop.Payload, p, 0)
		case layers.ProtocolFamilyIPv6BSD, layers.ProtocolFamilyIPv6FreeBSD, layers.ProtocolFamilyIPv6Darwin, layers.ProtocolFamilyIPv6Linux:
			return d.ipv6(d.loop.Payload, p, 0)
		}
		return nil
	case layers.LinkTypeRaw, 12, 14, layers.LinkTypeIPv4, layers.LinkTypeIPv6:
		return d.rawIP(data, p, 0)
	}
	return errUnsupported
}

// etherHeader reads an Ethernet II or 802.3 header: the EtherType (LLC
// for 802.3 length fields, with the payload cut to that length) and the
// payload. It is the hot path of every Ethernet capture, hence read
// directly rather than through layers.Ethernet.
func etherHeader(b []byte) (layers.EthernetType, []byte, error) {
	if len(b) < 14 {
		return 0, nil, errShort
	}
	typ := binary.BigEndian.Uint16(b[12:14])
	payload := b[14:]
	if typ < 0x0600 { // 802.3: a length, then LLC
		if int(typ) < len(payload) {
			payload = payload[:typ]
		}
		return layers.EthernetTypeLLC, payload, nil
	}
	return layers.EthernetType(typ), payload, nil
}

func (d *decoder) rawIP(data []byte, p *Packet, depth int) error {
	if len(data) == 0 {
		return errShort
	}
	switch data[0] >> 4 {
	case 4:
		return d.ipv4(data, p, depth)
	case 6:
		return d.ipv6(data, p, depth)
	}
	return nil
}

// ether continues from an EtherType, through any number of VLAN tags.
func (d *decoder) ether(typ layers.EthernetType, payload []byte, p *Packet, depth int) error {
	for range 8 {
		switch typ {
		case layers.EthernetTypeLLC:
			// 802.2 LLC with a SNAP header carries an EtherType.
			if len(payload) >= 8 && payload[0] == 0xaa && payload[1] == 0xaa && payload[2] == 0x03 {
				typ, payload = layers.EthernetType(binary.BigEndian.Uint16(payload[6:8])), payload[8:]
				continue
			}
			return nil
		case layers.EthernetTypeMPLSUnicast, layers.EthernetTypeMPLSMulticast:
			return d.mpls(payload, p, depth)
		case 0x8903: // Cisco FabricPath: FTAG/TTL, then the inner frame and its FCS
			if len(payload) < 2+14+4 || depth >= maxEncapDepth {
				return nil
			}
			t, pl, err := etherHeader(payload[2 : len(payload)-4])
			if err != nil {
				return err
			}
			typ, payload, depth = t, pl, depth+1
			continue
		case layers.EthernetTypeDot1Q, layers.EthernetTypeQinQ, 0x9100:
			if err := d.dot1q.DecodeFromBytes(payload, gopacket.NilDecodeFeedback); err != nil {
				return err
			}
			typ, payload = d.dot1q.Type, d.dot1q.Payload
			continue
		case layers.EthernetTypeIPv4:
			return d.ipv4(payload, p, depth)
		case layers.EthernetTypeIPv6:
			return d.ipv6(payload, p, depth)
		case layers.EthernetTypeARP:
			return d.decodeARP(payload, p)
		}
		return nil
	}
	return nil
}

func (d *decoder) decodeARP(data []byte, p *Packet) error {
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

// reassemble feeds one IPv4 fragment to the defragmenter and returns the
// whole datagram once its last fragment is in, nil before.
func (d *decoder) reassemble(ip *layers.IPv4) (*layers.IPv4, error) {
	if d.defrag == nil {
		d.defrag = ip4defrag.NewIPv4Defragmenter()
	}
	frag := *ip // the defragmenter keeps fragments; the decoder's are reused
	frag.Payload = bytes.Clone(ip.Payload)
	frag.Contents = bytes.Clone(ip.Contents)
	frag.Options = nil
	frag.Length = uint16(len(frag.Contents) + len(frag.Payload))
	return d.defrag.DefragIPv4WithTimestamp(&frag, d.now)
}

// ipLoad is the transport payload of an IP packet and its length as the IP
// header reports it (which exceeds len(data) when the snap length cut the
// frame).
type ipLoad struct {
	src, dst netip.Addr
	proto    layers.IPProtocol
	data     []byte
	reported int
}

func (d *decoder) ipv4(data []byte, p *Packet, depth int) error {
	if err := d.ip4.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		return err
	}
	ip := &d.ip4
	src, ok1 := netip.AddrFromSlice(ip.SrcIP)
	dst, ok2 := netip.AddrFromSlice(ip.DstIP)
	if !ok1 || !ok2 {
		return errShort
	}
	l := ipLoad{src: src, dst: dst, proto: ip.Protocol, data: ip.Payload,
		reported: int(ip.Length) - int(ip.IHL)*4}
	if ip.FragOffset != 0 || ip.Flags&layers.IPv4MoreFragments != 0 {
		p.Src, p.Dst = netip.AddrPortFrom(src, 0), netip.AddrPortFrom(dst, 0)
		whole, err := d.reassemble(ip)
		if err != nil || whole == nil {
			return err // an incomplete datagram carries no transport header yet
		}
		l.data, l.reported = whole.Payload, len(whole.Payload)
	}
	return d.transport(l, p, depth)
}

func (d *decoder) ipv6(data []byte, p *Packet, depth int) error {
	if err := d.ip6.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		return err
	}
	ip := &d.ip6
	src, ok1 := netip.AddrFromSlice(ip.SrcIP)
	dst, ok2 := netip.AddrFromSlice(ip.DstIP)
	if !ok1 || !ok2 {
		return errShort
	}
	next := ip.NextHeader
	payload := ip.Payload
	reported := int(ip.Length)
	if ip.HopByHop != nil {
		next = ip.HopByHop.NextHeader
		reported -= ip.HopByHop.ActualLength
	}
	// Walk the extension headers to the transport header.
	for range 8 {
		switch next {
		case layers.IPProtocolIPv6HopByHop, layers.IPProtocolIPv6Routing, layers.IPProtocolIPv6Destination:
			if len(payload) < 8 {
				return errShort
			}
			n := 8 + int(payload[1])*8
			if len(payload) < n {
				return errShort
			}
			next, payload, reported = layers.IPProtocol(payload[0]), payload[n:], reported-n
			continue
		case layers.IPProtocolIPv6Fragment:
			if len(payload) < 8 {
				return errShort
			}
			off := binary.BigEndian.Uint16(payload[2:4]) >> 3
			next, payload, reported = layers.IPProtocol(payload[0]), payload[8:], reported-8
			if off != 0 {
				p.Src, p.Dst = netip.AddrPortFrom(src, 0), netip.AddrPortFrom(dst, 0)
				return nil
			}
			continue
		case layers.IPProtocolAH:
			if len(payload) < 8 {
				return errShort
			}
			n := (int(payload[1]) + 2) * 4
			if len(payload) < n {
				return errShort
			}
			next, payload, reported = layers.IPProtocol(payload[0]), payload[n:], reported-n
			continue
		}
		break
	}
	return d.transport(ipLoad{src: src, dst: dst, proto: next, data: payload, reported: reported}, p, depth)
}

func (d *decoder) transport(l ipLoad, p *Packet, depth int) error {
	p.Src, p.Dst = netip.AddrPortFrom(l.src, 0), netip.AddrPortFrom(l.dst, 0)
	switch l.proto {
	case layers.IPProtocolTCP:
		// The fixed part of the header is read directly, so that a
		// header cut short by the snap length still counts, as in tshark.
		b := l.data
		if len(b) < 14 {
			return errShort
		}
		p.Proto = "tcp"
		p.Src = netip.AddrPortFrom(l.src, binary.BigEndian.Uint16(b[0:2]))
		p.Dst = netip.AddrPortFrom(l.dst, binary.BigEndian.Uint16(b[2:4]))
		p.Seq = binary.BigEndian.Uint32(b[4:8])
		p.Ack = binary.BigEndian.Uint32(b[8:12])
		p.Flags = b[13]
		hlen := int(b[12]>>4) * 4
		p.Payload = max(l.reported-hlen, 0)
		p.Short = len(b) < 20 || l.reported < hlen
		return nil
	case layers.IPProtocolUDP:
		if err := d.udp.DecodeFromBytes(l.data, gopacket.NilDecodeFeedback); err != nil {
			return err
		}
		p.Proto = "udp"
		p.Src = netip.AddrPortFrom(l.src, uint16(d.udp.SrcPort))
		p.Dst = netip.AddrPortFrom(l.dst, uint16(d.udp.DstPort))
		if depth < maxEncapDepth {
			return d.overlayUDP(uint16(d.udp.DstPort), d.udp.Payload, p, depth)
		}
		return nil
	case layers.IPProtocolICMPv4:
		p.Proto = "icmp"
		return d.icmp(l, p, false)
	case layers.IPProtocolICMPv6:
		p.Proto = "icmp6"
		return d.icmp(l, p, true)
	case layers.IPProtocolIPv4, layers.IPProtocolIPv6:
		if depth >= maxEncapDepth {
			return nil
		}
		p.Outer = &model.Tuple{Src: p.Src, Dst: p.Dst}
		if l.proto == layers.IPProtocolIPv4 {
			return d.ipv4(l.data, p, depth+1)
		}
		return d.ipv6(l.data, p, depth+1)
	}
	return nil
}

// overlayUDP decodes the inner packet of VXLAN and Geneve.
func (d *decoder) overlayUDP(port uint16, b []byte, p *Packet, depth int) error {
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
func (d *decoder) mpls(b []byte, p *Packet, depth int) error {
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
func (d *decoder) nflog(b []byte, p *Packet) error {
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

// icmp decodes an ICMP or ICMPv6 message. Errors (unreachable, redirect,
// time exceeded, packet too big) become ICMP events with the header they
// quote; IPv6 neighbor advertisements become ARP-like claims.
func (d *decoder) icmp(l ipLoad, p *Packet, v6 bool) error {
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
func (d *decoder) neighbor(typ int, b []byte, l ipLoad, p *Packet) error {
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
