package decode

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// OneLine is a one-line decode of p, as tcpdump -nn prints it: its time
// (UTC), addresses and ports, TCP flags, sequence numbers and payload
// length, or what an ICMP error or ARP packet says. size is the frame's
// captured length; err, when not nil, is why its headers did not decode.
func OneLine(p *Packet, size int, err error) string {
	var b strings.Builder
	if !p.Time.IsZero() {
		b.WriteString(p.Time.UTC().Format("2006-01-02 15:04:05.000000 "))
	}
	switch {
	case p.ARP != nil:
		a := p.ARP
		switch a.Op {
		case "request":
			fmt.Fprintf(&b, "ARP, Request who-has %s tell %s (%s)", a.Target, a.IP, a.MAC)
		case "reply":
			fmt.Fprintf(&b, "ARP, Reply %s is-at %s", a.IP, a.MAC)
		case "na":
			fmt.Fprintf(&b, "IP6 %s > %s: ICMP6, neighbor advertisement, tgt is %s (%s)", p.Src.Addr(), p.Dst.Addr(), a.IP, a.MAC)
		case "ns":
			fmt.Fprintf(&b, "IP6 %s > %s: ICMP6, neighbor solicitation, who has %s", p.Src.Addr(), p.Dst.Addr(), a.Target)
		default:
			fmt.Fprintf(&b, "ARP, %s %s is-at %s", a.Op, a.IP, a.MAC)
		}
		if a.Gratuitous {
			b.WriteString(" (gratuitous)")
		}
	case p.ICMP != nil:
		e := p.ICMP
		fmt.Fprintf(&b, "%s %s > %s: ICMP%s %s (type %d, code %d)", ipWord(p), e.From, e.To, map[bool]string{true: "6"}[e.V6], e.What, e.Type, e.Code)
		if e.Quoted.Src.IsValid() || e.Quoted.Dst.IsValid() {
			fmt.Fprintf(&b, ", quoting %s %s > %s", e.QuotedProto, dotted(e.Quoted.Src), dotted(e.Quoted.Dst))
		}
		if e.Gateway.IsValid() {
			fmt.Fprintf(&b, ", new gateway %s", e.Gateway)
		}
	case p.Proto == "tcp":
		fmt.Fprintf(&b, "%s %s > %s: Flags [%s], seq %d", ipWord(p), dotted(p.Src), dotted(p.Dst), tcpFlags(p.Flags), p.Seq)
		if p.Flags&ACK != 0 {
			fmt.Fprintf(&b, ", ack %d", p.Ack)
		}
		if p.MSS != 0 {
			fmt.Fprintf(&b, ", options [mss %d]", p.MSS)
		}
		fmt.Fprintf(&b, ", length %d", p.Payload)
	case p.Proto == "udp":
		fmt.Fprintf(&b, "%s %s > %s: UDP", ipWord(p), dotted(p.Src), dotted(p.Dst))
	case p.Proto != "":
		fmt.Fprintf(&b, "%s %s > %s: %s", ipWord(p), p.Src.Addr(), p.Dst.Addr(), strings.ToUpper(p.Proto))
	case p.Src.IsValid():
		fmt.Fprintf(&b, "%s %s > %s", ipWord(p), p.Src.Addr(), p.Dst.Addr())
	default:
		fmt.Fprintf(&b, "frame of %d bytes, not IP or ARP", size)
	}
	if p.Outer != nil {
		fmt.Fprintf(&b, " (inside an overlay: %s > %s)", p.Outer.Src.Addr(), p.Outer.Dst.Addr())
	}
	if err != nil {
		fmt.Fprintf(&b, " [not decoded: %v]", err)
	}
	return b.String()
}

// ipWord is tcpdump's word for the packet's family: IP or IP6.
func ipWord(p *Packet) string {
	if p.Src.Addr().Is6() && !p.Src.Addr().Is4In6() {
		return "IP6"
	}
	return "IP"
}

// tcpFlags writes TCP flags as tcpdump does: S, F, R, P, U, E, W and "."
// for ACK.
func tcpFlags(f uint8) string {
	var b strings.Builder
	for _, x := range []struct {
		bit uint8
		c   byte
	}{{SYN, 'S'}, {FIN, 'F'}, {RST, 'R'}, {PSH, 'P'}, {URG, 'U'}, {ECE, 'E'}, {CWR, 'W'}, {ACK, '.'}} {
		if f&x.bit != 0 {
			b.WriteByte(x.c)
		}
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// dotted writes an address and port as tcpdump does: 10.0.0.1.80,
// fd00::1.443.
func dotted(ap netip.AddrPort) string {
	if ap.Port() == 0 {
		return ap.Addr().String()
	}
	return ap.Addr().String() + "." + strconv.Itoa(int(ap.Port()))
}
