// Package decode turns the frames of a capture into the packets netmortem
// tracks: TCP segments with their header fields, UDP datagrams, ICMP and
// ICMPv6 errors with the header they quote, ARP and IPv6 neighbor claims.
// It reads Ethernet (VLAN, QinQ, 802.3 LLC/SNAP, MPLS, FabricPath), Linux
// SLL and SLL2, NFLOG, BSD loopback and raw IP frames, reassembles IPv4
// fragments as tshark does, and looks inside VXLAN, Geneve, GTP-U and
// IP-in-IP overlays.
//
// Two paths give the same packets: Decoder.Decode reads the common
// headers by hand and the rare ones through gopacket's layers, and HotTCP,
// the hot path of capture reading, reads a plain TCP segment straight into
// the Segment that stream tracking folds. Their tests and fuzz targets
// hold each hand-read header equal to gopacket's reading of it.
package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
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

// Decoder turns one frame into a Packet. It holds gopacket's layer structs
// so that a frame is decoded without allocating, and the IPv4 fragments
// of the capture so far; it is not safe for concurrent use. The zero
// Decoder is ready to use.
type Decoder struct {
	loop layers.Loopback
	ip4  layers.IPv4
	ip6  layers.IPv6
	udp  layers.UDP
	arp  layers.ARP

	// defrag reassembles IPv4 fragments, as tshark does, so that a
	// fragmented SYN counts once, at its last fragment.
	defrag *ip4defrag.IPv4Defragmenter
	now    time.Time

	// cut is how many bytes the frame being decoded had on the wire past
	// those captured (its original length less its captured length). An
	// IP length is believed up to the bytes on the wire, no further: a
	// header claiming more (corrupt, or rewritten by an offload) counts
	// only the payload the frame carried, as tshark's tcp.len does.
	cut int

	// LayersOnly sends every IPv4, IPv6 and UDP header through gopacket's
	// layers, never through the readers of fast.go; tests compare the two
	// paths with it.
	LayersOnly bool
}

var (
	errShort       = errors.New("frame too short for its headers")
	errUnsupported = errors.New("link type not supported")
)

// SupportedLink reports whether Decode understands a link type.
func SupportedLink(l layers.LinkType) bool {
	switch l {
	case layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2,
		layers.LinkTypeRaw, 12, 14, layers.LinkTypeIPv4, layers.LinkTypeIPv6,
		layers.LinkTypeNull, layers.LinkTypeLoop, linkTypeNFLOG:
		return true
	}
	return false
}

// LinkName names a link type as capinfos does, roughly.
func LinkName(l layers.LinkType) string {
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

// Decode fills p from one frame of link type link, which had cut bytes on
// the wire past those captured (its original length less its captured
// length). p is reset by the caller but for its Pos and Time, which
// IPv4 fragments are reassembled by. An error means the frame's headers
// could not be decoded; p keeps what was decoded before that.
func (d *Decoder) Decode(link layers.LinkType, data []byte, cut int, p *Packet) error {
	d.now, d.cut = p.Time, cut
	err := d.decode(link, data, p)
	d.cut = 0
	return err
}

// decode fills p (already reset by the caller) from one frame. An error
// means the frame's headers could not be decoded; p keeps what was decoded
// before that.
func (d *Decoder) decode(link layers.LinkType, data []byte, p *Packet) error {
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

func (d *Decoder) rawIP(data []byte, p *Packet, depth int) error {
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
func (d *Decoder) ether(typ layers.EthernetType, payload []byte, p *Packet, depth int) error {
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
			// An 802.1Q or 802.1ad tag.
			if len(payload) < 4 {
				return fmt.Errorf("802.1Q tag length %d too short", len(payload))
			}
			typ, payload = layers.EthernetType(binary.BigEndian.Uint16(payload[2:4])), payload[4:]
			if typ < 0x0600 { // an 802.3 length, as after an untagged header: LLC follows
				if int(typ) < len(payload) {
					payload = payload[:typ]
				}
				typ = layers.EthernetTypeLLC
			}
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

// reassemble feeds one IPv4 fragment to the defragmenter and returns the
// whole datagram once its last fragment is in, nil before.
func (d *Decoder) reassemble(ip *layers.IPv4) (*layers.IPv4, error) {
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

func (d *Decoder) ipv4(data []byte, p *Packet, depth int) error {
	if !d.LayersOnly {
		if l, ok := fastIPv4(data); ok {
			return d.transport(l, p, depth)
		}
	}
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

func (d *Decoder) ipv6(data []byte, p *Packet, depth int) error {
	l, ok := ipLoad{}, false
	if !d.LayersOnly {
		l, ok = fastIPv6(data)
	}
	if !ok {
		var err error
		if l, err = d.ipv6Layer(data); err != nil {
			return err
		}
	}
	src, dst, next, payload, reported := l.src, l.dst, l.proto, l.data, l.reported
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

// ipv6Layer decodes an IPv6 header, and a hop-by-hop header after it,
// with layers.IPv6.
func (d *Decoder) ipv6Layer(data []byte) (ipLoad, error) {
	if err := d.ip6.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		return ipLoad{}, err
	}
	ip := &d.ip6
	src, ok1 := netip.AddrFromSlice(ip.SrcIP)
	dst, ok2 := netip.AddrFromSlice(ip.DstIP)
	if !ok1 || !ok2 {
		return ipLoad{}, errShort
	}
	l := ipLoad{src: src, dst: dst, proto: ip.NextHeader, data: ip.Payload, reported: int(ip.Length)}
	if ip.HopByHop != nil {
		l.proto = ip.HopByHop.NextHeader
		l.reported -= ip.HopByHop.ActualLength
	}
	return l, nil
}

func (d *Decoder) transport(l ipLoad, p *Packet, depth int) error {
	p.Src, p.Dst = netip.AddrPortFrom(l.src, 0), netip.AddrPortFrom(l.dst, 0)
	l.reported = min(l.reported, len(l.data)+d.cut)
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
		if p.Flags&SYN != 0 && hlen > 20 && len(b) >= hlen {
			p.MSS = tcpMSS(b[20:hlen])
		}
		return nil
	case layers.IPProtocolUDP:
		sport, dport, payload, ok := uint16(0), uint16(0), []byte(nil), false
		if !d.LayersOnly {
			sport, dport, payload, ok = fastUDP(l.data)
		}
		if !ok {
			if err := d.udp.DecodeFromBytes(l.data, gopacket.NilDecodeFeedback); err != nil {
				return err
			}
			sport, dport, payload = uint16(d.udp.SrcPort), uint16(d.udp.DstPort), d.udp.Payload
		}
		p.Proto = "udp"
		p.Src = netip.AddrPortFrom(l.src, sport)
		p.Dst = netip.AddrPortFrom(l.dst, dport)
		if depth < maxEncapDepth {
			return d.overlayUDP(dport, payload, p, depth)
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

// tcpMSS returns the value of the maximum segment size option (kind 2,
// length 4) among TCP options, 0 when there is none.
func tcpMSS(opts []byte) uint16 {
	for i := 0; i < len(opts); {
		switch kind := opts[i]; kind {
		case 0: // end of options
			return 0
		case 1: // no-op
			i++
			continue
		}
		if i+1 >= len(opts) || opts[i+1] < 2 {
			return 0
		}
		n := int(opts[i+1])
		if opts[i] == 2 && n == 4 && i+4 <= len(opts) {
			return binary.BigEndian.Uint16(opts[i+2 : i+4])
		}
		i += n
	}
	return 0
}
