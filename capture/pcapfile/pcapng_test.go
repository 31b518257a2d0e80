package pcapfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/netmortem/netmortem/internal/testutil"
)

// ngRead is what a pcapng reader reads of a file: each record as "time
// interface length bytes", the link type and filter of each interface of
// the last section, and the error that ended the reading (io.EOF at a
// clean end).
type ngRead struct {
	records []string
	ifaces  []string
	err     error
}

func ngRecordsOf(b []byte) ngRead {
	src, err := newPcapngRecords(bufio.NewReaderSize(bytes.NewReader(b), 64<<10))
	if err != nil {
		return ngRead{err: err}
	}
	var out ngRead
	var rec Record
	for {
		if out.err = src.next(&rec); out.err != nil {
			break
		}
		out.records = append(out.records, fmt.Sprintf("%d %d %x at %v", rec.Iface, len(rec.Data), rec.Data, rec.Time()))
	}
	for _, f := range src.ifaces {
		out.ifaces = append(out.ifaces, fmt.Sprintf("%d %q", f.link, f.filter))
	}
	return out
}

func pcapgoNgRecordsOf(b []byte) ngRead {
	src, err := pcapgo.NewNgReader(bytes.NewReader(b), pcapgo.NgReaderOptions{SkipUnknownVersion: true, WantMixedLinkType: true})
	if err != nil {
		return ngRead{err: err}
	}
	var out ngRead
	for {
		data, ci, err := src.ZeroCopyReadPacketData()
		if out.err = err; err != nil {
			break
		}
		out.records = append(out.records, fmt.Sprintf("%d %d %x at %v", ci.InterfaceIndex, len(data), data, ci.Timestamp))
	}
	for i := range src.NInterfaces() {
		f, _ := src.Interface(i)
		out.ifaces = append(out.ifaces, fmt.Sprintf("%d %q", f.LinkType, f.Filter))
	}
	return out
}

// sameNgRecords fails unless pcapngRecords reads b as pcapgo's NgReader
// does: the same records, times and interfaces when pcapgo reads the whole
// file, and an error too when pcapgo stops at one, after the records
// pcapgo read before it or fewer (a block whose parts overrun its length,
// which pcapgo reads on into the next block, is an error at once). Where
// pcapngRecords follows the pcapng draft and libpcap rather than pcapgo,
// pcapgo reads the file as ngForPcapgo rewrites it; where it converts
// times exactly (binary resolutions finer than 2^-9), the times are left
// out, and TestPcapngBinaryResolution checks them.
func sameNgRecords(t *testing.T, b []byte) {
	t.Helper()
	forPcapgo, mayStop, exactTimes := ngForPcapgo(b)
	got, want := ngRecordsOf(b), pcapgoNgRecordsOf(forPcapgo)
	if exactTimes {
		for _, l := range [][]string{got.records, want.records} {
			for i, r := range l {
				l[i], _, _ = strings.Cut(r, " at ")
			}
		}
	}
	if mayStop && got.err != io.EOF && want.err == io.EOF {
		want.err = got.err // an error where pcapgo reads on
	}
	if (want.err == io.EOF) != (got.err == io.EOF) {
		t.Fatalf("%x: error %v, pcapgo's %v", b, got.err, want.err)
	}
	if len(got.records) > len(want.records) || !slices.Equal(got.records, want.records[:len(got.records)]) {
		t.Fatalf("%x: records\n%s\npcapgo's\n%s", b, strings.Join(got.records, "\n"), strings.Join(want.records, "\n"))
	}
	if want.err == io.EOF && (len(got.records) != len(want.records) || !slices.Equal(got.ifaces, want.ifaces)) {
		t.Fatalf("%x: %d records, interfaces %q; pcapgo's %d, %q", b, len(got.records), got.ifaces, len(want.records), want.ifaces)
	}
}

// ngForPcapgo rewrites a pcapng so that pcapgo reads it as pcapngRecords
// reads the original, where the two differ on purpose:
//   - a section of version 1.2 is read as 1.0, as the draft (4.1) says,
//     where pcapgo skips it: its minor version is made 0;
//   - an if_tsresol of 0 is 10^0, whole seconds, as libpcap and Wireshark
//     read it, where pcapgo reads microseconds: it is made 2^0;
//
// and it reports whether an interface has a binary time resolution finer
// than 2^-9, whose times pcapngRecords converts exactly where pcapgo's
// scale is off, and whether pcapngRecords may stop at an error where pcapgo
// reads on: at a decimal if_tsresol past 10^19, which a count of units a
// second cannot hold (libpcap refuses it too), or at a block read whole
// that is longer than maxNgBlock, not a whole number of 32-bit words, or
// whose length at its end is not the one at its start (pcapgo reads only
// the first).
func ngForPcapgo(b []byte) (out []byte, mayStop, exactTimes bool) {
	out = bytes.Clone(b)
	var o binary.ByteOrder = binary.LittleEndian
	for off := 0; off+12 <= len(out); {
		typ := o.Uint32(out[off:])
		if typ == ngSectionHeader {
			switch binary.LittleEndian.Uint32(out[off+8:]) {
			case ngByteOrderMagic:
				o = binary.LittleEndian
			case bits.ReverseBytes32(ngByteOrderMagic):
				o = binary.BigEndian
			default:
				return out, mayStop, exactTimes
			}
			if off+16 <= len(out) && o.Uint16(out[off+12:]) == 1 && o.Uint16(out[off+14:]) == 2 {
				o.PutUint16(out[off+14:], 0)
			}
		}
		length := int(o.Uint32(out[off+4:]))
		if length < 12 || length > len(out)-off {
			return out, mayStop, exactTimes
		}
		head := 8
		if typ == ngSectionHeader {
			head = 12
		}
		if read := typ == ngSectionHeader || ngReadsBlock(typ); read && (length > maxNgBlock || length%4 != 0 ||
			length-4 >= head && o.Uint32(out[off+length-4:]) != uint32(length)) {
			mayStop = true
		}
		if typ == ngInterface && length >= 20 {
			opts := out[off+16 : off+length-4]
			for len(opts) >= 4 {
				code, n := o.Uint16(opts), int(o.Uint16(opts[2:]))
				if code == 0 || 4+n > len(opts) {
					break
				}
				if v := opts[4:]; code == 9 && n >= 1 {
					switch {
					case v[0] == 0:
						v[0] = 0x80
					case v[0] < 0x80 && v[0] > 19:
						mayStop = true
					case v[0] > 0x80+9:
						exactTimes = true
					}
				}
				opts = opts[min(len(opts), 4+(n+3)&^3):]
			}
		}
		off += length
	}
	return out, mayStop, exactTimes
}

// Every pcapng of the fixtures and of the shared corpus (the pcapng test
// suite among them: both byte orders, several sections and interfaces,
// time resolutions and offsets, simple and obsolete packet blocks, name
// resolution and statistics blocks) reads the same with pcapngRecords as
// with pcapgo.
func TestPcapngRecordsAsPcapgo(t *testing.T) {
	dirs := []string{filepath.Join(testutil.Root(), "fixtures")}
	if base := filepath.Join(testutil.Root(), "..", "shared", "corpus", "pcap"); dirExists(base) {
		dirs = append(dirs, base)
	}
	n := 0
	for _, path := range captureFiles(t, dirs...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if kind, ok := Sniff(b); !ok || kind != "pcapng" {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) { sameNgRecords(t, b) })
		n++
	}
	if n < 2 {
		t.Fatalf("only %d pcapng captures", n)
	}
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// FuzzPcapngRecords holds pcapngRecords to pcapgo's NgReader on any
// input, seeded with the small pcapng captures of the fixtures and of the
// shared corpus when it is there.
func FuzzPcapngRecords(f *testing.F) {
	dirs := []string{filepath.Join(testutil.Root(), "fixtures")}
	if base := filepath.Join(testutil.Root(), "..", "shared", "corpus", "pcap"); dirExists(base) {
		dirs = append(dirs, base)
	}
	for _, path := range captureFiles(f, dirs...) {
		b, err := os.ReadFile(path)
		if err == nil && bytes.HasPrefix(b, []byte{0x0a, 0x0d, 0x0d, 0x0a}) && len(b) < 1<<16 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
			return // pcapgo opens gzip itself; feed does before the reader
		}
		sameNgRecords(t, b)
	})
}

// ngBlock is a pcapng block of the given type and body, little-endian,
// its body padded to 32 bits.
func ngBlock(typ uint32, body []byte) []byte {
	body = append(bytes.Clone(body), make([]byte, (4-len(body)%4)%4)...)
	n := uint32(12 + len(body))
	b := binary.LittleEndian.AppendUint32(nil, typ)
	b = binary.LittleEndian.AppendUint32(b, n)
	b = append(b, body...)
	return binary.LittleEndian.AppendUint32(b, n)
}

// ngOpt is a pcapng option, padded.
func ngOpt(code uint16, v []byte) []byte {
	b := binary.LittleEndian.AppendUint16(nil, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
	return append(append(b, v...), make([]byte, (4-len(v)%4)%4)...)
}

func ngSHB(major, minor uint16, opts ...[]byte) []byte {
	body := binary.LittleEndian.AppendUint32(nil, ngByteOrderMagic)
	body = binary.LittleEndian.AppendUint16(body, major)
	body = binary.LittleEndian.AppendUint16(body, minor)
	body = append(body, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	for _, o := range opts {
		body = append(body, o...)
	}
	return ngBlock(ngSectionHeader, body)
}

func ngIDB(link uint16, snaplen uint32, opts ...[]byte) []byte {
	body := binary.LittleEndian.AppendUint16(nil, link)
	body = append(body, 0, 0)
	body = binary.LittleEndian.AppendUint32(body, snaplen)
	for _, o := range opts {
		body = append(body, o...)
	}
	return ngBlock(ngInterface, body)
}

func ngEPB(iface uint32, ts uint64, data []byte, opts ...[]byte) []byte {
	body := binary.LittleEndian.AppendUint32(nil, iface)
	body = binary.LittleEndian.AppendUint32(body, uint32(ts>>32))
	body = binary.LittleEndian.AppendUint32(body, uint32(ts))
	body = binary.LittleEndian.AppendUint32(body, uint32(len(data)))
	body = binary.LittleEndian.AppendUint32(body, uint32(len(data)+10))
	body = append(body, data...)
	body = append(body, make([]byte, (4-len(data)%4)%4)...)
	for _, o := range opts {
		body = append(body, o...)
	}
	return ngBlock(ngEnhancedPacket, body)
}

// pcapngRecords reads what pcapgo reads of files made to try its edges:
// time resolutions and offsets, packet options, simple and obsolete
// packets, statistics and name resolution blocks, a section of another
// version skipped, several sections, and blocks cut or overrun.
func TestPcapngRecordsEdges(t *testing.T) {
	frame := bytes.Repeat([]byte{0xab}, 61)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	spb := ngBlock(ngSimplePacket, append(binary.LittleEndian.AppendUint32(nil, 61), frame...))
	opb := ngBlock(ngObsoletePacket, cat([]byte{1, 0, 0, 0}, binary.LittleEndian.AppendUint64(nil, 77<<32|5), binary.LittleEndian.AppendUint32(nil, 61), binary.LittleEndian.AppendUint32(nil, 61), frame))
	isb := ngBlock(ngStatistics, cat([]byte{0, 0, 0, 0}, make([]byte, 8), ngOpt(4, make([]byte, 8)), ngOpt(0, nil)))
	nrb := ngBlock(ngNameResolution, cat([]byte{1, 0, 9, 0, 10, 0, 0, 1}, []byte("a.b\x00\x00"), make([]byte, 3), []byte{0, 0, 0, 0}))
	files := map[string][]byte{
		"micro": cat(ngSHB(1, 0), ngIDB(1, 65535), ngEPB(0, 1700000000123456, frame)),
		"nano and offset": cat(ngSHB(1, 0), ngIDB(1, 0, ngOpt(9, []byte{9}), ngOpt(14, binary.LittleEndian.AppendUint64(nil, 100)), ngOpt(0, nil)),
			ngEPB(0, 1700000000123456789, frame, ngOpt(1, []byte("a comment")), ngOpt(2, []byte{1, 0, 0, 0}), ngOpt(0, nil))),
		"binary resolution":                   cat(ngSHB(1, 0), ngIDB(1, 0, ngOpt(9, []byte{0x80 | 20}), ngOpt(0, nil)), ngEPB(0, 0xffffffffffff, frame)),
		"binary resolution too high":          cat(ngSHB(1, 0), ngIDB(1, 0, ngOpt(9, []byte{0x80 | 64})), ngEPB(0, 1, frame)),
		"decimal resolution past 10^19":       cat(ngSHB(1, 0), ngIDB(1, 0, ngOpt(9, []byte{25})), ngEPB(0, 1<<62, frame)),
		"decimal resolution 10^19":            cat(ngSHB(1, 0), ngIDB(1, 0, ngOpt(9, []byte{19}), ngOpt(0, nil)), ngEPB(0, 1<<63, frame)),
		"resolution 10^0, seconds":            cat(ngSHB(1, 0), ngIDB(1, 0, ngOpt(9, []byte{0}), ngOpt(0, nil)), ngEPB(0, 1700000000, frame)),
		"version 1.2 read as 1.0":             cat(ngSHB(1, 0), ngIDB(1, 0), ngEPB(0, 1, frame), ngSHB(1, 2), ngIDB(1, 0), ngEPB(0, 2, frame)),
		"filter":                              cat(ngSHB(1, 0), ngIDB(113, 0, ngOpt(11, []byte("\x00tcp port 80")), ngOpt(0, nil)), ngIDB(1, 0, ngOpt(11, nil)), ngEPB(1, 5, frame)),
		"simple, obsolete, statistics, names": cat(ngSHB(1, 0, ngOpt(4, []byte("app")), ngOpt(0, nil)), ngIDB(1, 40), spb, ngIDB(276, 0), opb, isb, nrb, ngEPB(0, 9, frame)),
		"simple before any interface":         cat(ngSHB(1, 0), spb),
		"interface not in section":            cat(ngSHB(1, 0), ngIDB(1, 0), ngEPB(3, 1, frame)),
		"version 2.0 skipped":                 cat(ngSHB(2, 0), ngIDB(1, 0), ngEPB(0, 1, frame), ngSHB(1, 0), ngIDB(1, 0), ngEPB(0, 2, frame)),
		"sections":                            cat(ngSHB(1, 0), ngIDB(1, 0), ngEPB(0, 1, frame), ngSHB(1, 0), ngIDB(113, 0), ngEPB(0, 2, frame)),
		"bad end of options":                  cat(ngSHB(1, 0), ngIDB(1, 0), ngEPB(0, 1, frame, []byte{0, 0, 4, 0, 1, 2, 3, 4})),
		"custom block":                        cat(ngSHB(1, 0), ngIDB(1, 0), ngBlock(0x40000bad, []byte("private")), ngEPB(0, 1, frame)),
	}
	full := files["simple, obsolete, statistics, names"]
	for _, cut := range []int{len(full) - 1, len(full) - 70, len(full) - 100, 40} {
		files[fmt.Sprintf("cut at %d", cut)] = full[:cut]
	}
	overrun := ngEPB(0, 1, frame)
	binary.LittleEndian.PutUint32(overrun[20:], 200) // a capture length past the block
	files["capture length past its block"] = cat(ngSHB(1, 0), ngIDB(1, 0), overrun, ngEPB(0, 2, frame))
	mismatched := ngEPB(0, 3, frame)
	mismatched[len(mismatched)-4]++ // its length at its end
	files["lengths differ"] = cat(ngSHB(1, 0), ngIDB(1, 0), ngEPB(0, 2, frame), mismatched, ngEPB(0, 4, frame))
	unaligned := ngEPB(0, 3, frame[:60])
	unaligned = append(unaligned[:len(unaligned)-4], 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(unaligned[4:], uint32(len(unaligned)))
	binary.LittleEndian.PutUint32(unaligned[len(unaligned)-4:], uint32(len(unaligned)))
	files["length not in words"] = cat(ngSHB(1, 0), ngIDB(1, 0), ngEPB(0, 2, frame), unaligned)
	// How many records each file holds, read to its end (-1: an error ends
	// the reading).
	want := map[string]int{
		"micro": 1, "nano and offset": 1, "binary resolution": 1, "binary resolution too high": -1,
		"decimal resolution past 10^19": -1, "decimal resolution 10^19": 1, "resolution 10^0, seconds": 1,
		"version 1.2 read as 1.0": 2, "lengths differ": -1, "length not in words": -1, "filter": 1, "simple, obsolete, statistics, names": 3,
		"simple before any interface": -1, "interface not in section": -1, "version 2.0 skipped": 1,
		"sections": 2, "bad end of options": -1, "custom block": 1, "capture length past its block": -1,
	}
	// The time of the first record, where pcapgo is not the reference.
	wantTime := map[string]string{
		"resolution 10^0, seconds": "2023-11-14 22:13:20 +0000 UTC",
		"decimal resolution 10^19": "1970-01-01 00:00:00.922337203 +0000 UTC",
		// 2^48-1 units of 2^-20 s, as tshark reads it (pcapgo: .999291975).
		"binary resolution": "1978-07-04 21:24:15.999999046 +0000 UTC",
	}
	for name, b := range files {
		t.Run(name, func(t *testing.T) {
			sameNgRecords(t, b)
			got := ngRecordsOf(b)
			if n, ok := want[name]; ok && ((n < 0) != (got.err != io.EOF) || n >= 0 && len(got.records) != n) {
				t.Errorf("%d records, %v; want %d", len(got.records), got.err, n)
			}
			if w, ok := wantTime[name]; ok && (len(got.records) == 0 || !strings.HasSuffix(got.records[0], " at "+w)) {
				t.Errorf("records %q; want the first at %s", got.records, w)
			}
		})
	}
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }

// A block the reader does not read (a custom block, or any block of a
// section of another version) is skipped through the buffer, whatever its
// length: a small gzip'd file claiming a block of gigabytes costs no more
// memory than a plain one. A block it reads (a packet and its options) is
// held whole only up to maxNgBlock; past it, it is an error, not a buffer
// of the length the block claims.
func TestPcapngLongBlocks(t *testing.T) {
	const n = 4 * maxNgBlock
	frame := []byte{1, 2, 3, 4}
	long := func(major, minor uint16, typ uint32, body []byte) io.Reader {
		head := bytes.Join([][]byte{ngSHB(major, minor), ngIDB(1, 0), binary.LittleEndian.AppendUint32(nil, typ),
			binary.LittleEndian.AppendUint32(nil, uint32(12+len(body)+n)), body}, nil)
		tail := bytes.Join([][]byte{binary.LittleEndian.AppendUint32(nil, uint32(12+len(body)+n)),
			ngSHB(1, 0), ngIDB(1, 0), ngEPB(0, 1, frame)}, nil)
		return io.MultiReader(bytes.NewReader(head), io.LimitReader(zeros{}, n), bytes.NewReader(tail))
	}
	epb := bytes.Join([][]byte{make([]byte, 12), binary.LittleEndian.AppendUint32(nil, 4), binary.LittleEndian.AppendUint32(nil, 4), frame}, nil)
	for _, c := range []struct {
		name    string
		r       io.Reader
		records int // -1: an error ends the reading
	}{
		{"custom block", long(1, 0, 0x40000bad, nil), 1},
		{"packet block of a skipped section", long(2, 0, ngEnhancedPacket, epb), 1},
		{"packet block with long options", long(1, 0, ngEnhancedPacket, epb), -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, err := newPcapngRecords(c.r)
			if err != nil {
				t.Fatal(err)
			}
			records := 0
			var rec Record
			for err = src.next(&rec); err == nil; err = src.next(&rec) {
				records++
			}
			if c.records < 0 && (err == io.EOF || !strings.Contains(err.Error(), "block length")) {
				t.Errorf("%d records, %v; want a block length error", records, err)
			}
			if c.records >= 0 && (err != io.EOF || records != c.records) {
				t.Errorf("%d records, %v; want %d", records, err, c.records)
			}
			if len(src.buf) > pcapBuffer {
				t.Errorf("the buffer grew to %d bytes for a %d-byte block", len(src.buf), n)
			}
		})
	}
}

// A binary time resolution's units are converted to nanoseconds exactly,
// rounded down, as Wireshark converts them: at exponents up to 2^-63,
// across a second's units, with an offset; and as tshark 4.0 read four of
// them.
func TestPcapngBinaryResolution(t *testing.T) {
	// read returns the time pcapngRecords gives a packet whole*2^exp+frac
	// units of 2^-exp s after 1970, on an interface offset seconds ahead.
	read := func(exp int, whole, frac, offset uint64) time.Time {
		t.Helper()
		file := bytes.Join([][]byte{ngSHB(1, 0), ngIDB(1, 0, ngOpt(9, []byte{0x80 | byte(exp)}), ngOpt(14, binary.LittleEndian.AppendUint64(nil, offset)), ngOpt(0, nil)),
			ngEPB(0, whole<<exp+frac, bytes.Repeat([]byte{0xab}, 60))}, nil)
		src, err := newPcapngRecords(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		var r Record
		if err := src.next(&r); err != nil {
			t.Fatalf("2^-%d, %d units: %v", exp, frac, err)
		}
		return r.Time()
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, exp := range []int{1, 9, 10, 20, 30, 32, 40, 63} {
		unit := uint64(1) << exp
		whole := min(uint64(1764390000), 1<<(64-exp)-1) // as many seconds as a timestamp holds
		fracs := []uint64{0, 1, unit / 3, unit / 2, unit - 1}
		for range 50 {
			fracs = append(fracs, rng.Uint64N(unit))
		}
		for _, f := range fracs {
			for _, offset := range []uint64{0, 3600} {
				ns := new(big.Int).Mul(new(big.Int).SetUint64(f), big.NewInt(1e9))
				want := time.Unix(int64(whole+offset), ns.Div(ns, new(big.Int).SetUint64(unit)).Int64()).UTC()
				if got := read(exp, whole, f, offset); !got.Equal(want) {
					t.Fatalf("2^-%d, %d units, offset %d: %v, want %v", exp, f, offset, got, want)
				}
			}
		}
	}
	for _, c := range []struct {
		exp  int
		frac uint64
		ns   int
	}{{20, 1 << 20 / 3, 333333015}, {20, 1<<20 - 1, 999999046}, {30, 1 << 30 / 3, 333333333}, {30, 1<<30 - 1, 999999999}} {
		if got := read(c.exp, 1764390000, c.frac, 0).Nanosecond(); got != c.ns {
			t.Errorf("2^-%d, %d units: %d ns, tshark %d", c.exp, c.frac, got, c.ns)
		}
	}
}
