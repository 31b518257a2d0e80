package capture

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/internal/testutil"
)

// hotBoth reads a frame with hotTCP and, as the reading stage does when
// hotTCP declines it, decodes it into a Packet and prepares it. Where
// hotTCP takes the frame, the frame must decode without error to a TCP
// segment, and both must give the same segment. It reports whether hotTCP
// took the frame.
func hotBoth(t *testing.T, link layers.LinkType, data []byte, cut int) bool {
	t.Helper()
	var hot tcpSeg
	ok := hotTCP(link, bytes.Clone(data), cut, &hot)
	var d decoder
	var p Packet
	err := d.decodeCut(link, bytes.Clone(data), cut, &p)
	tr := NewTracker("f.pcap", Options{})
	var slow tcpSeg
	isSeg := tr.prepare(&p, &slow)
	if !ok {
		return false
	}
	if err != nil || !isSeg || slow.lookup {
		t.Fatalf("link %d frame %x: read by hand as a TCP segment, but decodes to %+v, %v", link, data, p, err)
	}
	// What the reading stage sets apart from the frame's bytes.
	slow.idx, slow.ns, slow.now, slow.frame, slow.line, slow.file = 0, 0, 0, 0, 0, 0
	if !reflect.DeepEqual(hot, slow) {
		t.Fatalf("link %d frame %x:\nread by hand %+v\ndecoded      %+v", link, data, hot, slow)
	}
	if h := hashKey(&hot.key); h != hot.hash {
		t.Fatalf("link %d frame %x: hash %x, hashKey gives %x", link, data, hot.hash, h)
	}
	return true
}

// Every frame of the fixture captures that hotTCP reads gives the segment
// that decoding it gives, and hotTCP reads most TCP frames.
func TestHotTCPFixtures(t *testing.T) {
	links, frames := captureFrames(t, 1<<30, filepath.Join(testutil.Root(), "fixtures"), "testdata")
	hot, tcp := 0, 0
	for i, data := range frames {
		if hotBoth(t, fuzzLinks[links[i]], data, 0) {
			hot++
		}
		var d decoder
		var p Packet
		if d.decode(fuzzLinks[links[i]], data, &p) == nil && p.Proto == "tcp" {
			tcp++
		}
	}
	if tcp < 1000 || hot < tcp*8/10 {
		t.Errorf("hotTCP read %d of %d TCP frames", hot, tcp)
	}
}

// FuzzHotTCP holds hotTCP equal to decoding and preparing a frame, seeded
// with the frames of the fixture captures, VLAN-tagged frames and IPv6
// with extension headers.
func FuzzHotTCP(f *testing.F) {
	links, frames := captureFrames(f, 64, filepath.Join(testutil.Root(), "fixtures"), "testdata")
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

// Every capture of the fixtures gives the same Result read through the
// hand-decoded headers as through gopacket's layers alone.
func TestHotPathSameResultFixtures(t *testing.T) {
	sameHotAndSlow(t, 20, filepath.Join(testutil.Root(), "fixtures"), "testdata")
}

// So does every capture of the shared corpus.
func TestHotPathSameResultCorpus(t *testing.T) {
	sameHotAndSlow(t, 100, testutil.CorpusDir(t, "pcap"))
}

// sameHotAndSlow reads every capture under dirs (at least least of them)
// through the hand-decoded headers and through gopacket's layers alone,
// with and without summary mode, and fails unless both give the same
// Result and error.
func sameHotAndSlow(t *testing.T, least int, dirs ...string) {
	t.Helper()
	files := captureFiles(t, dirs...)
	if len(files) < least {
		t.Fatalf("only %d captures under %v", len(files), dirs)
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, summary := range []bool{false, true} {
			opts := Options{Shards: 2, Summary: Summary{Enabled: summary}}
			fast, ferr := read(context.Background(), bytes.NewReader(b), "c.pcap", opts, false)
			slow, serr := read(context.Background(), bytes.NewReader(b), "c.pcap", opts, true)
			if fmt.Sprint(ferr) != fmt.Sprint(serr) {
				t.Errorf("%s: error %v, through gopacket's layers %v", path, ferr, serr)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Errorf("%s, summary %v: the result differs from gopacket's layers'", path, summary)
			}
		}
	}
}

// captureFiles lists the packet captures (pcap or pcapng, gzip'd or not)
// under roots.
func captureFiles(t testing.TB, roots ...string) []string {
	t.Helper()
	return testutil.FilesByHead(t, isCapture, roots...)
}

// isCapture reports whether a file, by its path and first bytes, is a
// packet capture.
func isCapture(path string, head []byte) bool {
	_, ok := Sniff(head)
	return ok || head[0] == 0x1f && head[1] == 0x8b && strings.Contains(path, ".pcap")
}
