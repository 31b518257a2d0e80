package decode

import (
	"net/netip"
	"time"

	"github.com/netmortem/netmortem/model"
)

// TCP flag bits of Packet.Flags, as in the TCP header.
const (
	FIN uint8 = 1 << iota
	SYN
	RST
	PSH
	ACK
	URG
	ECE
	CWR
)

// Packet is one decoded packet, whatever it was read from: a pcap frame, or
// a line of pasted tcpdump or tshark text. It is the unit a track.Tracker
// folds into attempts, ICMP events and ARP claims.
type Packet struct {
	// Pos locates the packet: frame (1-based, as Wireshark numbers them)
	// for captures, line for text. File may be left empty: the Tracker
	// fills in its own file.
	Pos  model.Pos
	Time time.Time

	// Proto is "tcp", "udp", "icmp", "icmp6", "arp", or "" for anything
	// else (counted, otherwise ignored).
	Proto string
	Src   netip.AddrPort // port 0 when the protocol has none
	Dst   netip.AddrPort

	// TCP fields.
	Flags   uint8
	Seq     uint32
	Ack     uint32
	Payload int // TCP payload bytes
	// MSS is the maximum segment size option of a SYN or SYN/ACK, 0 when
	// absent or not shown (tshark's packet list does not print it).
	MSS uint16
	// Short is set when the TCP header was cut short (snap length, a
	// truncated frame): the packet counts, but its sequence numbers are not
	// analysed, as in Wireshark.
	Short bool

	// Outer holds the outer addresses when the packet was carried in an
	// overlay encapsulation (VXLAN, Geneve, IP-in-IP).
	Outer *model.Tuple

	// ICMP is set for ICMP and ICMPv6 errors.
	ICMP *model.ICMPEvent
	// ARP is set for ARP packets and IPv6 neighbor advertisements.
	ARP *model.ARPEvent
	// BadChecksum is set for a UDP packet the text capture's decoder
	// printed with a wrong checksum (tcpdump -v's "bad udp cksum").
	BadChecksum bool
	// GratuitousARP is set for a gratuitous ARP request or reply whose
	// hardware address is malformed: it claims nothing (ARP is nil) but
	// counts as gratuitous, as tshark counts it.
	GratuitousARP bool
}
