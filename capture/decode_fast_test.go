package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

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
			var r io.Reader = bytes.NewReader(b)
			if strings.HasSuffix(path, ".gz") {
				if r, err = gzip.NewReader(r); err != nil {
					return err
				}
			}
			br := bufio.NewReader(r)
			head, _ := br.Peek(4)
			kind, ok := Sniff(head)
			if !ok {
				return nil // a deliberately broken capture
			}
			src, linkOf, _, err := openPackets(br, kind)
			if err != nil {
				return nil
			}
			for n := 0; n < limit; n++ {
				data, ci, err := src.ZeroCopyReadPacketData()
				if err != nil {
					break
				}
				if i, ok := index[linkOf(ci.InterfaceIndex)]; ok {
					links, frames = append(links, i), append(frames, bytes.Clone(data))
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
	var fast, slow decoder
	slow.layersOnly = true
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
	links, frames := captureFrames(t, 1<<30, filepath.Join(root, "fixtures"), "testdata")
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
	links, frames := captureFrames(f, 64, filepath.Join(testutil.Root(), "fixtures"), "testdata")
	for i, data := range frames {
		f.Add(links[i], data)
	}
	f.Fuzz(func(t *testing.T, link uint8, data []byte) {
		decodeBoth(t, fuzzLinks[int(link)%len(fuzzLinks)], data)
	})
}
