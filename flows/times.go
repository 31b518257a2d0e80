package flows

import (
	"slices"

	"github.com/netmortem/netmortem/internal/jsontime"
	"github.com/netmortem/netmortem/model"
)

// OutOfRange counts the times of the table that RFC 3339 cannot write as
// they are (a year before 0 or after 9999: a pcapng timestamp can reach the
// year 584,000), and returns where the first one is. Write writes them with
// the year clamped to 0 or 9999 (see package jsontime) in every format,
// rather than failing; a caller says so in one warning.
func (t *Table) OutOfRange() (n int, first model.Pos) {
	if t == nil {
		return 0, first
	}
	var c rangeCount
	for _, cp := range t.Captures {
		c.time(cp.First, model.Pos{File: cp.File})
		c.time(cp.Last, model.Pos{File: cp.File})
	}
	for i := range t.Attempts {
		c.note(&t.Attempts[i])
	}
	return c.n, c.first
}

// clamped returns t, or a copy of it whose times are all within the years
// RFC 3339 can write. Only a table holding such times is copied.
func (t *Table) clamped() *Table {
	if n, _ := t.OutOfRange(); n == 0 {
		return t
	}
	c := *t
	c.Captures = clampedCaptures(t.Captures)
	c.Attempts = slices.Clone(t.Attempts)
	for i := range c.Attempts {
		clampAttempt(&c.Attempts[i])
	}
	return &c
}

// clampAttempt clamps the times of a, a copy: the segments it changes are
// copied first, since the copy shares them with the snapshot.
func clampAttempt(a *model.Attempt) {
	a.Start, a.End = jsontime.Clamp(a.Start), jsontime.Clamp(a.End)
	for _, segs := range []*[]model.Seg{&a.SYN, &a.SYNACK, &a.ClientRST, &a.ServerRST} {
		if slices.ContainsFunc(*segs, func(s model.Seg) bool { return !jsontime.InRange(s.Time) }) {
			*segs = slices.Clone(*segs)
			for i := range *segs {
				(*segs)[i].Time = jsontime.Clamp((*segs)[i].Time)
			}
		}
	}
	for _, s := range []**model.Seg{&a.FirstAck, &a.ClientFIN, &a.ServerFIN} {
		if *s != nil && !jsontime.InRange((*s).Time) {
			c := **s
			c.Time = jsontime.Clamp(c.Time)
			*s = &c
		}
	}
	for _, d := range []**model.DataSizes{&a.ClientData, &a.ServerData} {
		if *d != nil && slices.ContainsFunc((*d).Retx, func(s model.Seg) bool { return !jsontime.InRange(s.Time) }) {
			c := **d
			c.Retx = slices.Clone(c.Retx)
			for i := range c.Retx {
				c.Retx[i].Time = jsontime.Clamp(c.Retx[i].Time)
			}
			*d = &c
		}
	}
}

// clampedCaptures returns a copy of cs whose first and last times are
// within the years RFC 3339 can write.
func clampedCaptures(cs []model.CaptureInfo) []model.CaptureInfo {
	out := slices.Clone(cs)
	for i := range out {
		out[i].First = jsontime.Clamp(out[i].First)
		out[i].Last = jsontime.Clamp(out[i].Last)
	}
	return out
}
