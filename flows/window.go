package flows

import (
	"net/netip"
	"time"

	"github.com/netmortem/netmortem/model"
)

// Why an attempt's start cannot be placed in a filter's time window.
const (
	placed    = iota // it can: it has a time the bounds compare with, or there is no window
	missTime         // it has no time (text without times, tcpdump -t; a corrupt stamp)
	missDate         // a time in year 0, without a date, and a bound with a date
	missDated        // a time with a date, and a bound in year 0
	missKinds
)

// windowMiss tells whether an attempt that started at start can be placed
// in f's time window, and why not: text printed as tcpdump prints it by
// default has times of day, which count from year 0, as do times counted
// from a text's first packet, and no day of a capture with dates is
// theirs.
func (f *Filter) windowMiss(start time.Time) int {
	if f.Since.IsZero() && f.Until.IsZero() {
		return placed
	}
	if start.IsZero() {
		return missTime
	}
	undated := start.Year() == 0
	for _, b := range [2]time.Time{f.Since, f.Until} {
		if !b.IsZero() && (b.Year() == 0) != undated {
			if undated {
				return missDate
			}
			return missDated
		}
	}
	return placed
}

// unplacedCount counts the attempts a filter's time window left out for
// want of a time it can place (windowMiss) though they pass its other
// tests, by why, and keeps where the first of each was.
type unplacedCount struct {
	n     [missKinds]int
	first [missKinds]model.Pos
}

// note counts the attempt at pos, from client to server, of outcome and
// Zeek state state, that started at start, when f left it out for want of
// a time it can place; it is called for the attempts f does not match.
func (c *unplacedCount) note(f *Filter, pos model.Pos, client, server netip.AddrPort, outcome model.Outcome, state string, start time.Time) {
	miss := f.windowMiss(start)
	if miss == placed {
		return
	}
	rest := Filter{Hosts: f.Hosts, Ports: f.Ports, States: f.States}
	if !rest.match(client, server, outcome, state, start) {
		return
	}
	if c.n[miss]++; c.n[miss] == 1 {
		c.first[miss] = pos
	}
}

// count returns how many were left out for miss, and where the first was.
func (c *unplacedCount) count(miss int) (int, model.Pos) { return c.n[miss], c.first[miss] }

// undated returns how many were left out for a date the attempt's time
// or the bound lacks (both are not: the bounds have a date or they do
// not), where the first was, and whether those attempts' times are the
// ones with a date.
func (c *unplacedCount) undated() (n int, first model.Pos, dated bool) {
	if c.n[missDated] > 0 {
		return c.n[missDated], c.first[missDated], true
	}
	return c.n[missDate], c.first[missDate], false
}
