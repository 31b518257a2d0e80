package track

import (
	"fmt"
	"math"
	"time"

	"github.com/netmortem/netmortem/model"
)

// lonePacket is the first packet read with a time, while it is the only
// one (n counts them, up to 2) and the window the reading stage fills
// still holds it (ok): the next packet, or one more than 292 years from
// it, may be the one whose time is right (rebase). The runs of classic
// pcap records Stage.HotPcap takes are not counted: they follow a packet
// Hot took, counted, and are stamped in a capture's years, as it is, so
// no packet rebases from it.
type lonePacket struct {
	ok   bool
	n    uint8
	idx  int // its order among the packets (tcpSeg.idx)
	pos  model.Pos
	time time.Time
}

func (t *Tracker) toNS(tm time.Time) (ns int64, far bool) {
	if tm.IsZero() {
		return noTime, false
	}
	if !t.baseSet {
		t.base, t.baseSet, t.baseYears = tm, true, CaptureStamp(tm)
		if y := tm.Year(); y >= 1700 && y <= 2200 {
			t.baseUnix, t.baseUnixOK = tm.UnixNano(), true
		}
	}
	ns = int64(tm.Sub(t.base))
	if farNS(ns) || t.baseYears && strayNS(ns) && !CaptureStamp(tm) {
		return noTime, true
	}
	return ns, false
}

// y2200 is 2200-01-01T00:00:00Z in nanoseconds since 1970.
const y2200 = 7258118400 * uint64(time.Second)

// unixInYears is CaptureStamp for a time in nanoseconds since 1970 (UTC),
// which holds every time of the capture years: the fast path's test,
// where prepare tests a time.Time, whose nanoseconds since 1970 int64
// does not hold past 2262.
func unixInYears(unix int64) bool { return uint64(unix) < y2200 && !unsetSeconds(unix) }

// unsetSeconds reports whether unix, nanoseconds since 1970, lies in the
// second a 32-bit count of seconds left zero, or all ones, gives:
// 1970-01-01T00:00:00, or 2106-02-07T06:28:15, whatever the fraction.
func unsetSeconds(unix int64) bool {
	const ones = (1<<32 - 1) * int64(time.Second)
	return uint64(unix) < uint64(time.Second) || uint64(unix-ones) < uint64(time.Second)
}

// strayDay is how far from the first packet a packet stamped outside the
// capture years must lie to be read without its time, and how far from
// the next a first packet outside them must lie to be (rebase): a clock
// at boot may stamp packets just before 1970, and the ones after them
// just after.
const strayDay = 24 * time.Hour

// strayNS reports whether ns, a tracker time, lies more than strayDay
// from the first packet's.
func strayNS(ns int64) bool { return ns > int64(strayDay) || ns < -int64(strayDay) }

// farNS reports whether ns, a tracker time subNS or time.Time.Sub gave,
// saturated: the packet's time lies more than 292 years from base.
func farNS(ns int64) bool { return ns == math.MaxInt64 || ns == math.MinInt64 }

// noteTimed notes the packet just prepared, read with its time tm, at
// pos: the first is lone until the next, if the reading stage fills a
// window (Feed; Add folds each packet at once).
func (t *Tracker) noteTimed(pos model.Pos, tm time.Time) {
	if t.lone.n++; t.lone.n == 1 {
		t.lone = lonePacket{ok: t.filling != nil, n: 1, idx: t.packets, pos: pos, time: tm}
		return
	}
	t.lone.ok = false
}

// rebase makes tm, the time of the packet after the only packet read
// with a time so far, or of a later one more than 292 years from it, the
// time tracker times count from, when that packet's time lies outside
// the years a capture holds, more than a day from tm, and tm does not:
// the packet stamped first was the corrupt one, and every packet after
// it would otherwise be read without its time, or centuries from it.
// That packet, still in the window being filled, is read without its
// time instead, and is the one the warning names: it comes before any
// packet noted so far (others between the two, as far from both, stay
// read without their times). It reports whether it rebased.
func (t *Tracker) rebase(tm time.Time) bool {
	if !t.lone.ok || !CaptureStamp(tm) || CaptureStamp(t.lone.time) || !strayNS(int64(tm.Sub(t.lone.time))) {
		return false
	}
	for i := range t.filling.segs {
		if g := &t.filling.segs[i]; g.idx == t.lone.idx {
			g.ns = noTime
			break
		}
	}
	t.base, t.baseUnix, t.baseUnixOK, t.baseYears = tm, tm.UnixNano(), true, true
	t.first, t.last, t.hotSeen = time.Time{}, time.Time{}, false
	t.far++
	t.farPos, t.farTime = t.lone.pos, t.lone.time
	t.rebased = true
	t.lone = lonePacket{}
	return true
}

// CaptureYear reports whether tm lies in the years a capture's packets
// are stamped in: from 1970, when Unix time starts, to 2199. A packet
// stamped outside them is corrupt or forged.
func CaptureYear(tm time.Time) bool {
	y := tm.Year()
	return y >= 1970 && y < 2200
}

// CaptureStamp reports whether tm is a time a capture's packet is
// stamped with: in the capture years (CaptureYear), and not in the second
// a 32-bit count of seconds left zero or all ones gives
// (1970-01-01T00:00:00 and 2106-02-07T06:28:15, whatever the fraction),
// as a damaged record of a classic pcap holds. A device whose clock
// starts at 1970 when it boots stamps its first second so: such a stamp
// is a stray only more than a day from the capture's first packet.
func CaptureStamp(tm time.Time) bool {
	return CaptureYear(tm) && !unsetSeconds(tm.UnixNano())
}

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
// the two stamps corrupt or forged), or outside the years captures are
// stamped in (CaptureYear) and more than a day from it where the first
// packet is stamped in them, is read as a packet without a time, and
// left out of the capture's first and last times, rather than given the
// nearest time they hold or a time it does not have, with the capture's
// clock moved on to it. Where the first packet's time lies outside those
// years and the next's, more than a day from it, does not (or a later
// one's, more than 292 years from it), the first is the one read
// without its time, and the others count from the later one (rebase).
// A stamp in those years that CaptureStamp refuses, more than a day from
// the first packet, is read without its time as one outside them.
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
	// A stamp in the capture years read without its time, and not more
	// than 292 years from the first, is one of the seconds a 32-bit count
	// left zero or all ones gives.
	const unset = "is in the second a 32-bit count of seconds left zero or all ones gives, so it is corrupt"
	switch far, base := t.farTime.Format(time.RFC3339Nano), t.base.Format(time.RFC3339Nano); {
	case t.rebased && CaptureYear(t.farTime):
		return model.Errorf(t.farPos, "", "time %s, the first packet's, %s, and lies more than a day from a later packet's, %s: the packet is read without its time, and the others count from that later one%s",
			far, unset, base, more)
	case t.rebased:
		return model.Errorf(t.farPos, "", "time %s, the first packet's, lies outside the years captures are stamped in (1970 to 2199), where a later packet's, %s, lies, so it is corrupt or forged: the packet is read without its time, and the others count from that later one%s",
			far, base, more)
	case farNS(int64(t.farTime.Sub(t.base))):
		return model.Errorf(t.farPos, "", "time %s lies more than 292 years from the first packet's, %s, so one of them is corrupt or forged: the packet is read without its time%s",
			far, base, more)
	case CaptureYear(t.farTime):
		return model.Errorf(t.farPos, "", "time %s %s, and lies more than a day from the first packet's, %s: the packet is read without its time%s",
			far, unset, base, more)
	default:
		return model.Errorf(t.farPos, "", "time %s lies outside the years captures are stamped in (1970 to 2199), where the first packet's, %s, lies, so it is corrupt or forged: the packet is read without its time%s",
			far, base, more)
	}
}
