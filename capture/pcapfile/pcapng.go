package pcapfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/gopacket/gopacket/layers"
)

// pcapngRecords reads the packet records of a pcapng file in place, as
// pcapRecords reads pcap's: each block is walked in the buffer, and a
// packet's bytes are never copied but when they straddle two fills. It
// reads the records pcapgo's NgReader reads (with WantMixedLinkType and
// SkipUnknownVersion, as netmortem opens it): enhanced, simple and
// obsolete packet blocks, with each section's interfaces, their link
// types, snap lengths, time resolutions and offsets; sections of a version
// other than 1.0 are skipped. It is stricter than pcapgo on a block whose
// parts do not fit in its length, which pcapgo would read on into the next
// block: that is an error here, at the record it happens in; and it
// converts the times of binary resolutions finer than 2^-9 exactly.
// FuzzPcapngRecords holds the two together.
type pcapngRecords struct {
	recordBuffer
	byteOrder           // the section's
	ifaces    []ngIface // the section's interfaces
}

// ngIface is a pcapng interface as the records need it.
type ngIface struct {
	link      layers.LinkType
	snaplen   uint32
	filter    string
	offset    uint64 // if_tsoffset, seconds
	mask      uint64 // the timestamp units in a second
	scaleUp   uint64 // nanoseconds from a unit: * scaleUp / scaleDown
	scaleDown uint64
	// exact is set for a binary resolution finer than 2^-9, whose units
	// are no whole number of nanoseconds, nor nanoseconds a whole number
	// of them: a unit's nanoseconds are then worked out in 128 bits.
	exact bool
}

// pcapng block types.
const (
	ngSectionHeader  = 0x0a0d0d0a
	ngInterface      = 1
	ngObsoletePacket = 2
	ngSimplePacket   = 3
	ngNameResolution = 4
	ngStatistics     = 5
	ngEnhancedPacket = 6
	ngByteOrderMagic = 0x1a2b3c4d
)

var errNgInterface = errors.New("a packet block comes before any interface of its section")

func newPcapngRecords(r io.Reader) (*pcapngRecords, error) {
	p := &pcapngRecords{recordBuffer: newRecordBuffer(r)}
	typ, body, err := p.block(false)
	if err != nil {
		return nil, err
	}
	if typ != ngSectionHeader {
		return nil, fmt.Errorf("unknown magic %x", typ)
	}
	if err := p.section(body); err != nil {
		return nil, err
	}
	return p, nil
}

// block reads the next block whole and returns its type and its body: what
// follows its type and length (for a section header, what follows its
// byte-order magic), up to its end. A block that is not read (of a type
// not read here, or any but a section header when skipping a section) is
// discarded as it is read, not held: its body is nil. It returns io.EOF at
// the end of the input between blocks.
func (p *pcapngRecords) block(skipping bool) (uint32, []byte, error) {
	if !p.fill(8) {
		if p.atEnd() {
			return 0, nil, io.EOF
		}
		return 0, nil, p.short()
	}
	h := p.buf[p.off : p.off+8]
	typ := p.u32(h[0:4])
	head := 8
	if typ == ngSectionHeader {
		if !p.fill(12) {
			return 0, nil, p.short()
		}
		switch magic := p.buf[p.off+8 : p.off+12]; {
		case binary.BigEndian.Uint32(magic) == ngByteOrderMagic:
			p.big = true
		case binary.LittleEndian.Uint32(magic) == ngByteOrderMagic:
			p.big = false
		default:
			return 0, nil, errors.New("wrong byte order value in section header")
		}
		head = 12
	}
	length := uint64(p.u32(p.buf[p.off+4 : p.off+8]))
	if length < uint64(head) || length > uint64(maxInt) {
		return 0, nil, fmt.Errorf("block length %d", length)
	}
	if typ != ngSectionHeader && (skipping || !ngReadsBlock(typ)) {
		if !p.discard(int(length)) {
			return 0, nil, p.short()
		}
		return typ, nil, nil
	}
	if length > maxNgBlock {
		return 0, nil, fmt.Errorf("block length %d is past the %d bytes a block read may have", length, maxNgBlock)
	}
	if !p.fill(int(length)) {
		return 0, nil, p.short()
	}
	// A length that is not a whole number of 32-bit words, or that differs
	// from the one at the block's end, is a corrupt file that would be
	// read on out of step (libpcap and Wireshark refuse both).
	if length%4 != 0 {
		return 0, nil, fmt.Errorf("block length %d is not a multiple of 4", length)
	}
	if end := int(length) - 4; end >= head {
		if trailer := p.u32(p.buf[p.off+end : p.off+end+4]); trailer != uint32(length) {
			return 0, nil, fmt.Errorf("block length %d at its end, %d at its start", trailer, length)
		}
	}
	body := p.buf[p.off+head : p.off+int(length) : p.off+int(length)]
	p.off += int(length)
	return typ, body, nil
}

// ngReadsBlock reports whether next reads the body of a block of type typ.
func ngReadsBlock(typ uint32) bool {
	switch typ {
	case ngInterface, ngObsoletePacket, ngSimplePacket, ngNameResolution, ngStatistics, ngEnhancedPacket:
		return true
	}
	return false
}

// maxNgBlock is the longest block whose body is held, as libpcap's
// initial maximum block size: far past any packet and its options. Longer
// blocks are skipped unread when they are not read, an error when they are.
const maxNgBlock = 16 << 20

// maxInt is the largest int, on 32 bits as on 64.
const maxInt = int(^uint(0) >> 1)

// section reads a section header's body after its byte-order magic:
// version 1.0 starts a section with no interfaces yet; another version's
// section is skipped, up to the next section header.
func (p *pcapngRecords) section(body []byte) error {
	for {
		p.ifaces = p.ifaces[:0]
		if len(body) < 12 {
			return errors.New("section header too short")
		}
		// The draft (4.1): readers MUST treat a minor version of 2 as 0.
		if major, minor := p.u16(body[0:2]), p.u16(body[2:4]); major == 1 && (minor == 0 || minor == 2) {
			_, err := ngOptions(p, body[12:], nil)
			return err
		}
		for {
			typ, b, err := p.block(true)
			if err != nil {
				return err
			}
			if typ == ngSectionHeader {
				body = b
				break
			}
		}
	}
}

// ngOptions walks the options of a block, from b to the block's end (its
// trailing length included), calling each with every option's code and
// value (each nil for none). It returns what follows them.
func ngOptions(p *pcapngRecords, b []byte, each func(code uint16, v []byte)) ([]byte, error) {
	for len(b) != 4 {
		if len(b) < 4 {
			return nil, errors.New("option past the end of its block")
		}
		code, n := p.u16(b[0:2]), int(p.u16(b[2:4]))
		b = b[4:]
		if code == 0 {
			if n != 0 {
				return nil, errors.New("end of options must be zero length")
			}
			return b, nil
		}
		padded := (n + 3) &^ 3
		if padded > len(b) {
			return nil, errors.New("option past the end of its block")
		}
		if each != nil {
			each(code, b[:n])
		}
		b = b[padded:]
	}
	return b, nil
}

// iface reads an interface description block's body.
func (p *pcapngRecords) iface(body []byte) error {
	if len(body) < 8 {
		return errors.New("interface description too short")
	}
	f := ngIface{link: layers.LinkType(p.u16(body[0:2])), snaplen: p.u32(body[4:8])}
	resol := uint8(6)
	_, err := ngOptions(p, body[8:], func(code uint16, v []byte) {
		switch {
		case code == 11 && len(v) >= 1: // if_filter: a type, then the filter
			f.filter = string(v[1:])
		case code == 14 && len(v) >= 8: // if_tsoffset
			f.offset = p.u64(v[:8])
		case code == 9 && len(v) >= 1: // if_tsresol
			resol = v[0]
		}
	})
	if err != nil {
		return err
	}
	// resol 0 is 10^0, whole seconds, as libpcap and Wireshark read it;
	// 10^-20 and finer do not fit a uint64 count of units a second.
	exp := resol & 0x7f
	switch {
	case exp > 63 && resol&0x80 != 0:
		return fmt.Errorf("timestamp resolution 2^-%d is too high", exp)
	case exp > 19 && resol&0x80 == 0:
		return fmt.Errorf("timestamp resolution 10^-%d is too high", exp)
	case resol&0x80 != 0:
		f.mask = 1 << exp
	default:
		f.mask = 1
		for range exp {
			f.mask *= 10
		}
	}
	f.scaleUp, f.scaleDown = 1, 1
	f.exact = resol&0x80 != 0 && exp > 9
	if f.mask < 1e9 {
		f.scaleUp = 1e9 / f.mask
	} else {
		f.scaleDown = f.mask / 1e9
	}
	p.ifaces = append(p.ifaces, f)
	return nil
}

// The Unix seconds of 1700-01-01 and 2201-01-01: a time between them is
// held in nanoseconds (record.unix), as record.setTime holds one.
const (
	unixMin = -8520336000
	unixEnd = 7289654400
)

// stamp sets r's time from a packet's timestamp on interface i, as pcapgo
// converts it, but for binary resolutions finer than 2^-9, where pcapgo's
// scale, a whole number, is off (953 nanoseconds a unit of 2^-20 rather
// than 953.67; one a unit of 2^-30 rather than 0.93, 7% too many, which
// can carry a time past the end of its second): those are converted
// exactly, as Wireshark does, the nanoseconds rounded down.
func (p *pcapngRecords) stamp(r *Record, i int, ts uint64) {
	f := &p.ifaces[i]
	sec := int64(ts/f.mask + f.offset)
	var nsec int64
	if f.exact {
		hi, lo := bits.Mul64(ts%f.mask, 1e9)
		q, _ := bits.Div64(hi, lo, f.mask) // hi < mask: the quotient is below 1e9
		nsec = int64(q)
	} else {
		nsec = int64(ts % f.mask * f.scaleUp / f.scaleDown)
	}
	if nsec >= 0 && nsec < 1e9 && sec >= unixMin && sec < unixEnd {
		r.Unix, r.Wide = sec*1e9+nsec, false
		return
	}
	r.setTime(timeUnix(sec, nsec))
}

func (p *pcapngRecords) next(r *Record) error {
	for {
		typ, body, err := p.block(false)
		if err != nil {
			return err
		}
		switch typ {
		case ngEnhancedPacket, ngObsoletePacket:
			if len(body) < 24 {
				return errors.New("packet block too short")
			}
			var i int
			if typ == ngEnhancedPacket {
				i = int(p.u32(body[0:4]))
			} else {
				i = int(p.u16(body[0:2]))
			}
			if i < 0 || i >= len(p.ifaces) {
				return fmt.Errorf("interface id %d not present in section (have only %d interfaces)", uint32(i), len(p.ifaces))
			}
			caplen := uint64(p.u32(body[12:16]))
			if (caplen+3)&^3 > uint64(len(body)-20-4) {
				return fmt.Errorf("capture length %d past the end of its block", caplen)
			}
			r.Data = body[20 : 20+caplen : 20+caplen]
			r.Orig = p.u32(body[16:20])
			if typ == ngEnhancedPacket {
				if _, err := ngOptions(p, body[20+(caplen+3)&^3:], nil); err != nil {
					return err
				}
			}
			r.Iface = i
			p.stamp(r, i, uint64(p.u32(body[4:8]))<<32|uint64(p.u32(body[8:12])))
			return nil
		case ngSimplePacket:
			if len(p.ifaces) == 0 {
				return errNgInterface
			}
			if len(body) < 8 {
				return errors.New("simple packet block too short")
			}
			caplen := uint64(p.u32(body[0:4]))
			r.Orig = uint32(caplen)
			if s := p.ifaces[0].snaplen; s != 0 && caplen > uint64(s) {
				caplen = uint64(s)
			}
			if caplen > uint64(len(body)-4-4) {
				return fmt.Errorf("capture length %d past the end of its block", caplen)
			}
			r.Data, r.Iface = body[4:4+caplen:4+caplen], 0
			r.setTime(zeroTime) // a simple packet has no time
			return nil
		case ngInterface:
			if err := p.iface(body); err != nil {
				return err
			}
		case ngSectionHeader:
			if err := p.section(body); err != nil {
				return err
			}
		case ngStatistics:
			if len(body) < 16 {
				return errors.New("interface statistics too short")
			}
			if i := p.u32(body[0:4]); uint64(i) >= uint64(len(p.ifaces)) {
				return fmt.Errorf("interface id %d not present in section (have only %d interfaces)", i, len(p.ifaces))
			}
			if _, err := ngOptions(p, body[12:], nil); err != nil {
				return err
			}
		case ngNameResolution:
			if err := p.names(body); err != nil {
				return err
			}
		}
	}
}

// names walks a name resolution block's records, as pcapgo reads them: an
// address of its type's length, then names, each record padded to 32
// bits, up to an end record.
func (p *pcapngRecords) names(b []byte) error {
	for len(b) > 0 {
		if len(b) < 4 {
			return errors.New("name record past the end of its block")
		}
		typ, n := p.u16(b[0:2]), int(p.u16(b[2:4]))
		b = b[4:]
		n = min(n, len(b))
		addr := [...]int{1: 4, 2: 16, 3: 6, 4: 8}
		if int(typ) < len(addr) && n < addr[typ] {
			return fmt.Errorf("name record of type %d is too short for its address", typ)
		}
		if typ == 0 { // the end
			return nil
		}
		padded := (n + 3) &^ 3
		if padded > len(b) {
			return errors.New("name record past the end of its block")
		}
		b = b[padded:]
	}
	return nil
}

// links returns the link type of each interface of the current section,
// 255 for an interface it has not.
func (p *pcapngRecords) links(i int) layers.LinkType {
	if i < 0 || i >= len(p.ifaces) {
		return layers.LinkType(255)
	}
	return p.ifaces[i].link
}
