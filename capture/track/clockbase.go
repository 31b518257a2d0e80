package track

import (
	"fmt"
	"math"
	"time"

	"github.com/netmortem/netmortem/model"
)

func (t *Tracker) toNS(tm time.Time) (ns int64, far bool) {
	if tm.IsZero() {
		return noTime, false
	}
	if !t.baseSet {
		t.base, t.baseSet = tm, true
		if y := tm.Year(); y >= 1700 && y <= 2200 {
			t.baseUnix, t.baseUnixOK = tm.UnixNano(), true
		}
	}
	ns = int64(tm.Sub(t.base))
	if farNS(ns) {
		return noTime, true
	}
	return ns, false
}

// farNS reports whether ns, a tracker time subNS or time.Time.Sub gave,
// saturated: the packet's time lies more than 292 years from base.
func farNS(ns int64) bool { return ns == math.MaxInt64 || ns == math.MinInt64 }

// noteFar counts a packet at pos read without its time tm, which lies
// too far from base for the tracker's nanoseconds.
func (t *Tracker) noteFar(pos model.Pos, tm time.Time) {
	if t.far++; t.far == 1 {
		t.farPos, t.farTime = pos, tm
	}
}

// FarTimes returns an error at the first packet read without its time,
// nil when there is none. Tracker times count nanoseconds from the first
// packet's time; a packet stamped more than 292 years from it (one of
// the two stamps corrupt or forged) is read as a packet without a time,
// and left out of the capture's first and last times, rather than
// given the nearest time they hold: a time it does not have, and the
// capture's clock moved on to it.
func (t *Tracker) FarTimes() error {
	if t.far == 0 {
		return nil
	}
	more := ""
	switch {
	case t.far == 2:
		more = " (and 1 more packet)"
	case t.far > 2:
		more = fmt.Sprintf(" (and %d more packets)", t.far-1)
	}
	return model.Errorf(t.farPos, "", "time %s lies more than 292 years from the first packet's, %s, so one of them is corrupt or forged: the packet is read without its time%s",
		t.farTime.Format(time.RFC3339Nano), t.base.Format(time.RFC3339Nano), more)
}
