package track

import (
	"time"

	"github.com/netmortem/netmortem/model"
)

// Rows (Options.EachRow). A connection table's row shows a few of an
// attempt's values: building the whole attempt for it (its segments,
// each with its time, its data sizes) takes most of the instructions a
// large capture's table costs. rowInto works the row out from the
// stream instead, as Attempt.Row works it out from the attempt, when
// every time the attempt would hold converts in the clock's fast path
// (clock.time): then each is in RFC 3339's range, and the row needs none
// of them but its start. Otherwise the row is handed on as its attempt.

// rowInto writes e's row into r, as the attempt attemptInto builds would
// give it (model.Attempt.Row), and reports whether it did: false, with r
// untouched, when a time of the attempt is not one the clock converts
// from Unix nanoseconds (no time at all, a clock not in UTC, or one
// beyond what Unix nanoseconds hold), or when its times span more than a
// century.
func (b *builder) rowInto(r *model.Row, e ended) bool {
	s := e.stream
	if !b.unixTimes(e) {
		return false
	}
	cd := s.clientDir()
	sd := 1 - cd
	first := e.where(s.first)
	file := b.file
	if first.file != 0 {
		file = b.files[first.file]
	}
	// Zeroed, then written field by field: a composite literal would be
	// built in a temporary of its own and copied, 496 bytes more a row.
	*r = model.Row{}
	r.Node, r.Pos.File, r.Pos.Frame, r.Pos.Line = b.node, file, first.frame, int(first.line)
	r.Start, r.Client, r.Server, r.Outcome = b.time(s.first.ns), s.end(cd), s.end(sd), s.outcome()
	r.ConnState, r.History = s.connState(cd), b.history(s, cd)
	r.Packets, r.ClientBytes, r.ServerBytes = s.packets, s.bytes[cd], s.bytes[sd]
	synTag, synackTag := uint32(segSYN<<1|cd), uint32(segSYNACK<<1|sd)
	cliRST, srvRST := uint32(segRST<<1|cd), uint32(segRST<<1|sd)
	var syn, synack, prev int64
	segs := e.segList()
	for _, g := range segs {
		switch g.tag() {
		case synTag:
			// As model.DistinctSegs counts them: a SYN within
			// MinSYNRetransmission of the one before is a copy.
			if r.SYN.N == 0 {
				syn = g.ns
				r.SYNRetransmissions = -1
			}
			if r.SYN.N == 0 || time.Duration(subNS(g.ns, prev)) >= model.MinSYNRetransmission {
				r.SYNRetransmissions++
			}
			prev = g.ns
			w := e.where(g)
			r.SYN.AddAt(w.frame, int(w.line))
		case synackTag:
			if r.SYNACK.N == 0 {
				synack = g.ns
			}
			w := e.where(g)
			r.SYNACK.AddAt(w.frame, int(w.line))
		case cliRST:
			w := e.where(g)
			r.RST.AddAt(w.frame, int(w.line))
		}
	}
	for _, g := range segs {
		if g.tag() == srvRST {
			w := e.where(g)
			r.RST.AddAt(w.frame, int(w.line))
		}
	}
	if r.SYN.N > 0 && r.SYNACK.N > 0 {
		r.TimeToSYNACK, r.SYNACKTimed = timeTo(synack, syn)
	}
	return true
}

// rowOf works e's row out into r, or, where rowInto cannot, builds e's
// attempt into the zero attempt slot returns and makes r hold it. It
// returns that attempt; nil for a row worked out.
func (b *builder) rowOf(r *model.Row, e ended, slot func() *model.Attempt) *model.Attempt {
	if b.rowInto(r, e) {
		return nil
	}
	a := slot()
	b.attemptInto(a, e)
	*r = model.Row{Attempt: a}
	return a
}

// appendZero appends a zero value to *l and returns it.
func appendZero[T any](l *[]T) *T {
	var zero T
	*l = append(*l, zero)
	return &(*l)[len(*l)-1]
}

// unixTimes reports whether every time of e's attempt converts from Unix
// nanoseconds (clock.time): its first and last packets', its segments'
// and its retransmissions'; and whether they are within a century of
// each other, so that the time between any two is as time.Time.Sub gives
// it for the times they convert to.
func (b *builder) unixTimes(e ended) bool {
	s := e.stream
	lo, hi := s.first.ns, s.first.ns
	see := func(ns int64) { lo, hi = min(lo, ns), max(hi, ns) }
	see(s.first.ns)
	see(s.last)
	if s.ackSeen {
		see(s.firstAck.ns)
	}
	for dir := range 2 {
		if s.finSeen[dir] {
			see(s.fin[dir].ns)
		}
		for _, r := range e.retx(dir) {
			see(r.at.ns)
		}
	}
	for _, g := range e.segList() {
		see(g.ns)
	}
	// The times clock.unix converts are a range (those whose sum with the
	// base does not overflow), and noTime is below it: the earliest and
	// the latest tell for all.
	return b.clock.unix(lo) && b.clock.unix(hi) && subNS(hi, lo) < int64(100*365*24*time.Hour)
}

// unix reports whether c converts the tracker time ns from Unix
// nanoseconds: whether c.time(ns) is base plus ns, in UTC, within the
// years Unix nanoseconds hold (1678 to 2262).
func (c *clock) unix(ns int64) bool {
	u := c.baseUnix + ns
	return ns != noTime && c.unixUTC && (u >= c.baseUnix) == (ns >= 0)
}
