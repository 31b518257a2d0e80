package capture

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// An IP length is believed up to the bytes the frame had on the wire: a
// header that claims more (here 60,000 bytes in a 64-byte frame, as in the
// gopacket corpus's linux_sll_oversized_addr capture) counts the payload
// the frame carried, as tshark's tcp.len does. A frame cut by the snap
// length still counts its whole IP length, when the wire had it. Both the
// hand-read path and gopacket's layers give the same. A record whose
// original length is below its capture length is read as captured.
func TestWireLengths(t *testing.T) {
	cli := netip.MustParseAddrPort("10.0.0.1:40000")
	srv := netip.MustParseAddrPort("10.0.0.2:80")
	// frame is an Ethernet frame of an IPv4 TCP segment from src to dst
	// with payload bytes, its IP length set to claim when not 0.
	frame := func(src, dst netip.AddrPort, flags uint8, seq, ack uint32, payload, claim int) []byte {
		be := binary.BigEndian
		b := make([]byte, 14+20+20+payload)
		be.PutUint16(b[12:], 0x0800)
		ip := b[14:]
		ip[0], ip[8], ip[9] = 0x45, 64, 6
		be.PutUint16(ip[2:], uint16(20+20+payload))
		if claim > 0 {
			be.PutUint16(ip[2:], uint16(claim))
		}
		s4, d4 := src.Addr().As4(), dst.Addr().As4()
		copy(ip[12:], s4[:])
		copy(ip[16:], d4[:])
		tcp := ip[20:]
		be.PutUint16(tcp[0:], src.Port())
		be.PutUint16(tcp[2:], dst.Port())
		be.PutUint32(tcp[4:], seq)
		be.PutUint32(tcp[8:], ack)
		tcp[12], tcp[13] = 5<<4, flags
		be.PutUint16(tcp[14:], 64240)
		return b
	}
	records := []wireRecord{
		{data: frame(cli, srv, decode.SYN, 999, 0, 0, 0)},
		{data: frame(srv, cli, decode.SYN|decode.ACK, 5000, 1000, 0, 0)},
		{data: frame(cli, srv, decode.ACK, 1000, 5001, 0, 0)},
		// 10 bytes of payload; the IP header claims 60,000.
		{data: frame(cli, srv, decode.ACK|decode.PSH, 1000, 5001, 10, 60000)},
		// 1,400 bytes of payload on the wire, 100 bytes of frame captured.
		{data: frame(srv, cli, decode.ACK|decode.PSH, 5001, 1010, 1400, 0)[:100], wire: 14 + 40 + 1400},
		// 600 bytes of payload on the wire, 80 captured, the header
		// claiming 9,000.
		{data: frame(srv, cli, decode.ACK|decode.PSH, 6401, 1010, 600, 9000)[:80], wire: 14 + 40 + 600},
	}
	b := pcapOfRecords(records)
	for _, mode := range []decoding{decodeAll, decodeRecords, decodeLayers} {
		res, err := read(context.Background(), bytes.NewReader(b), "f.pcap", Options{}, mode)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Attempts) != 1 {
			t.Fatalf("decoding %d: %d attempts", mode, len(res.Attempts))
		}
		a := res.Attempts[0]
		if a.ClientBytes != 10 || a.ServerBytes != 1400+600 || a.Packets != 6 {
			t.Errorf("decoding %d: %d packets, %d bytes from the client, %d from the server; want 6, 10, %d", mode, a.Packets, a.ClientBytes, a.ServerBytes, 1400+600)
		}
	}

	// A record stating an original length below its capture length (10
	// for a 54-byte frame) is read as captured, with a warning at its
	// frame, and the records after it are read too, as libpcap reads them.
	b = pcapOfRecords([]wireRecord{records[0], {data: records[1].data, wire: -10}, records[2], records[3]})
	res, err := Read(context.Background(), bytes.NewReader(b), "f.pcap", Options{})
	if res == nil || res.Info.Counts.Packets != 4 || len(res.Attempts) != 1 || res.Attempts[0].Outcome != "established" {
		t.Fatalf("read %+v, %v; want 4 packets of one established connection", res, err)
	}
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Frame != 2 || !strings.Contains(list[0].Error(), "capture length 54 exceeds the original length 10") {
		t.Errorf("warnings %v; want one at frame 2", err)
	}
}

// wireRecord is a pcap record: its frame as captured, and its original
// length when more than the frame (a negative wire states -wire).
type wireRecord struct {
	data []byte
	wire int
}

// pcapOfRecords is a microsecond pcap of Ethernet records, a second apart.
func pcapOfRecords(records []wireRecord) []byte {
	var out []testutil.PcapRecord
	for i, r := range records {
		orig := uint32(max(r.wire, len(r.data)))
		if r.wire < 0 {
			orig = uint32(-r.wire)
		}
		out = append(out, testutil.PcapRecord{Time: time.Unix(int64(1700000000+i), 0), Data: r.data, Orig: orig})
	}
	return testutil.Pcap(out)
}
