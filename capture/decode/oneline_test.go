package decode

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/model"
)

// OneLine prints packets as tcpdump -nn's one-line form does.
func TestOneLine(t *testing.T) {
	at := time.Date(2026, 11, 23, 13, 0, 57, 752490000, time.UTC)
	ap := netip.MustParseAddrPort
	cases := []struct {
		p    Packet
		want string
	}{
		{Packet{Time: at, Proto: "tcp", Src: ap("10.10.0.5:62768"), Dst: ap("10.244.2.7:53"), Flags: SYN, Seq: 7, MSS: 1460},
			"2026-11-23 13:00:57.752490 IP 10.10.0.5.62768 > 10.244.2.7.53: Flags [S], seq 7, options [mss 1460], length 0"},
		{Packet{Proto: "tcp", Src: ap("[fd00::2]:80"), Dst: ap("[fd00::1]:4000"), Flags: SYN | ACK, Seq: 1, Ack: 8},
			"IP6 fd00::2.80 > fd00::1.4000: Flags [S.], seq 1, ack 8, length 0"},
		{Packet{Proto: "tcp", Src: ap("10.0.0.1:1"), Dst: ap("10.0.0.2:2"), Flags: RST | ACK, Payload: 0},
			"IP 10.0.0.1.1 > 10.0.0.2.2: Flags [R.], seq 0, ack 0, length 0"},
		{Packet{Time: at, Proto: "arp", ARP: &model.ARPEvent{Op: "reply", IP: netip.MustParseAddr("192.168.200.99"), MAC: "00:22:4d:a8:ba:40"}},
			"2026-11-23 13:00:57.752490 ARP, Reply 192.168.200.99 is-at 00:22:4d:a8:ba:40"},
		{Packet{Proto: "icmp", Src: ap("10.78.3.1:0"), Dst: ap("10.78.1.2:0"), ICMP: &model.ICMPEvent{From: netip.MustParseAddr("10.78.3.1"),
			To: netip.MustParseAddr("10.78.1.2"), Type: 3, Code: 4, What: "frag-needed", QuotedProto: "tcp",
			Quoted: model.Tuple{Src: ap("10.78.1.2:33756"), Dst: ap("10.78.3.2:8080")}}},
			"IP 10.78.3.1 > 10.78.1.2: ICMP frag-needed (type 3, code 4), quoting tcp 10.78.1.2.33756 > 10.78.3.2.8080"},
		{Packet{}, "frame of 60 bytes, not IP or ARP"},
	}
	for _, c := range cases {
		if got := OneLine(&c.p, 60, nil); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	if got := OneLine(&Packet{}, 3, errShort); !strings.Contains(got, "[not decoded: frame too short") {
		t.Errorf("undecodable frame: %q", got)
	}
}
