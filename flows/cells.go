package flows

import (
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/netmortem/netmortem/internal/jsontime"
	"github.com/netmortem/netmortem/model"
)

// The cells of a CSV row that every row has, written from their values in
// fewer instructions than the general functions take, for the hundreds of
// thousands of rows of a large capture; each writes what the general one
// writes (cells_test.go holds them to it).

// microCache writes times as jsontime.AppendMicro does, and keeps the
// date and clock of the last second it wrote: attempts listed in the
// order they started come many to a second, and only their microseconds
// differ.
type microCache struct {
	sec    int64          // the Unix second prefix holds, when ok
	prefix [cacheLen]byte // "2006-01-02T15:04:05.", and room (appendCached)
	ok     bool
}

// microPrefix is how many bytes of microCache.prefix are in use.
const microPrefix = len("2006-01-02T15:04:05.")

// append appends t as jsontime.AppendMicro writes it.
func (m *microCache) append(b []byte, t time.Time) []byte {
	if t.Location() != time.UTC {
		return jsontime.AppendMicro(b, t)
	}
	sec := t.Unix()
	if !m.ok || sec != m.sec {
		n := len(b)
		b = jsontime.AppendMicro(b, t) // 27 bytes, clamped or not
		copy(m.prefix[:microPrefix], b[n:])
		m.sec, m.ok = sec, true
		return b
	}
	us := t.Nanosecond() / 1000
	b = appendCached(b, &m.prefix, microPrefix)
	// Two digits at a time: us is below a million.
	hi, mid, lo := 2*(us/10000), 2*(us/100%100), 2*(us%100)
	return append(b, pairs[hi], pairs[hi+1], pairs[mid], pairs[mid+1], pairs[lo], pairs[lo+1], 'Z')
}

// appendStart appends the start cell of an attempt's row: t as append
// writes it, or nothing when t is zero, as evidence without times
// (tcpdump -t) leaves it.
func (m *microCache) appendStart(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	return m.append(b, t)
}

// nanoCache writes times as time.Time.AppendText does (RFC 3339 with
// the nanoseconds its trailing zeros left out), and keeps the date and
// clock of the last second in UTC it wrote, as microCache does. It
// reports AppendText's error, for a year RFC 3339 cannot write.
type nanoCache struct {
	sec    int64    // the Unix second prefix holds, when ok
	prefix [19]byte // "2006-01-02T15:04:05"
	ok     bool
}

// append appends t as t.AppendText does.
func (m *nanoCache) append(b []byte, t time.Time) ([]byte, error) {
	if t.Location() != time.UTC {
		return t.AppendText(b)
	}
	if sec := t.Unix(); !m.ok || sec != m.sec {
		n := len(b)
		b, err := t.AppendText(b)
		if err == nil && len(b)-n > len(m.prefix) {
			copy(m.prefix[:], b[n:])
			m.sec, m.ok = sec, true
		}
		return b, err
	}
	b = append(b, m.prefix[:]...)
	ns := t.Nanosecond()
	if ns == 0 {
		return append(b, 'Z'), nil
	}
	var f [10]byte
	f[0], f[1] = '.', byte('0'+ns/1e8)
	for i, r := 8, ns%1e8; i > 1; i, r = i-2, r/100 {
		p := r % 100 * 2
		f[i], f[i+1] = pairs[p], pairs[p+1]
	}
	n := len(f)
	for f[n-1] == '0' {
		n--
	}
	return append(append(b, f[:n]...), 'Z'), nil
}

// appendAddrPort appends ap as netip.AddrPort.AppendTo writes it; an
// IPv4 address's octets are written from a table.
func appendAddrPort(b []byte, ap netip.AddrPort) []byte {
	a := ap.Addr()
	if !a.Is4() {
		return ap.AppendTo(b)
	}
	return appendInt(append(appendAddr4(b, a), ':'), int64(ap.Port()))
}

// appendAddr4 appends the IPv4 address a as netip.Addr.AppendTo writes
// it, its octets from a table.
func appendAddr4(b []byte, a netip.Addr) []byte {
	for i, o := range a.As4() {
		if i > 0 {
			b = append(b, '.')
		}
		// Three bytes appended and the unused cut, rather than a copy
		// of as many as the octet has.
		d := &octets[o]
		b = append(b, d.s[0], d.s[1], d.s[2])
		b = b[:len(b)-3+int(d.n)]
	}
	return b
}

// addrCache writes addresses and ports as appendAddrPort writes them,
// and keeps the text of the last IPv4 one: a capture's rows have few
// servers, each written whole from the cache row after row, and few
// client addresses, written from it before their port.
type addrCache struct {
	ap   netip.AddrPort // what text holds, when n is not 0
	n    uint8          // the bytes of text in use
	addr uint8          // those of the address and its colon
	text [cacheLen]byte // room for "255.255.255.255:65535" (appendCached)
}

// append appends ap as appendAddrPort does.
func (c *addrCache) append(b []byte, ap netip.AddrPort) []byte {
	if c.n != 0 && ap == c.ap {
		return appendCached(b, &c.text, int(c.n))
	}
	a := ap.Addr()
	if !a.Is4() {
		return ap.AppendTo(b)
	}
	m := len(b)
	if c.n != 0 && a == c.ap.Addr() {
		b = appendCached(b, &c.text, int(c.addr))
	} else {
		b = append(appendAddr4(b, a), ':')
		c.addr = uint8(len(b) - m)
	}
	b = appendInt(b, int64(ap.Port()))
	c.ap, c.n = ap, uint8(cacheText(&c.text, b, m))
	return b
}

// frameCache writes frame numbers as appendInt writes them, and keeps
// the digits of the last one: a row's position is the frame of its first
// SYN, and its SYN/ACK often the frame after it, written from those
// digits rather than from the number.
type frameCache struct {
	v int64          // the number d holds, when n is not 0
	n uint8          // the digits of d in use
	d [cacheLen]byte // room for any int64's digits (appendCached)
}

// append appends v as appendInt does.
func (c *frameCache) append(b []byte, v int64) []byte {
	if c.n != 0 {
		if v == c.v {
			return appendCached(b, &c.d, int(c.n))
		}
		if v == c.v+1 && c.d[c.n-1] != '9' {
			c.d[c.n-1]++
			c.v = v
			return appendCached(b, &c.d, int(c.n))
		}
	}
	m := len(b)
	b = appendInt(b, v)
	if v >= 0 {
		c.v, c.n = v, uint8(cacheText(&c.d, b, m))
	}
	return b
}

// cacheLen is the room of the texts the caches keep (microCache,
// addrCache, frameCache), each a few bytes: they are copied whole, in a
// few moves, and cut to the bytes in use, rather than byte counts handed
// to runtime.memmove, a call that costs more than the copy. (The copies
// are of 16 bytes and 8: the compiler calls runtime.memmove for an array
// above 16 bytes that a pointer copies.)
const cacheLen = 24

// appendCached appends the first n bytes of s (n at most cacheLen) to b.
// Where b has room, it writes all of s past b's end, and then cuts b to
// the n bytes: what follows them is free room, which an append would
// write over anyway.
func appendCached(b []byte, s *[cacheLen]byte, n int) []byte {
	m := len(b)
	if cap(b)-m < cacheLen {
		return append(b, s[:n]...)
	}
	copyCached((*[cacheLen]byte)(b[m:m+cacheLen]), s)
	return b[:m+n]
}

// cacheText copies into s the bytes of b from m on, at most cacheLen,
// and returns how many it copied, as copy(s[:], b[m:]) does. Where b has
// room, it copies all of s's length from there, whatever lies past b's
// end: those bytes are never read from s.
func cacheText(s *[cacheLen]byte, b []byte, m int) int {
	if cap(b)-m < cacheLen {
		return copy(s[:], b[m:])
	}
	copyCached(s, (*[cacheLen]byte)(b[m:m+cacheLen]))
	return min(len(b)-m, cacheLen)
}

// copyCached copies src to dst, which do not overlap.
func copyCached(dst, src *[cacheLen]byte) {
	*(*[16]byte)(dst[:16]) = [16]byte(src[:16])
	*(*[cacheLen - 16]byte)(dst[16:]) = [cacheLen - 16]byte(src[16:])
}

// octets holds the decimal digits of each octet.
var octets = func() (t [256]struct {
	s [3]byte
	n uint8
}) {
	for i := range t {
		t[i].n = uint8(copy(t[i].s[:], strconv.Itoa(i)))
	}
	return t
}()

// appendInt appends v in decimal, as strconv.AppendInt(b, v, 10) writes
// it: a number of a CSV row (frames, ports, counts), its digits written
// in place two at a time, rather than into an array of their own and
// copied.
func appendInt(b []byte, v int64) []byte {
	// Most are below 100 (counts, a SYN's retransmissions): inlined.
	if uint64(v) < 100 {
		if v < 10 {
			return append(b, byte('0'+v))
		}
		return append(b, pairs[2*v], pairs[2*v+1])
	}
	return appendLarge(b, v)
}

// appendLarge is appendInt for the numbers from 100 on, and the negative
// ones.
func appendLarge(b []byte, v int64) []byte {
	if v < 0 {
		return strconv.AppendInt(b, v, 10)
	}
	u := uint64(v)
	n := bits.Len64(u|1) * 1233 >> 12 // digits, or one fewer: log2 of u times log10 of 2
	if u|1 >= pow10[n] {
		n++
	}
	m := len(b)
	b = slices.Grow(b, n)[:m+n]
	d := b[m:]
	i := n
	for u >= 100 {
		q := u / 100
		r := u - q*100
		i -= 2
		d[i], d[i+1] = pairs[2*r], pairs[2*r+1]
		u = q
	}
	if u >= 10 {
		d[i-2], d[i-1] = pairs[2*u], pairs[2*u+1]
	} else {
		d[i-1] = byte('0' + u)
	}
	return b
}

// pairs holds the two digits of each number below 100.
const pairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" +
	"60616263646566676869" + "70717273747576777879" + "80818283848586878889" +
	"90919293949596979899"

// pow10 holds the powers of ten a uint64 holds.
var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// appendSegRefs appends the cell segRefs gives for the segments l
// names, their frame numbers through frames.
func appendSegRefs(b []byte, l *model.SegRefs, frames *frameCache) []byte {
	for i := range min(l.N, model.MaxSegRefs) {
		if i > 0 {
			b = append(b, ' ')
		}
		if l.Frame[i] > 0 {
			b = frames.append(append(b, '#'), int64(l.Frame[i]))
		} else {
			b = appendInt(append(b, 'L'), int64(l.Line[i]))
		}
	}
	if l.N > model.MaxSegRefs {
		b = appendInt(append(b, " +"...), int64(l.N-model.MaxSegRefs))
	}
	return b
}
