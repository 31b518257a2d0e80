package flows

import (
	"encoding/binary"
	"errors"
	"math"
	"net/netip"
	"slices"
	"time"

	"github.com/netmortem/netmortem/model"
)

// A spooled attempt is its fields in the order of model.Attempt, as
// varints (counts, frames, lines, sequence numbers), addresses as their
// bytes behind their length (0, 4, 16, or 17 with a zone behind), and
// two bytes of flags first: the pointers that are set, ICMP, and the
// lists that are not nil. Frames are differences: the attempt's from the
// attempt before, its segments' from the attempt's. So are times: the
// start's from the start of the attempt before, the others' from the
// start, in nanoseconds, doubled (an even number); a time further away is
// 1, then its Unix seconds and nanoseconds. A string is 0 when it is the
// last one its field had, 1 and its bytes when it is new, or 2 plus the
// index of the new string it was first, up to spoolStrings of them: the
// file names, states and history letters of a capture's attempts are few
// and repeat.

// The fields whose strings are kept by reference to an earlier one.
const (
	strNode = iota
	strFile
	strObject
	strPath
	strOutcome
	strState
	strHistory
	strReused
	strSegFile
	strFields
)

// spoolStrings bounds how many distinct strings a Spool refers to by
// index; past them, new strings are written whole each time.
const spoolStrings = 1 << 16

// The first flags byte: the pointers set, and ICMP.
const (
	flagOuter = 1 << iota
	flagFirstAck
	flagClientFIN
	flagServerFIN
	flagClientData
	flagServerData
	flagICMP
)

// The second flags byte: the lists that are not nil.
const (
	listSYN = 1 << iota
	listSYNACK
	listClientRST
	listServerRST
	listClientRetx
	listServerRetx
)

// errNotUTC is an attempt with a time in a location other than UTC.
var errNotUTC = errors.New("a time not in UTC")

type spoolEncoder struct {
	last [strFields]string
	idx  map[string]uint32
	utc  bool // every time of the attempt was in UTC
	base instant
	// frame is the frame differences are taken from: the attempt's, the
	// attempt before's for the attempt's.
	frame int
}

// instant is a time as its Unix seconds and nanoseconds, the time
// differences are taken from: an attempt's start, the attempt before's
// for the attempt's.
type instant struct {
	sec, nsec int64
}

// near bounds the seconds between two times whose difference a record
// holds in nanoseconds: doubled, it stays well within an int64.
const near = 1 << 31

func (e *spoolEncoder) str(b []byte, f int, s string) []byte {
	if s == e.last[f] {
		return append(b, 0)
	}
	e.last[f] = s
	if i, ok := e.idx[s]; ok {
		return binary.AppendUvarint(b, uint64(i)+2)
	}
	if len(e.idx) < spoolStrings {
		e.idx[s] = uint32(len(e.idx))
	}
	b = binary.AppendUvarint(append(b, 1), uint64(len(s)))
	return append(b, s...)
}

func (e *spoolEncoder) time(b []byte, t time.Time) []byte {
	if t.Location() != time.UTC {
		e.utc = false
	}
	sec, nsec := t.Unix(), int64(t.Nanosecond())
	if sec > -1<<62 && sec < 1<<62 && e.base.sec > -1<<62 && e.base.sec < 1<<62 {
		if ds := sec - e.base.sec; ds > -near && ds < near {
			return binary.AppendVarint(b, (ds*1e9+nsec-e.base.nsec)<<1)
		}
	}
	return binary.AppendUvarint(binary.AppendVarint(append(b, 2), sec), uint64(nsec)) // 2: the varint 1
}

func spoolAddrPort(b []byte, ap netip.AddrPort) []byte {
	switch ip := ap.Addr(); {
	case !ip.IsValid():
		b = append(b, 0)
	case ip.Is4():
		a := ip.As4()
		b = append(append(b, 4), a[:]...)
	case ip.Zone() == "":
		a := ip.As16()
		b = append(append(b, 16), a[:]...)
	default:
		a, z := ip.As16(), ip.Zone()
		b = append(append(b, 17), a[:]...)
		b = append(binary.AppendUvarint(b, uint64(len(z))), z...)
	}
	return binary.AppendUvarint(b, uint64(ap.Port()))
}

func (e *spoolEncoder) seg(b []byte, g *model.Seg) []byte {
	b = binary.AppendVarint(b, int64(g.Frame-e.frame))
	b = e.time(b, g.Time)
	b = binary.AppendVarint(b, int64(g.Line))
	return e.str(b, strSegFile, g.File)
}

func (e *spoolEncoder) segs(b []byte, l []model.Seg) []byte {
	b = binary.AppendUvarint(b, uint64(len(l)))
	for i := range l {
		b = e.seg(b, &l[i])
	}
	return b
}

func (e *spoolEncoder) sizes(b []byte, d *model.DataSizes) []byte {
	for _, v := range [...]int{d.MaxSent, d.MaxAcked, d.LargeRetx, d.LargeRetxSize} {
		b = binary.AppendVarint(b, int64(v))
	}
	return e.segs(b, d.Retx)
}

// attempt appends a's record to b.
func (e *spoolEncoder) attempt(b []byte, a *model.Attempt) ([]byte, error) {
	var flags, lists byte
	for i, set := range [...]bool{a.Outer != nil, a.FirstAck != nil, a.ClientFIN != nil, a.ServerFIN != nil,
		a.ClientData != nil, a.ServerData != nil, a.ICMP} {
		if set {
			flags |= 1 << i
		}
	}
	for i, l := range [...][]model.Seg{a.SYN, a.SYNACK, a.ClientRST, a.ServerRST} {
		if l != nil {
			lists |= 1 << i
		}
	}
	if a.ClientData != nil && a.ClientData.Retx != nil {
		lists |= listClientRetx
	}
	if a.ServerData != nil && a.ServerData.Retx != nil {
		lists |= listServerRetx
	}
	b = append(b, flags, lists)
	e.utc = true
	b = e.str(b, strNode, a.Node)
	p := &a.Pos
	b = e.str(b, strFile, p.File)
	b = binary.AppendVarint(b, int64(p.Line))
	b = binary.AppendVarint(b, int64(p.Col))
	b = binary.AppendVarint(b, int64(p.Frame-e.frame))
	e.frame = p.Frame
	b = e.str(b, strObject, p.Object)
	b = e.str(b, strPath, p.Path)
	b = spoolAddrPort(b, a.Client)
	b = spoolAddrPort(b, a.Server)
	if a.Outer != nil {
		b = spoolAddrPort(spoolAddrPort(b, a.Outer.Src), a.Outer.Dst)
	}
	b = e.str(b, strOutcome, string(a.Outcome))
	b = e.str(b, strState, a.ConnState)
	b = e.str(b, strHistory, a.History)
	b = e.time(b, a.Start)
	e.base = instant{a.Start.Unix(), int64(a.Start.Nanosecond())}
	b = e.time(b, a.End)
	for _, l := range [...][]model.Seg{a.SYN, a.SYNACK, a.ClientRST, a.ServerRST} {
		b = e.segs(b, l)
	}
	for _, g := range [...]*model.Seg{a.FirstAck, a.ClientFIN, a.ServerFIN} {
		if g != nil {
			b = e.seg(b, g)
		}
	}
	b = e.str(b, strReused, a.Reused)
	b = binary.AppendVarint(b, int64(a.Packets))
	b = binary.AppendVarint(b, a.ClientBytes)
	b = binary.AppendVarint(b, a.ServerBytes)
	b = binary.AppendUvarint(b, uint64(a.ISN))
	b = binary.AppendUvarint(b, uint64(a.MSS))
	b = binary.AppendUvarint(b, uint64(a.ServerMSS))
	for _, d := range [...]*model.DataSizes{a.ClientData, a.ServerData} {
		if d != nil {
			b = e.sizes(b, d)
		}
	}
	if !e.utc {
		return b, errNotUTC
	}
	return b, nil
}

// spoolDecoder reads the records of a Spool into attempts whose lists,
// segments, data sizes and outer tuples are in the memory of a batch
// (spoolBatch).
type spoolDecoder struct {
	rec   []byte // the record being read
	at    int
	bad   bool // the record ended before its last field, or holds a value out of range
	last  [strFields]string
	list  []string
	base  instant
	frame int
	b     *spoolBatch // the batch the attempt being read goes to
}

// spoolBatch is attempts read from a Spool, and what they point to.
type spoolBatch struct {
	a      []model.Attempt
	segs   []model.Seg
	sizes  []model.DataSizes
	tuples []model.Tuple
}

// take returns n values more of *l, which it extends; the values an
// earlier call returned stay where they were when *l grows.
func take[T any](l *[]T, n int) []T {
	k := len(*l)
	*l = slices.Grow(*l, n)[:k+n]
	return (*l)[k : k+n : k+n]
}

// reset empties b for the next attempts, keeping its memory. What it
// held is written over, not cleared: the decoder writes every field of
// the segments, data sizes and tuples it takes, and zeroes each attempt
// it starts.
func (b *spoolBatch) reset() {
	b.a, b.segs, b.sizes, b.tuples = b.a[:0], b.segs[:0], b.sizes[:0], b.tuples[:0]
}

// noSegs is an empty list that is not nil.
var noSegs = []model.Seg{}

func (d *spoolDecoder) byte() byte {
	if d.at >= len(d.rec) {
		d.bad = true
		return 0
	}
	d.at++
	return d.rec[d.at-1]
}

// uvarint reads an unsigned varint; most take a byte, read here without a
// call.
func (d *spoolDecoder) uvarint() uint64 {
	if d.at < len(d.rec) && d.rec[d.at] < 0x80 {
		d.at++
		return uint64(d.rec[d.at-1])
	}
	return d.uvarintLong()
}

func (d *spoolDecoder) uvarintLong() uint64 {
	v, n := binary.Uvarint(d.rec[d.at:])
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.at += n
	return v
}

// varint reads a signed varint, as binary.Varint does: the zigzag
// encoding of an unsigned one.
func (d *spoolDecoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *spoolDecoder) int() int {
	v := d.varint()
	if v < math.MinInt || v > math.MaxInt {
		d.bad = true
	}
	return int(v)
}

func (d *spoolDecoder) bytes(n uint64) []byte {
	if n > uint64(len(d.rec)-d.at) {
		d.bad = true
		return nil
	}
	d.at += int(n)
	return d.rec[d.at-int(n) : d.at]
}

func (d *spoolDecoder) str(f int) string {
	switch c := d.uvarint(); {
	case c == 0:
	case c == 1:
		s := string(d.bytes(d.uvarint()))
		if len(d.list) < spoolStrings {
			d.list = append(d.list, s)
		}
		d.last[f] = s
	case c-2 < uint64(len(d.list)):
		d.last[f] = d.list[c-2]
	default:
		d.bad = true
	}
	return d.last[f]
}

func (d *spoolDecoder) time() time.Time {
	v := d.varint()
	if v&1 == 0 {
		return time.Unix(d.base.sec, d.base.nsec+v>>1).UTC()
	}
	sec, nsec := d.varint(), d.uvarint()
	if v != 1 || nsec >= 1e9 {
		d.bad = true
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

func (d *spoolDecoder) addrPort() netip.AddrPort {
	var ip netip.Addr
	switch n := d.byte(); n {
	case 0:
	case 4:
		ip = netip.AddrFrom4([4]byte(pad(d.bytes(4), 4)))
	case 16, 17:
		ip = netip.AddrFrom16([16]byte(pad(d.bytes(16), 16)))
		if n == 17 {
			ip = ip.WithZone(string(d.bytes(d.uvarint())))
		}
	default:
		d.bad = true
	}
	port := d.uvarint()
	if port > math.MaxUint16 {
		d.bad = true
	}
	return netip.AddrPortFrom(ip, uint16(port))
}

// pad returns b, or n zero bytes when b is short (a record cut short,
// which bad says already).
func pad(b []byte, n int) []byte {
	if len(b) < n {
		return make([]byte, n)
	}
	return b
}

func (d *spoolDecoder) seg(g *model.Seg) {
	g.Frame = d.frame + d.int()
	g.Time = d.time()
	g.Line = d.int()
	g.File = d.str(strSegFile)
}

// segs reads a list, nil unless notNil.
func (d *spoolDecoder) segs(notNil bool) []model.Seg {
	n := d.uvarint()
	if n > uint64(len(d.rec)-d.at) { // each segment takes a byte at least
		d.bad = true
		return nil
	}
	if n == 0 {
		if notNil {
			return noSegs
		}
		return nil
	}
	l := take(&d.b.segs, int(n))
	for i := range l {
		d.seg(&l[i])
	}
	return l
}

func (d *spoolDecoder) sizes(notNil bool) *model.DataSizes {
	s := &take(&d.b.sizes, 1)[0]
	s.MaxSent, s.MaxAcked, s.LargeRetx, s.LargeRetxSize = d.int(), d.int(), d.int(), d.int()
	s.Retx = d.segs(notNil)
	return s
}

// attempt reads the record in d.rec into a new attempt of d.b.
func (d *spoolDecoder) attempt() error {
	d.at, d.bad = 0, false
	d.b.a = append(d.b.a, model.Attempt{})
	a := &d.b.a[len(d.b.a)-1]
	flags, lists := d.byte(), d.byte()
	a.Node = d.str(strNode)
	p := &a.Pos
	p.File = d.str(strFile)
	p.Line, p.Col = d.int(), d.int()
	p.Frame = d.frame + d.int()
	d.frame = p.Frame
	p.Object, p.Path = d.str(strObject), d.str(strPath)
	a.Client, a.Server = d.addrPort(), d.addrPort()
	if flags&flagOuter != 0 {
		o := &take(&d.b.tuples, 1)[0]
		o.Src = d.addrPort()
		o.Dst = d.addrPort()
		a.Outer = o
	}
	a.Outcome = model.Outcome(d.str(strOutcome))
	a.ConnState, a.History = d.str(strState), d.str(strHistory)
	a.Start = d.time()
	d.base = instant{a.Start.Unix(), int64(a.Start.Nanosecond())}
	a.End = d.time()
	a.SYN = d.segs(lists&listSYN != 0)
	a.SYNACK = d.segs(lists&listSYNACK != 0)
	a.ClientRST = d.segs(lists&listClientRST != 0)
	a.ServerRST = d.segs(lists&listServerRST != 0)
	for i, f := range [...]byte{flagFirstAck, flagClientFIN, flagServerFIN} {
		if flags&f == 0 {
			continue
		}
		g := &take(&d.b.segs, 1)[0]
		d.seg(g)
		switch i {
		case 0:
			a.FirstAck = g
		case 1:
			a.ClientFIN = g
		default:
			a.ServerFIN = g
		}
	}
	a.ICMP = flags&flagICMP != 0
	a.Reused = d.str(strReused)
	a.Packets = d.int()
	a.ClientBytes, a.ServerBytes = d.varint(), d.varint()
	isn, mss, smss := d.uvarint(), d.uvarint(), d.uvarint()
	if isn > math.MaxUint32 || mss > math.MaxUint16 || smss > math.MaxUint16 {
		d.bad = true
	}
	a.ISN, a.MSS, a.ServerMSS = uint32(isn), uint16(mss), uint16(smss)
	if flags&flagClientData != 0 {
		a.ClientData = d.sizes(lists&listClientRetx != 0)
	}
	if flags&flagServerData != 0 {
		a.ServerData = d.sizes(lists&listServerRetx != 0)
	}
	if d.bad {
		return errSpoolBad
	}
	if d.at != len(d.rec) {
		return errors.New("record longer than its fields")
	}
	return nil
}
