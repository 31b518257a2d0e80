package flows

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// appendMillis writes what strconv.AppendFloat writes of the milliseconds,
// for durations of every size and sign, to the microsecond, at the ends
// of the integer path (25 days) and of a time.Duration.
func TestAppendMillis(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ds := []time.Duration{0, 1, -1, 999, -999, time.Microsecond, -time.Microsecond, 999 * time.Microsecond,
		time.Millisecond, -time.Millisecond, 1500 * time.Microsecond, time.Hour,
		(1<<41 - 1) * time.Microsecond, -(1<<41 - 1) * time.Microsecond,
		(1 << 41) * time.Microsecond, -(1 << 41) * time.Microsecond,
		math.MaxInt64, math.MinInt64}
	for range 20000 {
		ds = append(ds, time.Duration(rng.Int64N(int64(10*time.Second))-int64(5*time.Second)),
			time.Duration(rng.Int64N(1<<52))-1<<51, time.Duration(rng.Int64()), -time.Duration(rng.Int64()))
	}
	for _, d := range ds {
		want := strconv.AppendFloat([]byte("x"), float64(d.Microseconds())/1000, 'f', 3, 64)
		if got := appendMillis([]byte("x"), d); string(got) != string(want) {
			t.Errorf("%d ns: %s, want %s", int64(d), got, want)
		}
	}
}
