package flows

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/jsontime"
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
		got := m.append([]byte("x"), tm)
		if want := jsontime.AppendMicro([]byte("x"), tm); string(got) != string(want) {
			t.Fatalf("%v: %s, want %s", tm, got, want)
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
