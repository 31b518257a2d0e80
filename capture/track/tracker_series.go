package track

import (
	"time"

	"github.com/netmortem/netmortem/model"
)

// A Tracker reads a rotated series of files as one capture: StartFile and
// EndFile frame each file, whose name the segments read from it point to
// (files), and FileOutcomes gives each file its connections' outcomes
// once the series is finished.

// fileIndex returns name's index in t.files, adding it when new. A series
// has a handful of files, the last one the most asked for.
func (t *Tracker) fileIndex(name string) uint32 {
	if i := t.findFile(name); i > 0 {
		return uint32(i)
	}
	if len(t.files) > fileMask {
		// 2^28 files in one series: more than any run opens.
		return fileMask
	}
	t.files = append(t.files, name)
	return uint32(len(t.files) - 1)
}

// findFile returns name's index in t.files, 0 when it is not there.
func (t *Tracker) findFile(name string) int {
	for i := len(t.files) - 1; i > 0; i-- {
		if t.files[i] == name {
			return i
		}
	}
	return 0
}

// FileMark is what Tracker.StartFile notes of a series before one of its
// files is read.
type FileMark struct {
	counts      model.Counts
	first, last time.Time
}

// StartFile makes t read a series of files, rotated by tcpdump -C or -G,
// as one capture, and starts one of them: the packets from now on come
// from name, their evidence points there, and EndFile will give their
// counts and times.
func (t *Tracker) StartFile(name string) FileMark {
	t.series = true
	m := FileMark{counts: t.counts, first: t.first, last: t.last}
	t.first, t.last = time.Time{}, time.Time{}
	t.file = name
	t.curFile = t.fileIndex(name)
	return m
}

// EndFile ends the file m started, once t has been fed its packets (Feed
// returns), and returns what the file added up to: its counts and its
// first and last packet times.
func (t *Tracker) EndFile(m FileMark) (counts model.Counts, first, last time.Time) {
	counts, first, last = t.counts.Sub(m.counts), t.first, t.last
	if !m.first.IsZero() && m.first.Before(t.first) {
		t.first = m.first
	}
	if m.last.After(t.last) {
		t.last = m.last
	}
	return counts, first, last
}

// FileOutcomes returns, once Finish has finalized every connection of a
// series, the outcomes of those whose first packet was in the file name
// (started with StartFile): Counts with Established, Refused, Unanswered
// and SYNACKClientRST set. EndFile's counts hold the outcomes of the
// connections finalized while the file was read, which a connection
// lingering after its last packet may reach files later, or only at the
// end.
func (t *Tracker) FileOutcomes(name string) model.Counts {
	if i := t.findFile(name); i > 0 && i < len(t.fileOutcomes) {
		return t.fileOutcomes[i]
	}
	return model.Counts{}
}

// countFileOutcome counts, in a series, the outcome of a connection whose
// first packet was in the file of index file, for FileOutcomes.
func (t *Tracker) countFileOutcome(file uint32, outcome model.Outcome) {
	f := int(file)
	if f >= len(t.fileOutcomes) {
		t.fileOutcomes = append(t.fileOutcomes, make([]model.Counts, f+1-len(t.fileOutcomes))...)
	}
	countOutcome(&t.fileOutcomes[f], outcome)
}

// SetFile names the file evidence points into when a packet's position
// names none; the Result's Info names it too.
func (t *Tracker) SetFile(name string) { t.file = name }
