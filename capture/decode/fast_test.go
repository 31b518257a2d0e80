package decode

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/capture/pcapfile"
	"github.com/netmortem/netmortem/internal/testutil"
)

// fuzzLinks are the link types FuzzFastDecode decodes a frame as, chosen
// by its first argument.
var fuzzLinks = []layers.LinkType{
	layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2,
	layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6,
	layers.LinkTypeNull, layers.LinkTypeLoop, linkTypeNFLOG,
}

// captureFrames returns up to limit frames of every capture under the
// given directories, each with the index of its link type in fuzzLinks.
func captureFrames(t testing.TB, limit int, dirs ...string) (links []uint8, frames [][]byte) {
	t.Helper()
	index := map[layers.LinkType]uint8{}
	for i, l := range fuzzLinks {
		index[l] = uint8(i)
	}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || !(strings.HasSuffix(path, ".pcap") || strings.HasSuffix(path, ".pcapng") || strings.HasSuffix(path, ".pcap.gz")) {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			src, err := pcapfile.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil // a deliberately broken capture
			}
			defer src.Close()
			var rec pcapfile.Record
			for n := 0; n < limit; n++ {
				if err := src.Next(&rec); err != nil {
					break
				}
				if i, ok := index[src.LinkType(rec.Iface)]; ok {
					links, frames = append(links, i), append(frames, bytes.Clone(rec.Data))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return links, frames
}

// decodeBoth decodes a frame with the hand-decoded headers and with
// gopacket's layers only, and fails unless both give the same Packet and
// the same error.
func decodeBoth(t *testing.T, link layers.LinkType, data []byte) {
	t.Helper()
	var fast, slow Decoder
	slow.LayersOnly = true
	var pf, ps Packet
	ef := fast.decode(link, bytes.Clone(data), &pf)
	es := slow.decode(link, bytes.Clone(data), &ps)
	if (ef == nil) != (es == nil) || (ef != nil && ef.Error() != es.Error()) {
		t.Fatalf("link %d frame %x: error %v, gopacket's layers give %v", link, data, ef, es)
	}
	if ef != nil && errors.Is(ef, errShort) != errors.Is(es, errShort) {
		t.Fatalf("link %d frame %x: error %v is not the same as %v", link, data, ef, es)
	}
	if !reflect.DeepEqual(pf, ps) {
		t.Fatalf("link %d frame %x:\ndecoded       %+v\ngopacket's is %+v", link, data, pf, ps)
	}
}

// Every frame of the fixture captures decodes the same by hand and through
// gopacket's layers, and the hand decoder takes most of them (so that the
// comparison is not vacuous).
func TestFastDecodeFixtures(t *testing.T) {
	root := testutil.Root()
	links, frames := captureFrames(t, 1<<30, filepath.Join(root, "fixtures"))
	if len(frames) < 1000 {
		t.Fatalf("only %d frames in the fixture captures", len(frames))
	}
	fast := 0
	for i, data := range frames {
		decodeBoth(t, fuzzLinks[links[i]], data)
		if typ, payload, err := etherHeader(data); fuzzLinks[links[i]] == layers.LinkTypeEthernet && err == nil && typ == layers.EthernetTypeIPv4 {
			if _, ok := fastIPv4(payload); ok {
				fast++
			}
		}
	}
	if fast < len(frames)/4 {
		t.Errorf("the hand decoder read %d of %d frames", fast, len(frames))
	}
}

// FuzzFastDecode holds the hand-decoded headers equal to gopacket's layers
// on any frame, seeded with the frames of the fixture captures.
func FuzzFastDecode(f *testing.F) {
	links, frames := captureFrames(f, 64, filepath.Join(testutil.Root(), "fixtures"))
	for i, data := range frames {
		f.Add(links[i], data)
	}
	// IPv6 with a hop-by-hop header (router alert, PadN) before ICMPv6
	// and before TCP, which the fixtures lack.
	v6 := func(plen byte, hbh, rest []byte) []byte {
		b := []byte{0x60, 0, 0, 0, 0, plen, 0, 1}
		b = append(b, bytes.Repeat([]byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 2)...)
		return append(append(b, hbh...), rest...)
	}
	raw := uint8(3) // fuzzLinks[3], raw IP
	f.Add(raw, v6(32, []byte{58, 0, 5, 2, 0, 0, 1, 0}, []byte{143, 0, 0, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x16}))
	f.Add(raw, v6(28, []byte{6, 0, 1, 4, 0, 0, 0, 0}, []byte{0x9c, 0x40, 0x1f, 0x90, 0, 0, 3, 0xe8, 0, 0, 0, 0, 0x50, 0x02, 0xfa, 0xf0, 0, 0, 0, 0}))
	f.Add(raw, v6(16, []byte{6, 0, 0xc2, 4, 0, 1, 0, 0}, []byte{0x9c, 0x40, 0x1f, 0x90, 0, 0, 3, 0xe8}))
	f.Fuzz(func(t *testing.T, link uint8, data []byte) {
		decodeBoth(t, fuzzLinks[int(link)%len(fuzzLinks)], data)
	})
}

// An IPv6 hop-by-hop header with a router alert is read by hand, up to the
// TCP header after it; one with a jumbo payload option is left to gopacket.
func TestFastIPv6HopByHop(t *testing.T) {
	hdr := append([]byte{0x60, 0, 0, 0, 0, 28, 0, 1}, make([]byte, 32)...)
	tcp := []byte{0x9c, 0x40, 0x1f, 0x90, 0, 0, 3, 0xe8, 0, 0, 0, 0, 0x50, 0x02, 0xfa, 0xf0, 0, 0, 0, 0}
	frame := append(append(bytes.Clone(hdr), 6, 0, 5, 2, 0, 0, 1, 0), tcp...)
	l, ok := fastIPv6(frame)
	if !ok || l.proto != layers.IPProtocolTCP || l.reported != 20 || !bytes.Equal(l.data, tcp) {
		t.Errorf("router alert: %v %+v", ok, l)
	}
	decodeBoth(t, layers.LinkTypeRaw, frame)
	var d Decoder
	var p Packet
	if err := d.decode(layers.LinkTypeRaw, frame, &p); err != nil || p.Proto != "tcp" || p.Src.Port() != 40000 || p.Flags != SYN {
		t.Errorf("decoded %+v, %v", p, err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = d.decode(layers.LinkTypeRaw, frame, &p) }); n != 0 {
		t.Errorf("%v allocations a frame", n)
	}
	syn := innerSYN(t, true)
	if n := testing.AllocsPerRun(100, func() { _ = d.decode(layers.LinkTypeEthernet, syn, &p) }); n != 0 || p.Proto != "tcp" {
		t.Errorf("IPv4 SYN: %v allocations a frame, proto %q", n, p.Proto)
	}
	jumbo := append(append(bytes.Clone(hdr), 6, 0, 0xc2, 4, 0, 1, 0, 0), tcp...)
	if _, ok := fastIPv6(jumbo); ok {
		t.Error("a jumbo payload option was read by hand")
	}
	decodeBoth(t, layers.LinkTypeRaw, jumbo)
}

// BenchmarkDecode decodes the frames of the fixture captures with the
// hand-decoded headers and with gopacket's layers only.
func BenchmarkDecode(b *testing.B) {
	links, frames := captureFrames(b, 1<<30, filepath.Join(testutil.Root(), "fixtures"))
	for _, c := range []struct {
		name       string
		LayersOnly bool
	}{{"hand", false}, {"layers", true}} {
		b.Run(c.name, func(b *testing.B) {
			d := Decoder{LayersOnly: c.LayersOnly}
			b.ReportAllocs()
			for b.Loop() {
				for i, data := range frames {
					var p Packet
					_ = d.decode(fuzzLinks[links[i]], data, &p)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "ns/frame")
		})
	}
}
