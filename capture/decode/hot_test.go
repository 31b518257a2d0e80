package decode

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/internal/testutil"
)

// hotBoth reads a frame with HotTCP and, as capture reading does when
// HotTCP declines it, decodes it into a Packet, and makes the Segment of
// that. Where HotTCP takes the frame, the frame must decode without error
// to a TCP segment outside any overlay, and both must give the same
// segment. It reports whether HotTCP took the frame.
func hotBoth(t *testing.T, link layers.LinkType, data []byte, cut int) bool {
	t.Helper()
	var hot Segment
	ok := HotTCP(link, bytes.Clone(data), cut, &hot)
	var d Decoder
	var p Packet
	err := d.Decode(link, bytes.Clone(data), cut, &p)
	if !ok {
		if link == layers.LinkTypeEthernet && HotEthIPv4(bytes.Clone(data), cut, &hot) {
			t.Fatalf("frame %x: HotEthIPv4 reads it, HotTCP does not", data)
		}
		return false
	}
	if err != nil || p.Proto != "tcp" || p.Outer != nil {
		t.Fatalf("link %d frame %x: read by hand as a TCP segment, but decodes to %+v, %v", link, data, p, err)
	}
	var slow Segment
	slow.Set(&p)
	if !reflect.DeepEqual(hot, slow) {
		t.Fatalf("link %d frame %x:\nread by hand %+v\ndecoded      %+v", link, data, hot, slow)
	}
	if h := hot.Key.Hash(); h != hot.Hash {
		t.Fatalf("link %d frame %x: hash %x, Key.Hash gives %x", link, data, hot.Hash, h)
	}
	// HotEthIPv4, HotTCP's commonest frame alone, reads it as HotTCP or
	// leaves it to HotTCP.
	var eth Segment
	if link == layers.LinkTypeEthernet && HotEthIPv4(bytes.Clone(data), cut, &eth) && !reflect.DeepEqual(eth, hot) {
		t.Fatalf("link %d frame %x:\nHotEthIPv4 %+v\nHotTCP     %+v", link, data, eth, hot)
	}
	return true
}

// Every frame of the fixture captures that HotTCP reads gives the segment
// that decoding it gives, and HotTCP reads most TCP frames.
func TestHotTCPFixtures(t *testing.T) {
	links, frames := captureFrames(t, 1<<30, filepath.Join(testutil.Root(), "fixtures"))
	hot, tcp := 0, 0
	for i, data := range frames {
		if hotBoth(t, fuzzLinks[links[i]], data, 0) {
			hot++
		}
		var d Decoder
		var p Packet
		if d.decode(fuzzLinks[links[i]], data, &p) == nil && p.Proto == "tcp" {
			tcp++
		}
	}
	if tcp < 1000 || hot < tcp*8/10 {
		t.Errorf("HotTCP read %d of %d TCP frames", hot, tcp)
	}
}

// FuzzHotTCP holds HotTCP equal to decoding a frame, seeded
// with the frames of the fixture captures, VLAN-tagged frames and IPv6
// with extension headers.
func FuzzHotTCP(f *testing.F) {
	links, frames := captureFrames(f, 64, filepath.Join(testutil.Root(), "fixtures"))
	for i, data := range frames {
		f.Add(links[i], data)
	}
	tcp := []byte{0x9c, 0x40, 0x1f, 0x90, 0, 0, 3, 0xe8, 0, 0, 0, 0, 0x60, 0x02, 0xfa, 0xf0, 0, 0, 0, 0, 2, 4, 5, 0xb4}
	v4 := append([]byte{0x45, 0, 0, 44, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2}, tcp...)
	eth := func(tags int, typ uint16, payload []byte) []byte {
		b := make([]byte, 12, 64)
		for range tags {
			b = append(b, 0x81, 0x00, 0, 7)
		}
		return append(append(b, byte(typ>>8), byte(typ)), payload...)
	}
	f.Add(uint8(0), eth(1, 0x0800, v4))
	f.Add(uint8(0), eth(2, 0x0800, v4))
	f.Add(uint8(0), eth(3, 0x0800, v4))
	v6 := append([]byte{0x60, 0, 0, 0, 0, 32, 60, 64}, bytes.Repeat([]byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 2)...)
	v6 = append(append(v6, 6, 0, 1, 4, 0, 0, 0, 0), tcp...)
	f.Add(uint8(0), eth(0, 0x86dd, v6))
	f.Add(uint8(3), v6)
	// link's high bits give the bytes the frame had on the wire past
	// those captured.
	f.Add(uint8(0x50), eth(0, 0x0800, v4[:30]))
	f.Fuzz(func(t *testing.T, link uint8, data []byte) {
		hotBoth(t, fuzzLinks[int(link)%len(fuzzLinks)], data, int(link>>4)*7)
	})
}
