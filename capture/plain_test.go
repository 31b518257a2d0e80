package capture_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/testutil"
)

// The plain records of a pcap file, taken a run at a time straight from
// the read buffer (Stage.HotPcap), give the same Result and errors as each
// record read and handed on alone, and as gopacket's layers: on some
// 30,000 frames read through several buffers and windows, with ARP and
// ICMP between the TCP segments, clocks going back, records whose
// original length is below their capture length (read by the reader,
// which counts them), VLAN-tagged frames and a last record cut short.
func TestPlainRecordsSamePaths(t *testing.T) {
	busy := busyCapture(t)
	le := binary.LittleEndian
	lying, tagged := bytes.Clone(busy), bytes.Clone(busy[:24])
	n := 0
	for o := 24; o < len(busy); n++ {
		caplen := int(le.Uint32(busy[o+8:]))
		rec := busy[o : o+16+caplen]
		if n%997 == 500 {
			le.PutUint32(lying[o+12:], uint32(caplen-1))
		}
		if n%1009 == 7 || n%4096 == 0 && n > 0 {
			// An 802.1Q tag: the frame goes through decode.HotTCP,
			// here and there and first after a window.
			h := bytes.Clone(rec[:16])
			le.PutUint32(h[8:], uint32(caplen+4))
			le.PutUint32(h[12:], le.Uint32(rec[12:])+4)
			h = append(h, rec[16:28]...)
			h = append(h, 0x81, 0x00, 0x00, 0x07)
			rec = append(h, rec[28:]...)
		}
		tagged = append(tagged, rec...)
		o += 16 + caplen
	}
	// A file whose first frame is not a plain TCP segment has its first
	// one taken by Stage.HotPcap through Stage.Hot.
	arpFirst := withARPFirst(busy)
	// The same frames captured on tcpdump's "any" device (Linux SLL2),
	// read through decode.HotTCP.
	sll2 := asSLL2(busy)
	type read struct {
		name    string
		b       []byte
		shards  int
		summary bool
	}
	var reads []read
	for _, name := range []string{"busy", "lying", "tagged", "cut", "arp first", "sll2"} {
		b := map[string][]byte{"busy": busy, "lying": lying, "tagged": tagged, "cut": busy[:len(busy)-7], "arp first": arpFirst, "sll2": sll2}[name]
		for _, shards := range []int{1, 3} {
			for _, summary := range []bool{false, true} {
				reads = append(reads, read{name, b, shards, summary})
			}
		}
	}
	for _, r := range testutil.RaceSample(t, 4, reads) {
		if err := capture.SamePaths(r.b, capture.Options{Shards: r.shards, Summary: capture.Summary{Enabled: r.summary}}); err != nil {
			t.Errorf("%s, %d shards, summary %v: %v", r.name, r.shards, r.summary, err)
		}
	}
}

// So do the files of a rotated series, each of whose first segments goes
// through Stage.Hot, which starts the file's times, the second with a
// window ending at its first packets.
func TestPlainRecordsSeries(t *testing.T) {
	busy := busyCapture(t)
	arpFirst := splitRecords(t, busy, 5)
	for i := range arpFirst {
		arpFirst[i] = withARPFirst(arpFirst[i])
	}
	for _, parts := range testutil.RaceSample(t, 3, [][][]byte{arpFirst, splitRecords(t, busy, 3), splitRecords(t, busy, 7)}) {
		var in []capture.SeriesFile
		for i, p := range parts {
			in = append(in, capture.SeriesFile{Name: fmt.Sprintf("busy.pcap%d", i), Open: func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(p)), nil
			}})
		}
		for _, summary := range []bool{false, true} {
			opts := capture.Options{Shards: 2, Summary: capture.Summary{Enabled: summary}}
			run, runInfos, runErr := capture.ReadSeries(context.Background(), in, opts)
			one, oneInfos, oneErr := capture.ReadSeriesRecordByRecord(context.Background(), in, opts)
			if fmt.Sprint(runErr) != fmt.Sprint(oneErr) {
				t.Errorf("%d files, summary %v: error %v, record by record %v", len(parts), summary, runErr, oneErr)
			}
			if !reflect.DeepEqual(run, one) || !reflect.DeepEqual(runInfos, oneInfos) {
				t.Errorf("%d files, summary %v: the result differs from that of the records read one by one", len(parts), summary)
			}
		}
	}
}

// withARPFirst returns the pcap b with an ARP request as its first record,
// at the time of the record it comes before.
func withARPFirst(b []byte) []byte {
	arp := arpFrame(1, netip.MustParseAddr("10.9.9.1"), netip.MustParseAddr("10.9.9.2"))
	rec := bytes.Clone(b[24:32])
	rec = binary.LittleEndian.AppendUint32(rec, uint32(len(arp)))
	rec = binary.LittleEndian.AppendUint32(rec, uint32(len(arp)))
	return slices.Concat(b[:24], rec, arp, b[24:])
}

// asSLL2 returns the pcap b of Ethernet frames as a pcap of Linux SLL2
// frames: the Ethernet header replaced by an SLL2 header of the same
// protocol and source address.
func asSLL2(b []byte) []byte {
	le := binary.LittleEndian
	out := le.AppendUint32(bytes.Clone(b[:20]), 276) // LINKTYPE_LINUX_SLL2
	for o := 24; o < len(b); {
		caplen := int(le.Uint32(b[o+8:]))
		frame := b[o+16 : o+16+caplen]
		sll := slices.Concat(frame[12:14], []byte{0, 0, 0, 0, 0, 3, 0, 1, 4, 6}, frame[6:12], []byte{0, 0})
		out = append(out, b[o:o+8]...)
		out = le.AppendUint32(out, uint32(caplen-14+20))
		out = le.AppendUint32(out, le.Uint32(b[o+12:])-14+20)
		out = append(append(out, sll...), frame[14:]...)
		o += 16 + caplen
	}
	return out
}

func FuzzPlainRecords(f *testing.F) {
	for _, p := range []string{"captures/handshakes.pcap", "incidents/ephemeral-nodeport/capture.pcap"} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 4096)])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var res [2]*capture.Result
		var errs [2]error
		for i, read := range []func(context.Context, io.Reader, string, capture.Options) (*capture.Result, error){capture.Read, capture.ReadRecordByRecord} {
			res[i], errs[i] = read(context.Background(), bytes.NewReader(b), "f.pcap", capture.Options{Shards: 2})
		}
		if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
			t.Fatalf("error %v, record by record %v", errs[0], errs[1])
		}
		if !reflect.DeepEqual(res[0], res[1]) {
			t.Fatal("the result differs from that of the records read one by one")
		}
	})
}
