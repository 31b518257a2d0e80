// Package jsontime keeps a time that RFC 3339 cannot write from failing a
// whole output. encoding/json refuses a time.Time whose year is before 0 or
// after 9999, and a capture can hold any: a pcapng timestamp counts 64 bits
// of microseconds (584,000 years), plus an interface's offset in seconds.
// Such a time is written with its year clamped to 0 or 9999 (the rest of
// it, in UTC, as it was), and the output says so in one warning.
package jsontime

import "time"

// Bounds of the years RFC 3339 (and encoding/json) can write.
const (
	MinYear = 0
	MaxYear = 9999
)

// The first and the last second of the years in range, in UTC, as Unix
// times (TestInRange holds them to time.Date).
const (
	minUnix = -62167219200 // 0000-01-01T00:00:00Z
	maxUnix = 253402300799 // 9999-12-31T23:59:59Z
)

// InRange reports whether t can be written as RFC 3339 as it is: its year,
// where it is, is within MinYear and MaxYear. The zero time is in range.
func InRange(t time.Time) bool {
	if t.Location() == time.UTC {
		// Without working out the date, for the times of every segment
		// of hundreds of thousands of attempts.
		return UTCInRange(t)
	}
	y := t.Year()
	if y < MinYear || y > MaxYear {
		return false
	}
	_, offset := t.Zone()
	// encoding/json also refuses zone offsets of a day or more.
	return offset > -24*3600 && offset < 24*3600
}

// UTCInRange reports whether t is in UTC and in range (InRange): the
// times a capture's attempts hold. False says nothing more; InRange
// tells. It is inlined where InRange is not.
func UTCInRange(t time.Time) bool {
	return t.Location() == time.UTC && uint64(t.Unix()-minUnix) <= maxUnix-minUnix
}

// Clamp returns t in UTC with its year brought within MinYear and MaxYear;
// month, day, clock and nanoseconds stay. A time in range is returned as
// it is.
func Clamp(t time.Time) time.Time {
	if InRange(t) {
		return t
	}
	u := t.UTC()
	y := min(max(u.Year(), MinYear), MaxYear)
	month, day := u.Month(), u.Day()
	if month == time.February && day == 29 && !leap(y) {
		day = 28 // a leap day in a year without one would roll into March
	}
	return time.Date(y, month, day, u.Hour(), u.Minute(), u.Second(), u.Nanosecond(), time.UTC)
}

func leap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// MicroLayout is the layout of the times netmortem's tables of attempts
// write: RFC 3339 in UTC with microseconds.
const MicroLayout = "2006-01-02T15:04:05.000000Z"

// AppendMicro appends Clamp(t) in UTC as MicroLayout writes it, the
// microseconds truncated, without reading the layout: what AppendFormat
// gives, in a third of its time, for the hundreds of thousands of rows
// of a large capture's attempts.
func AppendMicro(b []byte, t time.Time) []byte {
	u := t
	if t.Location() != time.UTC {
		u = Clamp(t).UTC()
	}
	y, mo, d := u.Date()
	if y < MinYear || y > MaxYear { // clamped, or in range in its zone only
		return Clamp(t).UTC().AppendFormat(b, MicroLayout)
	}
	h, mi, s := u.Clock()
	us := u.Nanosecond() / 1000
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-')
	b = append(b, byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), 'T')
	b = append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':')
	b = append(b, byte('0'+s/10), byte('0'+s%10), '.')
	b = append(b, byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10),
		byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10), 'Z')
	return b
}
