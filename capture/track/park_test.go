package track

import (
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/capture/pcapfile"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// A parked stream's record decodes to the stream it was, whatever its
// words hold: random words, words like a template's, times far apart and
// missing (noTime), sequence numbers that wrap.
func TestParkCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	word := func() uint64 {
		switch rng.IntN(6) {
		case 0:
			return 0
		case 1:
			return rng.Uint64()
		case 2:
			return uint64(rng.IntN(256))
		case 3:
			return 1 << 63 // noTime
		case 4:
			return uint64(math.MaxInt64)
		}
		return uint64(rng.Int64N(1 << 40))
	}
	random := func() *stream {
		s := new(stream)
		w := words(s)
		for i := range w {
			w[i] = word()
		}
		s.seq = 1 + rng.IntN(1<<min(40, strconv.IntSize-2))
		for d := range s.data {
			s.data[d].nOut = uint8(rng.IntN(len(s.data[d].out) + 1))
		}
		return s
	}
	var tmpl [streamWords]uint64
	buf := make([]byte, 2*parkMax)
	var scratch stream
	base := random()
	for i := range 20000 {
		s := random()
		if i%2 == 0 {
			// Most words like those of an earlier stream, as in a
			// capture's streams.
			*s = *base
			w := words(s)
			for range 1 + rng.IntN(8) {
				w[rng.IntN(streamWords)] = word()
			}
			s.seq = base.seq + rng.IntN(1000)
			for d := range s.data {
				s.data[d].nOut = uint8(rng.IntN(len(s.data[d].out) + 1))
			}
		}
		for j := range buf {
			buf[j] = byte(rng.Uint32())
		}
		n := encodeStream(buf, s, &scratch, &tmpl)
		if n > parkMax-8 {
			t.Fatalf("record of %d bytes, more than %d", n, parkMax-8)
		}
		var got stream
		decodeStream(buf, &got, &tmpl)
		want := *s
		normalize(&want)
		if got != want {
			t.Fatalf("stream %d: decoded %+v, want %+v", i, got, want)
		}
		if seq := recordSeq(buf, &tmpl); seq != s.seq {
			t.Fatalf("stream %d: seq %d read alone, want %d", i, seq, s.seq)
		}
	}
}

// withParking runs f with closed streams parked as soon as a sweep finds
// them (every one: late packets, reuses, ICMP errors and the end find them
// parked) or never.
func withParking(always bool, f func()) {
	after, pkts, budget := parkAfter, parkPackets, parkBudget
	defer func() { parkAfter, parkPackets, parkBudget = after, pkts, budget }()
	if always {
		parkAfter, parkPackets, parkBudget = -1, -1, 0
	} else {
		parkAfter, parkPackets = math.MaxInt64, math.MaxInt
	}
	f()
}

// parkTraffic feeds tr random TCP traffic that closes connections and
// comes back to them: late ACKs, FINs, data and RSTs on closed
// connections, their 4-tuples reused by new SYNs, ICMP errors quoting
// them, overlays, text lines, times that go back.
func parkTraffic(feed func(*decode.Packet), seed uint64, packets int) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type conn struct {
		cli, srv netip.AddrPort
		cseq     uint32
		sseq     uint32
		outer    bool
	}
	conns := make([]conn, 300)
	for i := range conns {
		conns[i] = conn{
			cli:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i / 200), byte(i)}), uint16(30000+rng.IntN(50))),
			srv:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, 0, byte(rng.IntN(4))}), uint16(80+rng.IntN(2))),
			cseq: rng.Uint32(), sseq: rng.Uint32(), outer: rng.IntN(10) == 0,
		}
	}
	outer := &model.Tuple{Src: netip.MustParseAddrPort("192.168.0.1:4789"), Dst: netip.MustParseAddrPort("192.168.0.2:4789")}
	n := 0
	add := func(c *conn, fromCli bool, flags uint8, payload int) {
		n++
		p := decode.Packet{Pos: posFrame(n), Time: at, Proto: "tcp", Src: c.cli, Dst: c.srv, Flags: flags,
			Seq: c.cseq, Ack: c.sseq + 1, Payload: payload}
		if !fromCli {
			p.Src, p.Dst, p.Seq, p.Ack = c.srv, c.cli, c.sseq, c.cseq+1
		}
		// Data moves its sender's sequence number on, now and then not
		// (a retransmission), so that acknowledgments cover segments of
		// several sizes.
		if payload > 0 && rng.IntN(4) != 0 {
			if fromCli {
				c.cseq += uint32(payload)
			} else {
				c.sseq += uint32(payload)
			}
		}
		if c.outer {
			p.Outer = outer
		}
		if rng.IntN(50) == 0 {
			p.Pos = model.Pos{Line: n} // a text capture's line
		}
		feed(&p)
	}
	for n < packets {
		switch rng.IntN(20) {
		case 0:
			at = at.Add(-time.Duration(rng.IntN(3000)) * time.Millisecond) // time goes back
		case 1, 2:
			at = at.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		default:
			at = at.Add(time.Duration(rng.IntN(2000)) * time.Microsecond)
		}
		c := &conns[rng.IntN(len(conns))]
		switch rng.IntN(12) {
		case 0: // a whole connection, closed
			if rng.IntN(3) == 0 {
				c.cseq = rng.Uint32() // a new one on the same 4-tuple
			}
			add(c, true, decode.SYN, 0)
			add(c, false, decode.SYN|decode.ACK, 0)
			add(c, true, decode.ACK, 0)
			add(c, true, decode.PSH|decode.ACK, 100+rng.IntN(100))
			add(c, false, decode.ACK, 0)
			add(c, true, decode.FIN|decode.ACK, 0)
			add(c, false, decode.FIN|decode.ACK, 0)
		case 1: // refused
			add(c, true, decode.SYN, 0)
			add(c, false, decode.RST|decode.ACK, 0)
		case 2: // a retransmitted SYN
			add(c, true, decode.SYN, 0)
		case 3:
			add(c, true, decode.ACK, 0)
		case 4:
			add(c, rng.IntN(2) == 0, decode.FIN|decode.ACK, 0)
		case 5:
			add(c, rng.IntN(2) == 0, decode.RST, 0)
		case 6:
			add(c, rng.IntN(2) == 0, decode.PSH|decode.ACK, rng.IntN(300))
		case 7:
			add(c, false, decode.SYN|decode.ACK, 0)
		case 8: // an ICMP error quoting the connection
			n++
			ev := &model.ICMPEvent{From: netip.MustParseAddr("10.9.9.9"), To: c.cli.Addr(), Type: 3, Code: 1,
				What: "host-unreachable", Quoted: model.Tuple{Src: c.cli, Dst: c.srv}, QuotedProto: "tcp"}
			p := decode.Packet{Pos: posFrame(n), Time: at, Proto: "icmp", Src: netip.AddrPortFrom(ev.From, 0),
				Dst: netip.AddrPortFrom(ev.To, 0), ICMP: ev}
			feed(&p)
		default:
			add(c, rng.IntN(2) == 0, decode.ACK, rng.IntN(2)*100)
		}
	}
}

// Parking every closed stream as soon as a sweep finds it, and bringing it
// back for every late packet, reuse, ICMP error, sweep and the end, gives
// the Result never parking gives: packet by packet (Add) and through the
// stages (Feed) on one shard and on several, with and without summary
// mode.
func TestParkSameResult(t *testing.T) {
	for _, summary := range []bool{false, true} {
		for _, shards := range []int{1, 3} {
			for seed := range uint64(4) {
				name := fmt.Sprintf("summary %v, %d shards, seed %d", summary, shards, seed)
				run := func(always, stages bool) (res *Result, parked int) {
					withParking(always, func() {
						tr := NewTracker("c.pcap", Options{Summary: Summary{Enabled: summary}})
						tr.SetShards(shards)
						if stages {
							err := tr.Feed(func(st *Stage) error {
								parkTraffic(st.Add, seed, 6*sweepEvery)
								return nil
							})
							if err != nil {
								t.Fatal(err)
							}
						} else {
							parkTraffic(tr.Add, seed, 6*sweepEvery)
						}
						for _, sh := range tr.shards {
							parked += sh.park.len()
						}
						res = tr.Finish()
					})
					return res, parked
				}
				want, none := run(false, false)
				got, parked := run(true, shards > 1)
				if none != 0 || parked == 0 {
					t.Fatalf("%s: %d streams parked at the end, %d when never parking", name, parked, none)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: parking changes the result", name)
					if len(got.Attempts) != len(want.Attempts) {
						t.Fatalf("%d attempts, want %d", len(got.Attempts), len(want.Attempts))
					}
					for i := range got.Attempts {
						if !reflect.DeepEqual(got.Attempts[i], want.Attempts[i]) {
							t.Fatalf("attempt %d:\n%+v\nwant\n%+v", i, got.Attempts[i], want.Attempts[i])
						}
					}
				}
			}
		}
	}
}

// Every capture of the fixtures gives the same Result parking every closed
// stream after every packet as never parking, with and without summary
// mode, on one shard and on three.
func TestParkSameResultFixtures(t *testing.T) {
	var files []string
	root := filepath.Join(testutil.Root(), "fixtures")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".pcap") || strings.HasSuffix(path, ".pcapng")) {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("only %d captures under %s", len(files), root)
	}
	every := addSweepEvery
	defer func() { addSweepEvery = every }()
	addSweepEvery = 1
	parked := 0
	for _, f := range files {
		pkts := readPackets(t, f)
		for _, summary := range []bool{false, true} {
			for _, shards := range []int{1, 3} {
				run := func(always bool) (res *Result) {
					withParking(always, func() {
						tr := NewTracker(f, Options{Summary: Summary{Enabled: summary}})
						tr.SetShards(shards)
						for i := range pkts {
							p := pkts[i]
							tr.Add(&p)
						}
						if always {
							for _, sh := range tr.shards {
								parked += sh.park.len()
							}
						}
						res = tr.Finish()
					})
					return res
				}
				if got, want := run(true), run(false); !reflect.DeepEqual(got, want) {
					t.Errorf("%s, summary %v, %d shards: parking changes the result", filepath.Base(f), summary, shards)
				}
			}
		}
	}
	if parked == 0 {
		t.Error("no stream parked at the end of any capture")
	}
}

// readPackets decodes the frames of the capture file path as the capture
// reader does through gopacket's layers.
func readPackets(t *testing.T, path string) []decode.Packet {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := pcapfile.NewReader(f)
	if err != nil {
		return nil // not a capture (a fixture of a broken file)
	}
	defer src.Close()
	var (
		d   = decode.Decoder{LayersOnly: true}
		rec pcapfile.Record
		out []decode.Packet
	)
	for frame := 1; src.Next(&rec) == nil; frame++ {
		p := decode.Packet{Pos: model.Pos{Frame: frame}, Time: rec.Time()}
		if link := src.LinkType(rec.Iface); decode.SupportedLink(link) {
			_ = d.Decode(link, rec.Data, rec.Cut(), &p)
		}
		out = append(out, p)
	}
	return out
}

// BenchmarkParkCodec measures a stream parked and brought back: encoded
// into its record and decoded, on streams like those of a capture,
// most of their words like a template's.
func BenchmarkParkCodec(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	ss := make([]stream, 1024)
	for i := range ss {
		s := &ss[i]
		ns := int64(i) * 1e6
		s.seq, s.packets, s.bytes = 1+i*11, 10, [2]int64{27, 40}
		s.first, s.segBuf[0], s.segBuf[1] = seg{ns, uint64(i * 11)}, seg{ns + 5e3, uint64(i*11 + 1)}, seg{ns + 5e4, uint64(i*11 + 2)}
		s.last, s.lastNow, s.lastIdx, s.mruSYN = ns+9e5, ns+9e5, i*11+10, ns
		s.base = [2]uint32{rng.Uint32(), rng.Uint32()}
		s.nextSeq, s.synISN = [2]uint32{s.base[0] + 29, s.base[1] + 42}, s.base
		s.nSYN[0], s.nSYNACK[1], s.hash = 1, 1, rng.Uint32()
		s.key, _ = decode.KeyOf(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), uint16(40000+i)),
			netip.MustParseAddrPort("10.1.0.2:8080"))
		s.history, s.nHist = [12]byte{0, 3, 5, 6, 4, 8, 9, 7}, 8
	}
	buf := make([]byte, len(ss)*parkMax+parkMax)
	at := make([]int, len(ss))
	var tmpl [streamWords]uint64
	var scratch, got stream
	b.ResetTimer()
	for range b.N {
		n := 0
		for i := range ss {
			at[i] = n
			n += encodeStream(buf[n:], &ss[i], &scratch, &tmpl)
		}
		for i := range ss {
			decodeStream(buf[at[i]:], &got, &tmpl)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ss)), "ns/stream")
}

// transform changes each word wordKind says it transforms, and leaves
// the raw ones; a word changes no other but through the bases (and the
// last packet's time the tracker's time at it); untransform undoes it:
// the lines that transform the words one by one, and wordKind, which
// makes the template, agree.
func TestTransformKinds(t *testing.T) {
	b := bases{ns: 5, pos: 7, seq: 11, seqs: 13<<32 | 17}
	var zero [streamWords]uint64
	tz := zero
	transform(&tz, &b)
	const v = 0x0102030405060708
	for i := range streamWords {
		w := zero
		w[i] = v
		tw := w
		transform(&tw, &b)
		if changed := tw[i] != v; changed != (wordKind[i] != wordRaw) {
			t.Errorf("word %d (kind %d): transformed %v", i, wordKind[i], changed)
		}
		for j := range tw {
			if j != i && tw[j] != tz[j] && !(i == wordLast && j == wordLastNow) {
				t.Errorf("word %d set: word %d changed", i, j)
			}
		}
		untransform(&tw, &b)
		if tw != w {
			t.Errorf("word %d set: untransform gives %x, want %x", i, tw, w)
		}
	}
}
