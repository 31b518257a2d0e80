package capture_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/testutil"
)

// busyFrame is one frame of busyCapture, at its place in capture order.
type busyFrame struct {
	at   time.Duration // when it happened: the capture's order
	ts   time.Duration // its timestamp, a little off at times
	data []byte
}

// busyCapture builds a pcap of several hours of traffic between made-up
// hosts, about 30,000 frames: connections that end with FIN, left open,
// or reuse their 4-tuple; SYNs refused by many ports of a few hosts; copies
// of SYNs before and after a DNAT; SYNs answered by ICMP port unreachable;
// ARP requests and replies. Timestamps jitter by up to 2 ms, and one
// connection in seven is stamped by a clock three minutes behind, so that
// they are not always in capture order.
func busyCapture(t *testing.T) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(19, 25))
	var frames []busyFrame
	skew := time.Duration(0) // a second clock, as in captures merged from two hosts
	add := func(at time.Duration, data []byte) {
		frames = append(frames, busyFrame{at: at, ts: at + skew + time.Duration(rng.IntN(2000))*time.Microsecond, data: data})
	}
	tcp := func(at time.Duration, src, dst netip.AddrPort, flags uint8, seq, ack uint32, payload int) {
		add(at, tcpFrame(src, dst, flags, seq, ack, payload))
	}
	const (
		fin, syn, rst, psh, ackf = 1, 2, 4, 8, 16
		span                     = 3 * time.Hour
	)
	addr := func(a, b, c, d byte, port uint16) netip.AddrPort {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{a, b, c, d}), port)
	}
	// Connections, one in ten left open, one in eight reusing its 4-tuple
	// later (while the first is open, in TIME-WAIT, or long after).
	for i := range 5000 {
		at := time.Duration(rng.Int64N(int64(span)))
		cli := addr(10, 1, byte(i/250), byte(i%250+1), uint16(30000+i%20000))
		srv := addr(10, 2, 0, byte(i%20+1), 80)
		conn := func(at time.Duration, isn uint32, open bool) {
			ms := time.Millisecond
			tcp(at, cli, srv, syn, isn, 0, 0)
			tcp(at+ms, srv, cli, syn|ackf, 7000, isn+1, 0)
			tcp(at+2*ms, cli, srv, ackf, isn+1, 7001, 0)
			tcp(at+3*ms, cli, srv, psh|ackf, isn+1, 7001, 100)
			tcp(at+4*ms, srv, cli, psh|ackf, 7001, isn+101, 300)
			if open {
				return
			}
			tcp(at+5*ms, cli, srv, fin|ackf, isn+101, 7301, 0)
			tcp(at+6*ms, srv, cli, fin|ackf, 7301, isn+102, 0)
			tcp(at+7*ms, cli, srv, ackf, isn+102, 7302, 0)
		}
		skew = 0
		if i%7 == 0 {
			skew = -3 * time.Minute
		}
		conn(at, uint32(1000+i*7), i%10 == 0)
		if i%8 == 0 {
			later := []time.Duration{2 * time.Second, 30 * time.Second, 40 * time.Minute}[i%3]
			conn(at+later, uint32(900000+i*13), false)
		}
	}
	skew = 0
	// Refused: many attempts to a few ports of one host, and a scan of
	// another host's ports.
	for i := range 3000 {
		at := time.Duration(rng.Int64N(int64(span)))
		cli := addr(10, 6, byte(i/200), byte(i%200+1), uint16(40000+i))
		srv := addr(10, 3, 0, 1, uint16(1+i%30))
		if i%2 == 1 {
			srv = addr(10, 3, 0, 2, uint16(1+i))
		}
		tcp(at, cli, srv, syn, uint32(5000+i), 0, 0)
		tcp(at+500*time.Microsecond, srv, cli, rst|ackf, 0, uint32(5001+i), 0)
	}
	// A SYN seen before and after a DNAT (one sequence number, two
	// 4-tuples a few microseconds apart), unanswered and sent again.
	for i := range 300 {
		at := time.Duration(rng.Int64N(int64(span)))
		cli := addr(10, 7, 0, byte(i%250+1), uint16(50000+i))
		vip, pod := addr(10, 96, 0, 10, 443), addr(10, 4, 0, byte(i%9+1), 8443)
		isn := uint32(7777000 + i)
		for _, d := range []time.Duration{0, time.Second} {
			tcp(at+d, cli, vip, syn, isn, 0, 0)
			tcp(at+d+20*time.Microsecond, cli, pod, syn, isn, 0, 0)
		}
	}
	// SYNs answered by an ICMP port unreachable quoting them.
	for i := range 200 {
		at := time.Duration(rng.Int64N(int64(span)))
		cli, srv := addr(10, 8, 0, byte(i%250+1), uint16(20000+i)), addr(10, 5, 0, 1, 9000)
		seg := tcpFrame(cli, srv, syn, uint32(3000+i), 0, 0)
		tcp(at, cli, srv, syn, uint32(3000+i), 0, 0)
		add(at+time.Millisecond, icmpUnreach(srv.Addr(), cli.Addr(), seg[14:14+40]))
	}
	// ARP: requests and their replies.
	for i := range 100 {
		at := time.Duration(rng.Int64N(int64(span)))
		asker, target := netip.AddrFrom4([4]byte{10, 9, 0, 1}), netip.AddrFrom4([4]byte{10, 9, 1, byte(i + 1)})
		add(at, arpFrame(1, asker, target))
		add(at+time.Millisecond, arpFrame(2, target, asker))
	}
	sortFrames(frames)
	return writePcap(frames)
}

// sortFrames puts frames in capture order, keeping the order of frames
// at the same time.
func sortFrames(frames []busyFrame) {
	slices.SortStableFunc(frames, func(a, b busyFrame) int { return cmp.Compare(a.at, b.at) })
}

// writePcap writes frames as a microsecond pcap of Ethernet frames.
func writePcap(frames []busyFrame) []byte {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	records := make([]testutil.PcapRecord, len(frames))
	for i, f := range frames {
		records[i] = testutil.PcapRecord{Time: base.Add(f.ts), Data: f.data}
	}
	return testutil.Pcap(records)
}

// splitRecords cuts a pcap into n files of about as many records each.
func splitRecords(t *testing.T, b []byte, n int) [][]byte {
	t.Helper()
	le := binary.LittleEndian
	var offs []int
	for o := 24; o < len(b); o += 16 + int(le.Uint32(b[o+8:])) {
		offs = append(offs, o)
	}
	var parts [][]byte
	for i := range n {
		from, to := offs[i*len(offs)/n], len(b)
		if i < n-1 {
			to = offs[(i+1)*len(offs)/n]
		}
		parts = append(parts, append(slices.Clone(b[:24]), b[from:to]...))
	}
	return parts
}

func ether(typ uint16, payload []byte) []byte {
	f := make([]byte, 14, 14+len(payload))
	copy(f, []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(f[12:], typ)
	return append(f, payload...)
}

func ipv4(proto byte, src, dst netip.Addr, payload []byte) []byte {
	h := make([]byte, 20, 20+len(payload))
	h[0], h[8], h[9] = 0x45, 64, proto
	binary.BigEndian.PutUint16(h[2:], uint16(20+len(payload)))
	s, d := src.As4(), dst.As4()
	copy(h[12:], s[:])
	copy(h[16:], d[:])
	return append(h, payload...)
}

// tcpFrame is an Ethernet, IPv4 and TCP frame with payload bytes of data.
func tcpFrame(src, dst netip.AddrPort, flags uint8, seq, ack uint32, payload int) []byte {
	h := make([]byte, 20+payload)
	be := binary.BigEndian
	be.PutUint16(h[0:], src.Port())
	be.PutUint16(h[2:], dst.Port())
	be.PutUint32(h[4:], seq)
	be.PutUint32(h[8:], ack)
	h[12], h[13] = 5<<4, flags
	be.PutUint16(h[14:], 64240)
	return ether(0x0800, ipv4(6, src.Addr(), dst.Addr(), h))
}

// icmpUnreach is a port unreachable from src to dst quoting an IPv4
// header and the first 20 bytes after it.
func icmpUnreach(src, dst netip.Addr, quoted []byte) []byte {
	m := append([]byte{3, 3, 0, 0, 0, 0, 0, 0}, quoted...)
	return ether(0x0800, ipv4(1, src, dst, m))
}

// arpFrame is an ARP request (op 1) or reply (op 2) from sender about
// target.
func arpFrame(op uint16, sender, target netip.Addr) []byte {
	a := make([]byte, 28)
	be := binary.BigEndian
	be.PutUint16(a[0:], 1)
	be.PutUint16(a[2:], 0x0800)
	a[4], a[5] = 6, 4
	be.PutUint16(a[6:], op)
	s, d := sender.As4(), target.As4()
	copy(a[8:], []byte{2, 0, 0, 0, 9, s[3]})
	copy(a[14:], s[:])
	if op == 2 {
		copy(a[18:], []byte{2, 0, 0, 0, 9, d[3]})
	}
	copy(a[24:], d[:])
	return ether(0x0806, a)
}

// longConns builds a pcap of conns connections to one server, each a SYN,
// its SYN/ACK and data segments of 100 bytes, interleaved.
func longConns(conns, data int) ([]byte, int) {
	var frames []busyFrame
	add := func(at time.Duration, data []byte) { frames = append(frames, busyFrame{at: at, ts: at, data: data}) }
	for c := range conns {
		cli := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(c >> 8), byte(c + 1)}), 40000)
		srv := netip.MustParseAddrPort("10.2.0.1:80")
		at := time.Duration(c) * time.Millisecond
		add(at, tcpFrame(cli, srv, 2, 100, 0, 0))
		add(at+time.Microsecond, tcpFrame(srv, cli, 2|16, 500, 101, 0))
		for i := range data {
			add(at+time.Duration(i+2)*time.Millisecond, tcpFrame(cli, srv, 8|16, 101+uint32(i)*100, 501, 100))
		}
	}
	sortFrames(frames)
	return writePcap(frames), len(frames)
}

// mallocs returns how many allocations reading b takes.
func mallocs(t *testing.T, b []byte) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := capture.Read(context.Background(), bytes.NewReader(b), "c.pcap", capture.Options{Summary: capture.Summary{Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// Reading a capture allocates per connection and per read, never per
// packet: ten times the packets on the same connections take no more
// allocations, but for the few the runtime makes when goroutines wait.
func TestReadAllocatesPerConnection(t *testing.T) {
	small, n1 := longConns(100, 200)
	large, n2 := longConns(100, 2000)
	mallocs(t, small) // warm up: the first read sets up what the package reuses
	a1, a2 := mallocs(t, small), mallocs(t, large)
	if extra := float64(a2) - float64(a1); extra > float64(n2-n1)/1000 {
		t.Errorf("%d allocations for %d packets, %d for %d: %.4f more per packet", a1, n1, a2, n2, extra/float64(n2-n1))
	}
}

// BenchmarkHotPath reads a capture of 100 long connections, 1,000 data
// segments each, in summary mode through every stage, and reports the
// allocations per packet: only the streams, the windows and the result
// allocate, so it rounds to zero.
func BenchmarkHotPath(b *testing.B) {
	data, nframes := longConns(100, 1000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		res, err := capture.Read(context.Background(), bytes.NewReader(data), "hot.pcap", capture.Options{Summary: capture.Summary{Enabled: true}})
		if err != nil || res.Info.Packets != nframes {
			b.Fatal(err)
		}
		n++
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n*nframes), "allocs/packet")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*nframes), "ns/packet")
}

// ngSection writes one pcapng section (a section header and one interface
// of the given link type) holding frames.
func ngSection(t *testing.T, link layers.LinkType, frames ...[]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := pcapgo.NewNgWriter(&b, link)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(f), Length: len(f)}
		if err := w.WritePacket(ci, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A pcapng of two sections (as `cat a.pcapng b.pcapng` makes) starts its
// interfaces anew in the second: interface 0 is Ethernet in the first and
// Linux SLL in the second, and each section's SYN is read with its own
// link type.
func TestPcapngSectionsLinkTypes(t *testing.T) {
	a, b := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	c := netip.MustParseAddrPort("10.0.0.3:40001")
	sll := append([]byte{0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0xaa, 0xbb, 0x08, 0x00}, tcpFrame(c, b, 2, 2000, 0, 0)[14:]...)
	file := append(ngSection(t, layers.LinkTypeEthernet, tcpFrame(a, b, 2, 1000, 0, 0)), ngSection(t, layers.LinkTypeLinuxSLL, sll)...)
	for _, shards := range []int{1, 4} {
		res, err := capture.Read(context.Background(), bytes.NewReader(file), "two.pcapng", capture.Options{Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Attempts) != 2 || res.Attempts[1].Client != c || res.Info.LinkType != "Ethernet, Linux SLL" {
			t.Errorf("%d shards: %d attempts, link types %q", shards, len(res.Attempts), res.Info.LinkType)
		}
	}
}

// An 802.3 frame with a SNAP header, behind a VLAN tag or not, carries
// its EtherType's packet.
func TestVLAN8023SNAP(t *testing.T) {
	a, b := netip.MustParseAddrPort("10.0.0.1:4000"), netip.MustParseAddrPort("10.0.0.2:80")
	snap := append([]byte{0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00}, tcpFrame(a, b, 2, 1, 0, 0)[14:]...)
	length := []byte{byte(len(snap) >> 8), byte(len(snap))}
	macs := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}
	plain := append(append(bytes.Clone(macs), length...), snap...)
	tagged := append(append(append(bytes.Clone(macs), 0x81, 0, 0, 5), length...), snap...)
	for name, f := range map[string][]byte{"802.3+SNAP": plain, "VLAN+802.3+SNAP": tagged} {
		res, err := capture.Read(context.Background(), bytes.NewReader(writePcap([]busyFrame{{data: f}})), "c.pcap", capture.Options{})
		if err != nil || len(res.Attempts) != 1 || res.Attempts[0].Client != a {
			t.Errorf("%s: %v, %+v", name, err, res)
		}
	}
}
