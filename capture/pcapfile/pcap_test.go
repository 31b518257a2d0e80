package pcapfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/netmortem/netmortem/internal/testutil"
)

// pcapRecordsOf reads every record of a classic pcap with pcapRecords,
// as "frame: time len bytes", and the error that ended the reading.
func pcapRecordsOf(r io.Reader) ([]string, error) {
	src, err := newPcapRecords(bufio.NewReaderSize(r, 64<<10))
	if err != nil {
		return nil, err
	}
	var out []string
	var rec Record
	for {
		if err := src.next(&rec); err != nil {
			return out, err
		}
		out = append(out, fmt.Sprintf("%v %d %x", rec.Time(), len(rec.Data), rec.Data))
	}
}

// pcapgoRecordsOf is pcapRecordsOf with pcapgo's reader.
func pcapgoRecordsOf(r io.Reader) ([]string, error) {
	src, err := pcapgo.NewReader(r)
	if err != nil {
		return nil, err
	}
	var out []string
	for {
		data, ci, err := src.ZeroCopyReadPacketData()
		if err != nil {
			return out, err
		}
		out = append(out, fmt.Sprintf("%v %d %x", ci.Timestamp, len(data), data))
	}
}

// sameRecords fails unless pcapRecords reads b as pcapgo does: the same
// records, times and bytes, and the same error, but where pcapgo ends
// silently at a record whose header is followed by nothing, which
// pcapRecords reports as cut short, and where pcapgo stops at a record
// whose capture length exceeds its original length, which pcapRecords
// reads as captured, as libpcap does: pcapgo is given such records with
// their original length raised to their capture length.
func sameRecords(t *testing.T, b []byte) {
	t.Helper()
	got, gerr := pcapRecordsOf(bytes.NewReader(b))
	want, werr := pcapgoRecordsOf(bytes.NewReader(pcapForPcapgo(b)))
	if werr == io.EOF && errors.Is(gerr, io.ErrUnexpectedEOF) && len(got) == len(want) {
		gerr = io.EOF // the header of a last record without its bytes
	}
	if !strings.EqualFold(fmt.Sprint(gerr), fmt.Sprint(werr)) { // pcapgo capitalizes its header errors
		t.Fatalf("%x: error %v, pcapgo's %v", b, gerr, werr)
	}
	if len(got) != len(want) {
		t.Fatalf("%x: %d records, pcapgo reads %d", b, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%x: record %d is %s, pcapgo reads %s", b, i+1, got[i], want[i])
		}
	}
}

// pcapForPcapgo is b with the original length of each record that states
// one below its capture length raised to it, as far as the records can be
// walked.
func pcapForPcapgo(b []byte) []byte {
	b = bytes.Clone(b)
	if len(b) < 24 {
		return b
	}
	var o binary.ByteOrder = binary.LittleEndian
	if m := binary.BigEndian.Uint32(b); m == pcapMagicMicro || m == pcapMagicNano {
		o = binary.BigEndian
	}
	for off := 24; off+16 <= len(b); {
		caplen := o.Uint32(b[off+8:])
		if caplen > o.Uint32(b[off+12:]) {
			o.PutUint32(b[off+12:], caplen)
		}
		if uint64(caplen) > uint64(len(b)-off-16) {
			break
		}
		off += 16 + int(caplen)
	}
	return b
}

// pcapFile is a classic pcap of the given records, little-endian with
// microseconds unless big or nano.
func pcapFile(big, nano bool, snaplen uint32, records ...[]byte) []byte {
	var order binary.AppendByteOrder = binary.LittleEndian
	if big {
		order = binary.BigEndian
	}
	magic := uint32(pcapMagicMicro)
	if nano {
		magic = pcapMagicNano
	}
	b := order.AppendUint32(nil, magic)
	b = order.AppendUint16(b, 2)
	b = order.AppendUint16(b, 4)
	b = append(b, make([]byte, 8)...)
	b = order.AppendUint32(b, snaplen)
	b = order.AppendUint32(b, 1)
	for i, r := range records {
		b = order.AppendUint32(b, 1700000000+uint32(i))
		b = order.AppendUint32(b, 999999+uint32(i)*1000)
		b = order.AppendUint32(b, uint32(len(r)))
		b = order.AppendUint32(b, uint32(len(r)+10))
		b = append(b, r...)
	}
	return b
}

// pcapRecords reads what pcapgo reads: every fixture capture, both byte
// orders and resolutions, records straddling its buffer's refills and
// growing it, records past libpcap's snap length, and the errors of
// truncated and impossible records.
func TestPcapRecordsAsPcapgo(t *testing.T) {
	files := captureFiles(t, filepath.Join(testutil.Root(), "fixtures"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if kind, ok := Sniff(b); ok && kind == "pcap" {
			sameRecords(t, b)
			n++
		}
	}
	if n < 10 {
		t.Fatalf("only %d pcap fixtures", n)
	}
	rec := func(n int) []byte { return bytes.Repeat([]byte{byte(n)}, n) }
	var many [][]byte
	for i := range 3000 {
		many = append(many, rec(i%1500))
	}
	for _, big := range []bool{false, true} {
		for _, nano := range []bool{false, true} {
			file := pcapFile(big, nano, 65535, many...)
			sameRecords(t, file)
			sameRecords(t, file[:len(file)-700]) // cut in a record's bytes
			sameRecords(t, file[:len(file)-1497])
		}
	}
	// A record longer than the first buffer and than libpcap's snap
	// length, which a file with a larger snap length may hold.
	sameRecords(t, pcapFile(false, false, 1<<20, rec(10), bytes.Repeat([]byte{7}, 300000), rec(20)))
	// Past the file's snap length and libpcap's; longer than the packet.
	sameRecords(t, pcapFile(false, false, 65535, rec(10), bytes.Repeat([]byte{7}, 300000)))
	bad := pcapFile(false, false, 65535, rec(10), rec(20))
	binary.LittleEndian.PutUint32(bad[24+16+10+12:], 5)
	sameRecords(t, bad)
	// Reads that return a byte at a time.
	file := pcapFile(false, true, 65535, many[:50]...)
	got, err := pcapRecordsOf(iotest.OneByteReader(bytes.NewReader(file)))
	want, _ := pcapgoRecordsOf(bytes.NewReader(file))
	if err != io.EOF || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("one byte at a time: %d records, %v", len(got), err)
	}
}

// A corrupt record length does not make pcapRecords allocate more than
// the input holds.
func TestPcapRecordsHugeLength(t *testing.T) {
	file := pcapFile(false, false, 0xffffffff, []byte{1, 2, 3})
	binary.LittleEndian.PutUint32(file[24+8:], 0xfffffff0)
	binary.LittleEndian.PutUint32(file[24+12:], 0xfffffff0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := pcapRecordsOf(bytes.NewReader(file)); err == nil || err == io.EOF {
		t.Fatalf("error %v", err) // cut short, or on 32 bits a length past an int
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("%d bytes allocated for a %d-byte file", n, len(file))
	}
}

// FuzzPcapRecords holds pcapRecords to pcapgo's reader on any input.
func FuzzPcapRecords(f *testing.F) {
	f.Add(pcapFile(false, false, 65535, []byte{1, 2, 3}, []byte{4}))
	f.Add(pcapFile(true, true, 128, bytes.Repeat([]byte{9}, 200)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
			return // pcapgo opens gzip itself; feed does before pcapRecords
		}
		sameRecords(t, b)
	})
}

// captureFiles lists the packet captures (pcap or pcapng, gzip'd or not)
// under roots.
func captureFiles(t testing.TB, roots ...string) []string {
	t.Helper()
	return testutil.FilesByHead(t, func(path string, head []byte) bool {
		_, ok := Sniff(head)
		return ok || head[0] == 0x1f && head[1] == 0x8b && strings.Contains(path, ".pcap")
	}, roots...)
}
