package track

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// clock.time gives, from base's Unix nanoseconds, the very time base.Add
// gives: same instant, same location, equal as values, on bases across
// the years a fast path takes and offsets up to overflow.
func TestClockTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	bases := []time.Time{
		time.Unix(0, 0).UTC(),
		time.Unix(1764340497, 304978123).UTC(),
		time.Date(1700, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(2200, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 5, time.UTC),
	}
	offsets := []int64{0, 1, -1, 999999999, -999999999, 1e9, -1e9, math.MaxInt64, math.MinInt64 + 1, math.MaxInt64 / 2, math.MinInt64 / 2}
	for range 2000 {
		offsets = append(offsets, rng.Int64N(1<<50)-1<<49, rng.Int64()>>rng.IntN(64))
	}
	for _, base := range bases {
		c := clock{base, base.UnixNano(), true}
		for _, ns := range offsets {
			got, want := c.time(ns), base.Add(time.Duration(ns))
			if got != want || got.Location() != want.Location() {
				t.Fatalf("base %v + %d ns: %v (%v), want %v (%v)", base, ns, got, got.Location(), want, want.Location())
			}
		}
		if got := c.time(noTime); !got.IsZero() {
			t.Errorf("base %v: noTime gives %v, want the zero time", base, got)
		}
	}
	// A base in another zone keeps it.
	east := time.Date(2026, 11, 29, 4, 30, 0, 0, time.FixedZone("east", 3600))
	tr := &Tracker{}
	tr.toNS(east)
	c := tr.clock()
	if c.unixUTC {
		t.Fatal("a base in another zone is taken as UTC")
	}
	if got, want := c.time(5e9), east.Add(5*time.Second); got != want {
		t.Errorf("%v, want %v", got, want)
	}
}

// history gives the letters historyLetters writes, whatever the stream's
// bytes past its history hold and however often the cache's entries are
// taken by other histories.
func TestBuilderHistory(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var b builder
	for i := range 50000 {
		var s stream
		s.nHist = uint8(rng.IntN(len(s.history) + 1))
		if i%3 == 0 {
			s.nHist = uint8(rng.IntN(3)) // the common short ones, again and again
		}
		for j := range s.history {
			if j < int(s.nHist) {
				s.history[j] = byte(rng.IntN(12))
			} else {
				s.history[j] = byte(rng.IntN(256)) // stale bytes
			}
		}
		cd := rng.IntN(2)
		if got, want := b.history(&s, cd), string(s.historyLetters(nil, cd)); got != want {
			t.Fatalf("history %v (%d), client %d: %q, want %q", s.history, s.nHist, cd, got, want)
		}
	}
}

// The times a clock converts from Unix nanoseconds (clock.unix) are a
// range, noTime outside it, so that unixTimes tests the earliest and the
// latest of an attempt's times for all of them.
func TestClockUnixRange(t *testing.T) {
	ns := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 62, -1, 0, 1, 1 << 62, math.MaxInt64 - 1, math.MaxInt64}
	for _, base := range []int64{0, 1, 1_764_000_000e9, -1_764_000_000e9, math.MaxInt64, math.MinInt64 + 1} {
		c := clock{baseUnix: base, unixUTC: true}
		l := slices.Clone(ns)
		l = append(l, math.MaxInt64-base, math.MaxInt64-base+1, math.MinInt64-base, math.MinInt64-base-1)
		slices.Sort(l)
		for i, lo := range l {
			all := true
			for _, hi := range l[i:] {
				all = all && c.unix(hi)
				if got := c.unix(lo) && c.unix(hi); got != all {
					t.Errorf("base %d: unix(%d) && unix(%d) = %v, but not every time between", base, lo, hi, got)
				}
			}
		}
	}
}
