package timeline

import (
	"context"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// Bounds of what one timeline holds, so that the HTML report stays small
// whatever the capture: lanes beyond MaxLanes are left out (the busiest
// kept), and a lane with more than MaxLaneEvents events has them folded
// into time buckets, each event standing for Count of one kind.
const (
	MaxLanes      = 16
	MaxLaneEvents = 240
	foldBuckets   = 80
)

// Build returns the timelines of findings, by fingerprint: for each
// finding whose evidence has times, what happened over time behind it
// (see the package doc). rules are the rules that ran: what a finding's
// timeline draws is its rule's Plot (the zero Plot for a rule not among
// them). Findings without timed evidence have no entry. Build reads snap
// and never changes it; it stops early, returning what it built, when ctx
// ends.
func Build(ctx context.Context, snap *model.Snapshot, rules []*analyzer.Rule, findings []analyzer.Finding) map[string]*report.Timeline {
	out := map[string]*report.Timeline{}
	if snap == nil {
		return out
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b := &builder{ctx: ctx, snap: snap, all: findings, plots: map[string]*analyzer.Plot{}}
	for _, r := range rules {
		if r != nil {
			b.plots[r.Name] = &r.Plot
		}
	}
	for i := range findings {
		if ctx.Err() != nil {
			break
		}
		f := &findings[i]
		if tl := b.finding(f); tl != nil {
			out[f.Fingerprint] = tl
		}
	}
	return out
}

// builder builds the timelines of one snapshot's findings.
type builder struct {
	ctx  context.Context
	snap *model.Snapshot
	all  []analyzer.Finding
	// plots are the rules' plots, by rule name.
	plots map[string]*analyzer.Plot
}

// plot is how the findings of rule are drawn.
func (b *builder) plot(rule string) *analyzer.Plot {
	if p, ok := b.plots[rule]; ok {
		return p
	}
	return &analyzer.Plot{}
}

// part is one kind of record drawn on a timeline: lanes, spans across it,
// marks.
type part struct {
	title string
	lanes []report.Lane
	spans []report.Span
	marks []report.Mark
	// files are the captures the part's records come from, whose spans
	// bound the time shown.
	files []string
}

func (p *part) empty() bool { return len(p.lanes) == 0 && len(p.marks) == 0 && len(p.spans) == 0 }

// finding builds f's timeline, nil when nothing of it has a time.
func (b *builder) finding(f *analyzer.Finding) *report.Timeline {
	cited := citedSet(f)
	var parts []part
	add := func(p part) {
		if !p.empty() {
			parts = append(parts, p)
		}
	}
	for _, d := range b.plot(f.Rule).Draws() {
		switch d {
		case analyzer.PlotAttempts:
			add(b.attempts(f, cited))
		case analyzer.PlotICMP:
			add(b.icmp(f, cited))
		case analyzer.PlotARP:
			add(b.arp(f, cited))
		case analyzer.PlotRestarts:
			add(b.restarts(f, cited))
		case analyzer.PlotLogErrors:
			add(b.logErrors(f, cited))
		case analyzer.PlotStaleMark:
			add(b.staleMark(f))
		case analyzer.PlotCitedLogs:
			add(b.citedLogs(f, cited))
		}
	}
	return b.merge(parts)
}

// merge joins parts into one Timeline, leaving out a part whose times
// are of another clock than the first's (see the package doc).
func (b *builder) merge(parts []part) *report.Timeline {
	if len(parts) == 0 {
		return nil
	}
	tl := &report.Timeline{}
	var titles, files []string
	var ref []time.Time
	for i := range parts {
		p := &parts[i]
		ts := partTimes(p)
		if len(ts) == 0 {
			continue
		}
		if len(ref) > 0 && !alignClock(p, ref) {
			continue
		}
		ref = append(ref, partTimes(p)...)
		if len(titles) > 0 && len(p.marks) > 0 && len(p.lanes) == 0 {
			titles[len(titles)-1] += " against " + p.title
		} else {
			titles = append(titles, p.title)
		}
		tl.Lanes = append(tl.Lanes, p.lanes...)
		tl.Spans = append(tl.Spans, p.spans...)
		tl.Marks = append(tl.Marks, p.marks...)
		files = append(files, p.files...)
	}
	if len(ref) == 0 || len(tl.Lanes) == 0 {
		return nil // a mark or window alone draws nothing to set against it
	}
	if len(tl.Lanes) > MaxLanes {
		tl.Lanes = tl.Lanes[:MaxLanes]
	}
	tl.Title = strings.Join(titles, "; ")
	tl.Start, tl.End = slices.MinFunc(ref, time.Time.Compare), slices.MaxFunc(ref, time.Time.Compare)
	for _, c := range b.snap.Captures {
		if slices.Contains(files, c.File) && !c.First.IsZero() && c.First.Year() == tl.Start.Year() {
			tl.Start = minTime(tl.Start, c.First)
			tl.End = maxTime(tl.End, c.Last)
		}
	}
	sort.SliceStable(tl.Marks, func(i, j int) bool { return tl.Marks[i].Time.Before(tl.Marks[j].Time) })
	return tl
}

// partTimes lists the times a part holds.
func partTimes(p *part) []time.Time {
	var ts []time.Time
	for _, l := range p.lanes {
		for _, e := range l.Events {
			ts = append(ts, e.Time)
		}
		for _, s := range l.Spans {
			ts = append(ts, s.Start, s.End)
		}
	}
	for _, s := range p.spans {
		ts = append(ts, s.Start, s.End)
	}
	for _, m := range p.marks {
		ts = append(ts, m.Time)
	}
	return slices.DeleteFunc(ts, time.Time.IsZero)
}

// alignClock makes p's times of the clock of ref: when one side has
// no year (year 0) and the other has, the yearless side takes the year
// of the dated one. It reports false when p's times then do not fall
// within a day of ref's, as for records of two unrelated clocks or
// dates: p is then left out.
func alignClock(p *part, ref []time.Time) bool {
	pt := partTimes(p)
	if len(pt) == 0 || len(ref) == 0 {
		return true
	}
	lo, hi := slices.MinFunc(ref, time.Time.Compare), slices.MaxFunc(ref, time.Time.Compare)
	shift := func(t time.Time) time.Time { return t }
	switch refYearless, pYearless := lo.Year() == 0, pt[0].Year() == 0; {
	case refYearless && !pYearless:
		return false // the first part sets the clock
	case pYearless && !refYearless:
		year := hi.Year()
		shift = func(t time.Time) time.Time {
			if t.IsZero() || t.Year() != 0 {
				return t
			}
			return t.AddDate(year, 0, 0)
		}
	}
	for _, t := range pt {
		if s := shift(t); s.Before(lo.Add(-24*time.Hour)) || s.After(hi.Add(24*time.Hour)) {
			return false
		}
	}
	for i := range p.lanes {
		l := &p.lanes[i]
		for j := range l.Events {
			l.Events[j].Time = shift(l.Events[j].Time)
		}
		for j := range l.Spans {
			l.Spans[j].Start, l.Spans[j].End = shift(l.Spans[j].Start), shift(l.Spans[j].End)
		}
	}
	for j := range p.spans {
		p.spans[j].Start, p.spans[j].End = shift(p.spans[j].Start), shift(p.spans[j].End)
	}
	for j := range p.marks {
		p.marks[j].Time = shift(p.marks[j].Time)
	}
	return true
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// posKey identifies an evidence position for matching records: the file
// with the frame, or with the line when there is no frame.
type posKey struct {
	file  string
	frame int
	line  int
}

func keyOf(p model.Pos) posKey {
	if p.Frame > 0 {
		return posKey{file: p.File, frame: p.Frame}
	}
	return posKey{file: p.File, line: p.Line}
}

// citedSet is the positions f's evidence cites (frames and lines).
func citedSet(f *analyzer.Finding) map[posKey]bool {
	out := map[posKey]bool{}
	for _, e := range f.Evidence {
		if e.Frame > 0 || e.Line > 0 {
			out[keyOf(e.Pos)] = true
		}
	}
	return out
}

// finishLane sorts a lane's events by time and folds them when there are
// too many.
func finishLane(l *report.Lane) {
	sort.SliceStable(l.Events, func(i, j int) bool { return l.Events[i].Time.Before(l.Events[j].Time) })
	sort.SliceStable(l.Spans, func(i, j int) bool { return l.Spans[i].Start.Before(l.Spans[j].Start) })
	if len(l.Events) <= MaxLaneEvents {
		return
	}
	first, last := l.Events[0].Time, l.Events[len(l.Events)-1].Time
	width := last.Sub(first)/foldBuckets + 1
	type bucket struct {
		n    int
		kind string
	}
	var out []report.Event
	idx := map[bucket]int{}
	for _, e := range l.Events {
		k := bucket{int(e.Time.Sub(first) / width), e.Kind}
		if i, ok := idx[k]; ok {
			out[i].Count += max(e.Count, 1)
			continue
		}
		idx[k] = len(out)
		e.Count = max(e.Count, 1)
		out = append(out, e)
	}
	for i := range out {
		if out[i].Count > 1 || out[i].Label == "" {
			out[i].Label = fmt.Sprintf("%d × %s from %s", out[i].Count, kindWords[out[i].Kind],
				out[i].Time.UTC().Format("15:04:05.000"))
		}
	}
	l.Events = out
}

// kindWords says what events of a kind are, for folded events' labels.
var kindWords = map[string]string{
	report.EventEstablished: "established", report.EventFailed: "failed", report.EventReset: "reset",
	report.EventICMP: "ICMP error", report.EventARP: "ARP claim", report.EventRestart: "restart",
	report.EventError: "error", report.EventInfo: "event",
}

// factStrings returns the values of f.Facts[key] as strings: a slice's
// elements, or the value itself.
func factStrings(f *analyzer.Finding, key string) []string {
	v, ok := f.Facts[key]
	if !ok || v == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return []string{fmt.Sprint(v)}
	}
	out := make([]string, 0, rv.Len())
	for i := range rv.Len() {
		out = append(out, fmt.Sprint(rv.Index(i).Interface()))
	}
	return out
}

// values returns the values of f that sel names: its subject key's
// value, or its fact's (see factStrings).
func values(f *analyzer.Finding, sel analyzer.Selector) []string {
	if sel.Fact != "" {
		return factStrings(f, sel.Fact)
	}
	if v := f.Subject[sel.Subject]; v != "" {
		return []string{v}
	}
	return nil
}

// factInt returns f.Facts[key] as a number, and whether it is one.
func factInt(f *analyzer.Finding, key string) (int, bool) {
	ss := factStrings(f, key)
	if len(ss) != 1 {
		return 0, false
	}
	n, err := strconv.ParseFloat(ss[0], 64)
	return int(n), err == nil
}

// leadingEndpoint reads the address (with or without a port) that s
// starts with: "10.244.2.7:53 (25.0%)", "10.0.0.1: 849 TIME-WAIT".
func leadingEndpoint(s string) (netip.AddrPort, netip.Addr, bool) {
	tok, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	tok = strings.TrimSuffix(tok, ":")
	if ap, err := netip.ParseAddrPort(tok); err == nil {
		return ap, ap.Addr(), true
	}
	if a, err := netip.ParseAddr(tok); err == nil {
		return netip.AddrPort{}, a, true
	}
	return netip.AddrPort{}, netip.Addr{}, false
}
