package pcapfile

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Record is one packet record of a capture file as a Reader reads it.
// Data is valid until the Reader's next call.
type Record struct {
	// Data is the frame as captured.
	Data []byte
	// Orig is the frame's length on the wire, as the record states it: a
	// corrupt record may give less than it captured.
	Orig uint32
	// Iface is the pcapng interface the frame was captured on, in its
	// section (0 for pcap).
	Iface int
	// Unix is the record's time in nanoseconds since 1970, unless Wide is
	// set: then the time cannot be held in an int64 of nanoseconds (or
	// the record has none, as pcapng's simple packet blocks) and Time
	// gives it.
	Unix int64
	Wide bool
	ts   time.Time
}

// Time returns the record's time, as pcapgo would give it.
func (r *Record) Time() time.Time {
	if r.Wide {
		return r.ts
	}
	return time.Unix(0, r.Unix).UTC()
}

// Cut is how many bytes the frame had on the wire past those captured.
func (r *Record) Cut() int {
	// In 64 bits, so that a length past a 32-bit int does not wrap; an IP
	// length never reaches 1 MiB past the bytes captured.
	return int(min(max(int64(r.Orig)-int64(len(r.Data)), 0), 1<<20))
}

// zeroTime is the time of a record that has none.
var zeroTime time.Time

// timeUnix is time.Unix in UTC, as pcapgo gives record times.
func timeUnix(sec, nsec int64) time.Time { return time.Unix(sec, nsec).UTC() }

// setTime sets the record's time from a time.Time.
func (r *Record) setTime(ts time.Time) {
	r.ts = ts
	r.Wide = ts.IsZero() || ts.Year() < 1700 || ts.Year() > 2200
	if !r.Wide {
		r.Unix = ts.UnixNano()
	}
}

// recordSource reads the records of a capture file one by one. next
// returns io.EOF at the end of the file.
type recordSource interface {
	next(r *Record) error
}

// recordBuffer holds what has been read of a capture file and not yet
// returned, for its records to be walked in place: refilled by large
// reads, a record's bytes are never copied but when they straddle two
// fills.
type recordBuffer struct {
	r        io.Reader
	buf      []byte
	off, end int // buf[off:end] holds the bytes read and not yet returned
	eof      bool
	readErr  error
}

func newRecordBuffer(r io.Reader) recordBuffer {
	return recordBuffer{r: r, buf: make([]byte, pcapFirstBuffer)}
}

// pcapRecords reads the records of a classic pcap file in place. It reads
// what pcapgo's Reader reads, with the same checks.
type pcapRecords struct {
	recordBuffer
	byteOrder
	nanoFactor uint32
	snaplen    uint32
	link       layers.LinkType
}

// A recordBuffer reads up to pcapBuffer bytes at once: it starts with
// pcapFirstBuffer, so that a small file costs little, and doubles its
// buffer each time it has gone through the whole of it.
const (
	pcapFirstBuffer = 64 << 10
	pcapBuffer      = 1 << 20
)

// maxRecord is libpcap's largest snap length: a record may be longer only
// when the file's snap length says so (as pcapgo allows).
const maxRecord = 262144

const (
	pcapMagicMicro = 0xa1b2c3d4
	pcapMagicNano  = 0xa1b23c4d
)

func newPcapRecords(r io.Reader) (*pcapRecords, error) {
	p := &pcapRecords{recordBuffer: newRecordBuffer(r)}
	var hdr [24]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	switch magic := binary.LittleEndian.Uint32(hdr[0:4]); {
	case magic == pcapMagicMicro:
		p.nanoFactor = 1000
	case magic == pcapMagicNano:
		p.nanoFactor = 1
	case binary.BigEndian.Uint32(hdr[0:4]) == pcapMagicMicro:
		p.big, p.nanoFactor = true, 1000
	case binary.BigEndian.Uint32(hdr[0:4]) == pcapMagicNano:
		p.big, p.nanoFactor = true, 1
	default:
		return nil, fmt.Errorf("unknown magic %x", magic)
	}
	if v := p.u16(hdr[4:6]); v != 2 {
		return nil, fmt.Errorf("unknown major version %d", v)
	}
	if v := p.u16(hdr[6:8]); v != 4 {
		return nil, fmt.Errorf("unknown minor version %d", v)
	}
	p.snaplen = p.u32(hdr[16:20])
	p.link = layers.LinkType(p.u32(hdr[20:24]))
	return p, nil
}

// byteOrder reads a file's integers in its byte order.
type byteOrder struct {
	big bool // big-endian
}

func (o byteOrder) u16(b []byte) uint16 {
	if o.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (o byteOrder) u32(b []byte) uint32 {
	if o.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (o byteOrder) u64(b []byte) uint64 {
	if o.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// fill makes at least n bytes available at buf[off:], unless the input
// ends first; it reports whether they are. The buffer grows past
// pcapBuffer only as bytes arrive, so that a record length read from a
// corrupt file cannot make it allocate more than the file holds.
func (p *recordBuffer) fill(n int) bool {
	if p.end-p.off >= n {
		return true
	}
	if p.off > 0 {
		buf := p.buf
		if len(buf) < pcapBuffer && !p.eof {
			buf = make([]byte, 2*len(buf))
		}
		p.end = copy(buf, p.buf[p.off:p.end])
		p.buf, p.off = buf, 0
	}
	for p.end < n && !p.eof {
		if p.end == len(p.buf) {
			size := n
			if len(p.buf) < n/2 {
				size = 2 * len(p.buf)
			}
			grown := make([]byte, size)
			copy(grown, p.buf[:p.end])
			p.buf = grown
		}
		m, err := p.r.Read(p.buf[p.end:])
		p.end += m
		if err != nil {
			p.eof = true
			if err != io.EOF {
				p.readErr = err
			}
		}
	}
	return p.end >= n
}

// discard drops the next n bytes of the input, unless it ends first; it
// reports whether they were there. Bytes past the buffer are read into it
// and dropped: the buffer does not grow, whatever n is.
func (p *recordBuffer) discard(n int) bool {
	for {
		if p.end-p.off >= n {
			p.off += n
			return true
		}
		n -= p.end - p.off
		p.off, p.end = 0, 0
		if p.eof {
			return false
		}
		m, err := p.r.Read(p.buf)
		p.end = m
		if err != nil {
			p.eof = true
			if err != io.EOF {
				p.readErr = err
			}
		}
	}
}

// short returns the error of a record cut short by the end of the input.
func (p *recordBuffer) short() error {
	if p.readErr != nil {
		return p.readErr
	}
	return io.ErrUnexpectedEOF
}

// atEnd reports whether the input ended cleanly with the last record.
func (p *recordBuffer) atEnd() bool {
	return p.end == p.off && p.readErr == nil
}

func (p *pcapRecords) next(r *Record) error {
	// Most records: little-endian, no longer than libpcap's largest snap
	// length (so within any check below), and whole in the buffer.
	if avail := p.end - p.off; avail >= 16 && !p.big {
		h := p.buf[p.off : p.off+16 : p.off+16]
		le := binary.LittleEndian
		if caplen := le.Uint32(h[8:12]); caplen <= maxRecord && 16+int(caplen) <= avail {
			n := 16 + int(caplen)
			sec, frac, length := le.Uint32(h[0:4]), le.Uint32(h[4:8]), le.Uint32(h[12:16])
			r.Data = p.buf[p.off+16 : p.off+n : p.off+n]
			r.Orig = length
			p.off += n
			r.Iface, r.Wide = 0, false
			r.Unix = int64(sec)*1e9 + int64(frac*p.nanoFactor)
			return nil
		}
	}
	if !p.fill(16) {
		if p.atEnd() {
			return io.EOF
		}
		return p.short()
	}
	h := p.buf[p.off : p.off+16]
	sec, frac := p.u32(h[0:4]), p.u32(h[4:8])
	caplen, length := p.u32(h[8:12]), p.u32(h[12:16])
	if caplen > max(p.snaplen, maxRecord) {
		return fmt.Errorf("capture length exceeds snap length: %d > %d", caplen, p.snaplen)
	}
	n := 16 + int(caplen)
	if n < 16 {
		return fmt.Errorf("capture length %d overflows", caplen) // a 32-bit int
	}
	if !p.fill(n) {
		return p.short()
	}
	r.Data = p.buf[p.off+16 : p.off+n : p.off+n]
	// A capture length past the original length is read as captured, as
	// libpcap reads it (pcapgo stops there): the record is in step.
	r.Orig = length
	p.off += n
	r.Iface, r.Wide = 0, false
	r.Unix = int64(sec)*1e9 + int64(frac*p.nanoFactor) // pcapgo's uint32 product, wrapping alike
	return nil
}
