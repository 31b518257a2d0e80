package flows

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/netmortem/netmortem/internal/jsontime"
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
	sec    int64    // the Unix second prefix holds, when ok
	prefix [20]byte // "2006-01-02T15:04:05."
	ok     bool
}

// append appends t as jsontime.AppendMicro writes it.
func (m *microCache) append(b []byte, t time.Time) []byte {
	if t.Location() != time.UTC {
		return jsontime.AppendMicro(b, t)
	}
	sec := t.Unix()
	if !m.ok || sec != m.sec {
		n := len(b)
		b = jsontime.AppendMicro(b, t) // 27 bytes, clamped or not
		copy(m.prefix[:], b[n:])
		m.sec, m.ok = sec, true
		return b
	}
	us := t.Nanosecond() / 1000
	b = append(b, m.prefix[:]...)
	return append(b, byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10),
		byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10), 'Z')
}

// appendAddrPort appends ap as netip.AddrPort.AppendTo writes it; an
// IPv4 address's octets are written from a table.
func appendAddrPort(b []byte, ap netip.AddrPort) []byte {
	a := ap.Addr()
	if !a.Is4() {
		return ap.AppendTo(b)
	}
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
	return strconv.AppendUint(append(b, ':'), uint64(ap.Port()), 10)
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
