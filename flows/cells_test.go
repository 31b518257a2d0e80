package flows

import (
	"io"
	"math"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/jsontime"
	"github.com/netmortem/netmortem/model"
)

// microCache writes what jsontime.AppendMicro writes, on runs of times
// within one second, across seconds, in other zones and out of range.
func TestMicroCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	east := time.FixedZone("east", 5*3600+30*60)
	base := time.Date(2026, 11, 28, 14, 34, 57, 0, time.UTC).Unix()
	var m microCache
	for i := range 100000 {
		var tm time.Time
		switch rng.IntN(8) {
		case 0:
			tm = time.Unix(base+rng.Int64N(3), rng.Int64N(1e9)).In(east)
		case 1:
			tm = time.Unix(rng.Int64N(1<<40)-1<<39, rng.Int64N(1e9)).UTC() // years far out of range too
		case 2:
			tm = time.Time{}
		default:
			tm = time.Unix(base+int64(i/1000), rng.Int64N(1e9)).UTC() // a thousand to a second
		}
		got := m.append(prefixX(i), tm)
		if want := jsontime.AppendMicro([]byte("x"), tm); string(got) != string(want) {
			t.Fatalf("%v: %s, want %s", tm, got, want)
		}
	}
}

// nanoCache writes what time.Time.AppendText writes, with its error, on
// runs of times within one second (nanoseconds with trailing zeros, and
// none), across seconds, in other zones and out of range.
func TestNanoCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	east := time.FixedZone("east", 5*3600+30*60)
	base := time.Date(2026, 11, 28, 14, 34, 57, 0, time.UTC).Unix()
	var m nanoCache
	for i := range 100000 {
		ns := rng.Int64N(1e9)
		switch rng.IntN(4) {
		case 0:
			ns = 0
		case 1:
			ns -= ns % []int64{10, 1000, 1e6, 1e8}[rng.IntN(4)]
		}
		var tm time.Time
		switch rng.IntN(8) {
		case 0:
			tm = time.Unix(base+rng.Int64N(3), ns).In(east)
		case 1:
			tm = time.Unix(rng.Int64N(1<<40)-1<<39, ns).UTC() // years out of range too
		case 2:
			tm = time.Time{}
		default:
			tm = time.Unix(base+int64(i/1000), ns).UTC() // a thousand to a second
		}
		got, err := m.append([]byte("x"), tm)
		want, wantErr := tm.AppendText([]byte("x"))
		if (err != nil) != (wantErr != nil) || err == nil && string(got) != string(want) {
			t.Fatalf("%v: %s (%v), want %s (%v)", tm, got, err, want, wantErr)
		}
	}
}

// appendAddrPort writes what netip.AddrPort.AppendTo writes.
func TestAppendAddrPort(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	aps := []netip.AddrPort{
		{},
		netip.MustParseAddrPort("0.0.0.0:0"),
		netip.MustParseAddrPort("255.255.255.255:65535"),
		netip.MustParseAddrPort("10.0.0.1:80"),
		netip.MustParseAddrPort("[::ffff:10.0.0.1]:80"),
		netip.MustParseAddrPort("[fe80::1%eth0]:443"),
		netip.MustParseAddrPort("[2001:db8::1]:53"),
	}
	for range 20000 {
		var a4 [4]byte
		for i := range a4 {
			a4[i] = byte(rng.IntN(256))
		}
		aps = append(aps, netip.AddrPortFrom(netip.AddrFrom4(a4), uint16(rng.IntN(65536))))
	}
	for _, ap := range aps {
		if got, want := appendAddrPort([]byte("x"), ap), ap.AppendTo([]byte("x")); string(got) != string(want) {
			t.Fatalf("%v: %s, want %s", ap, got, want)
		}
	}
}

// A CSVWriter counts a time out of range in any of an attempt's times,
// the others in range, as Table.OutOfRange does; and none for times in
// range in UTC or in another zone.
func TestRangeCountEachTime(t *testing.T) {
	far := time.Date(12345, 6, 7, 8, 9, 10, 0, time.UTC)
	zoned := time.Date(2026, 11, 29, 5, 0, 0, 0, time.FixedZone("east", 5*3600))
	set := []func(a *model.Attempt, tm time.Time){
		func(a *model.Attempt, tm time.Time) { a.Start = tm },
		func(a *model.Attempt, tm time.Time) { a.End = tm },
		func(a *model.Attempt, tm time.Time) { a.SYN[1].Time = tm },
		func(a *model.Attempt, tm time.Time) { a.SYNACK[0].Time = tm },
		func(a *model.Attempt, tm time.Time) { a.ClientRST[0].Time = tm },
		func(a *model.Attempt, tm time.Time) { a.ServerRST[0].Time = tm },
		func(a *model.Attempt, tm time.Time) { a.FirstAck.Time = tm },
		func(a *model.Attempt, tm time.Time) { a.ClientFIN.Time = tm },
		func(a *model.Attempt, tm time.Time) { a.ServerFIN.Time = tm },
	}
	base := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	seg := func(f int) model.Seg { return model.Seg{Frame: f, Time: base.Add(time.Duration(f) * time.Millisecond)} }
	for i, f := range set {
		for _, c := range []struct {
			tm   time.Time
			want int
		}{{far, 1}, {zoned, 0}, {time.Time{}, 0}} {
			s1, s2, s3 := seg(7), seg(8), seg(9)
			a := model.Attempt{Pos: model.Pos{File: "a.pcap", Frame: 1}, Start: base, End: base.Add(time.Second),
				SYN: []model.Seg{seg(1), seg(2)}, SYNACK: []model.Seg{seg(3)}, ClientRST: []model.Seg{seg(4)}, ServerRST: []model.Seg{seg(5)},
				FirstAck: &s1, ClientFIN: &s2, ServerFIN: &s3}
			f(&a, c.tm)
			w := NewCSVWriter(io.Discard, Filter{})
			w.Write(&a)
			n, _ := w.OutOfRange()
			tn, _ := (&Table{Attempts: []model.Attempt{a}}).OutOfRange()
			if n != c.want || tn != c.want {
				t.Errorf("time %d set to %v: %d out of range (the table's count %d), want %d", i, c.tm, n, tn, c.want)
			}
		}
	}
}

// appendInt writes what strconv.AppendInt writes, at every number of
// digits and on both sides of each power of ten.
func TestAppendInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	vals := []int64{0, 1, 9, 10, 11, 99, 100, 101, -1, -100, math.MaxInt64, math.MinInt64}
	for p := int64(1); p <= math.MaxInt64/10; p *= 10 {
		vals = append(vals, p-1, p, p+1, 10*p-1)
	}
	for range 100000 {
		vals = append(vals, rng.Int64()>>rng.IntN(64), rng.Int64N(1<<24))
	}
	for _, v := range vals {
		if got, want := appendInt([]byte("x"), v), strconv.AppendInt([]byte("x"), v, 10); string(got) != string(want) {
			t.Fatalf("%d: %s, want %s", v, got, want)
		}
	}
}

// An addrCache writes what netip.AddrPort.AppendTo writes, on runs of
// one address and port, of one address with other ports, and of new
// addresses of every kind between them.
func TestAddrCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	others := []netip.AddrPort{
		{},
		netip.MustParseAddrPort("[::ffff:10.0.0.1]:80"),
		netip.MustParseAddrPort("[fe80::1%eth0]:443"),
		netip.MustParseAddrPort("[2001:db8::1]:53"),
		netip.MustParseAddrPort("255.255.255.255:65535"),
		netip.MustParseAddrPort("0.0.0.0:0"),
	}
	var c addrCache
	ap := netip.MustParseAddrPort("10.0.0.1:80")
	for i := range 100000 {
		switch rng.IntN(8) {
		case 0:
			ap = others[rng.IntN(len(others))]
		case 1:
			a4 := [4]byte{10, 0, byte(rng.IntN(3)), byte(rng.IntN(256))}
			ap = netip.AddrPortFrom(netip.AddrFrom4(a4), ap.Port())
		case 2, 3:
			ap = netip.AddrPortFrom(ap.Addr(), uint16(rng.IntN(65536)))
		}
		if got, want := c.append(prefixX(i), ap), ap.AppendTo([]byte("x")); string(got) != string(want) {
			t.Fatalf("%v: %s, want %s", ap, got, want)
		}
	}
}

// A frameCache writes what strconv.AppendInt writes, on runs of one
// number, of numbers one apart (across nines, and a power of ten), and of
// others, negative ones included.
func TestFrameCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	var c frameCache
	v := int64(1)
	for i := range 100000 {
		switch rng.IntN(6) {
		case 0:
			v = rng.Int64N(1<<24) - 10
		case 1:
			v = []int64{8, 9, 98, 99, 999, 1 << 40, math.MaxInt64 - 1, -1, 0}[rng.IntN(9)]
		case 2, 3:
			if v < math.MaxInt64 {
				v++
			}
		}
		if got, want := c.append(prefixX(i), v), strconv.AppendInt([]byte("x"), v, 10); string(got) != string(want) {
			t.Fatalf("%d: %s, want %s", v, got, want)
		}
	}
}

// prefixX returns "x" to append to for the i'th case of a cache's test:
// with no room past it, or (every other case) with room for the cache's
// whole text (appendCached), that room written over first.
func prefixX(i int) []byte {
	if i%2 == 0 {
		return []byte("x")
	}
	b := make([]byte, 64)
	for j := range b {
		b[j] = '?'
	}
	return append(b[:0], 'x')
}
