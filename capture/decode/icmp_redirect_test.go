package decode

import (
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// An ICMPv6 redirect names the destination it redirects in its body (RFC
// 4861 4.5); without a Redirected Header option, that destination and the
// host the redirect is sent to stand for the packet it answers.
func TestICMPv6RedirectWithoutQuote(t *testing.T) {
	from, to := netip.MustParseAddr("fe80::dead"), netip.MustParseAddr("fe80::beef")
	target, dest := netip.MustParseAddr("fe80::cafe"), netip.MustParseAddr("fe80::babe")
	icmp := []byte{137, 0, 0, 0, 0, 0, 0, 0}
	icmp = append(icmp, target.AsSlice()...)
	icmp = append(icmp, dest.AsSlice()...)
	ip := []byte{0x60, 0, 0, 0, 0, byte(len(icmp)), 58, 255}
	ip = append(append(append(ip, from.AsSlice()...), to.AsSlice()...), icmp...)
	var d Decoder
	var p Packet
	if err := d.decode(layers.LinkTypeRaw, ip, &p); err != nil || p.ICMP == nil {
		t.Fatalf("decode: %v, %+v", err, p)
	}
	ev := p.ICMP
	if ev.What != "redirect" || ev.Gateway != target || ev.Quoted.Dst.Addr() != dest || ev.Quoted.Src.Addr() != to {
		t.Errorf("%s via %s, quoted %v -> %v; want redirect via %s, %s -> %s", ev.What, ev.Gateway, ev.Quoted.Src, ev.Quoted.Dst, target, to, dest)
	}
}
