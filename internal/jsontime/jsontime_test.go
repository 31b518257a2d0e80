package jsontime

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestClamp(t *testing.T) {
	for _, c := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2022, 9, 15, 19, 9, 2, 5, time.UTC), "2022-09-15T19:09:02.000000005Z"},
		{time.Time{}, "0001-01-01T00:00:00Z"},
		{time.Date(12345, 3, 4, 5, 6, 7, 8, time.UTC), "9999-03-04T05:06:07.000000008Z"},
		{time.Unix(1<<44, 0).UTC(), "9999-03-08T09:40:16Z"},
		{time.Date(10000, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)), "9999-12-31T23:00:00Z"},
		{time.Date(12000, 2, 29, 1, 0, 0, 0, time.UTC), "9999-02-28T01:00:00Z"},
		{time.Date(-44, 3, 15, 12, 0, 0, 0, time.UTC), "0000-03-15T12:00:00Z"},
		{time.Date(2022, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 30*3600)), "2021-12-30T18:00:00Z"},
	} {
		got := Clamp(c.in)
		b, err := json.Marshal(got)
		if err != nil {
			t.Errorf("Clamp(%v) = %v: %v", c.in, got, err)
			continue
		}
		if string(b) != `"`+c.want+`"` {
			t.Errorf("Clamp(%v) = %s, want %s", c.in, b, c.want)
		}
		if _, err := json.Marshal(c.in); (err == nil) != InRange(c.in) {
			t.Errorf("InRange(%v) = %v, but json.Marshal says %v", c.in, InRange(c.in), err)
		}
	}
}

// AppendMicro writes what AppendFormat writes with MicroLayout, on times
// of every year RFC 3339 writes, at the bounds and beyond them, in UTC
// and in other zones.
func TestAppendMicro(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	east, west := time.FixedZone("east", 13*3600+45*60), time.FixedZone("west", -11*3600)
	times := []time.Time{
		{},
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(9999, 12, 31, 23, 0, 0, 0, west), // year 10000 in UTC
		time.Date(0, 1, 1, 1, 0, 0, 0, east),       // year -1 in UTC
		time.Date(-5, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(123456, 2, 29, 12, 0, 0, 1500, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 999999, time.UTC),
		time.Date(2026, 11, 28, 14, 34, 57, 304978123, time.UTC),
	}
	for range 10000 {
		sec := rng.Int64N(253402300800) - 62135596800 // years 0 to 9999
		times = append(times, time.Unix(sec, rng.Int64N(1e9)).UTC(), time.Unix(sec, rng.Int64N(1e9)).In(east))
	}
	for _, tm := range times {
		want := Clamp(tm).UTC().AppendFormat([]byte("x"), MicroLayout)
		if got := AppendMicro([]byte("x"), tm); string(got) != string(want) {
			t.Errorf("%v: %s, want %s", tm, got, want)
		}
	}
}

func BenchmarkAppendMicro(b *testing.B) {
	tm := time.Date(2026, 11, 28, 14, 34, 57, 304978123, time.UTC)
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = AppendMicro(buf[:0], tm)
	}
}

// InRange gives, for times in UTC, what their year and zone say, at the
// bounds of the years in range, beyond them, and at the ends of what a
// time.Time can hold.
func TestInRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	slow := func(tm time.Time) bool {
		y := tm.Year()
		_, offset := tm.Zone()
		return y >= MinYear && y <= MaxYear && offset > -24*3600 && offset < 24*3600
	}
	times := []time.Time{
		{},
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Nanosecond),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(math.MaxInt64, 999999999).UTC(),
		time.Unix(math.MinInt64, 0).UTC(),
		time.Unix(-62135596800-86400*366, 0).UTC(),
		time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("west", -11*3600)),
		time.Date(0, 1, 1, 1, 0, 0, 0, time.FixedZone("east", 13*3600)),
		time.Date(2026, 11, 29, 1, 0, 0, 0, time.FixedZone("day", 24*3600)),
	}
	for range 20000 {
		sec := rng.Int64N(2*253402300800) - 2*62135596800 // years -2000 to 18000
		times = append(times, time.Unix(sec, rng.Int64N(1e9)).UTC())
	}
	for range 2000 {
		sec := rng.Int64N(2*253402300800) - 2*62135596800
		times = append(times, time.Unix(sec, 0).In(time.FixedZone("east", 5*3600)))
	}
	// The bounds as time.Date gives them.
	if minUnix != time.Date(MinYear, 1, 1, 0, 0, 0, 0, time.UTC).Unix() || maxUnix != time.Date(MaxYear+1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()-1 {
		t.Errorf("bounds %d and %d, not the years %d to %d", int64(minUnix), int64(maxUnix), MinYear, MaxYear)
	}
	in := 0
	for _, tm := range times {
		want := slow(tm)
		if got := InRange(tm); got != want {
			t.Errorf("%v: InRange %v, want %v", tm, got, want)
		}
		if got := UTCInRange(tm); got != (want && tm.Location() == time.UTC) {
			t.Errorf("%v: UTCInRange %v, want %v", tm, got, want && tm.Location() == time.UTC)
		}
		if want {
			in++
		}
	}
	if in < len(times)/4 || in > 3*len(times)/4 {
		t.Errorf("%d of %d times in range: the test's times miss the bounds", in, len(times))
	}
}
