package report

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/model"
)

// A Timeline is drawn as one SVG in a viewBox chartWidth units wide, which
// the page scales to its width: a time axis at the top, then one row per
// Lane (its name above its track), then the labels of the Marks. The
// number of elements is bounded whatever the number of events: a lane with
// more events than its share of maxEvents is drawn as columns of counts,
// and spans, marks and lanes beyond their budgets are merged or left out
// with a note under the chart.
const (
	chartWidth   = 640
	plotX0       = 8
	plotX1       = chartWidth - 8
	axisHeight   = 32
	laneHeight   = 58
	laneTrackTop = 24 // from the lane's top to its track's
	trackHeight  = 26
	markRow      = 24

	maxLanes      = 30  // lanes drawn (2 elements each); the others are counted in a note
	maxEvents     = 200 // events drawn one by one (3 elements each), over all lanes
	maxBinElems   = 850 // elements of the columns of counts, over all lanes
	maxLaneSpans  = 60  // lane spans drawn (4 elements each), over all lanes
	maxShades     = 25  // timeline spans drawn (4 elements each)
	maxMarks      = 25  // marks drawn (4 elements each)
	maxLabelRunes = 80
	// With the ticks and the shapes' definitions, a chart has at most
	// about 2000 elements.
)

// htmlChart is a Timeline laid out for the template.
type htmlChart struct {
	// ID prefixes the ids of the chart's shapes: "tl-3".
	ID string
	// Fingerprint is the finding's, for the figure's data-fingerprint.
	Fingerprint string
	Title       string
	W, H        int
	AxisNote    string
	Ticks       []svgTick
	// AxisY is the top of the tick lines, LanesEnd the bottom of the
	// last lane.
	AxisY, LanesEnd int
	// TrackW is the width of a lane's track.
	TrackW int
	Shades []svgRect
	Lanes  []svgLane
	Marks  []svgMark
	Kinds  []string
	Legend []svgLegend
	Notes  []string
}

type svgTick struct {
	X      string
	Label  string
	Anchor string
}

// svgRect is a span: a bar on a lane or a band across the chart.
type svgRect struct {
	X, Y, W, H string
	Fill       string
	Class      string
	// Label is drawn inside the bar at TextX, TextY when it fits.
	Label        string
	TextX, TextY string
	Tip          string
	Q            int
}

type svgLane struct {
	LabelY string
	Name   string
	Tip    string
	TrackY string
	TrackH int
	Spans  []svgRect
	Events []svgEvent
	Bins   []svgBin
}

// svgEvent is one event drawn as its kind's shape; one standing for many
// over a stretch of time has a bar from RangeX, RangeW wide, behind it.
type svgEvent struct {
	X, Y string
	Kind string
	Tip  string
	Q    int

	RangeX, RangeY, RangeW, Fill string
}

// svgBin is one column of counts: a bar per kind, stacked.
type svgBin struct {
	Bars []svgRect
	Tip  string
	Q    int
}

type svgMark struct {
	X, Y1, Y2     string
	TextX, TextY  string
	Anchor, Label string
	Tip           string
	Q             int
}

type svgLegend struct {
	Kind  string
	Shape bool // an event kind, drawn as its shape; else a span's swatch
	Bar   bool // the thin bar of an event over a stretch of time
	Fill  string
	Text  string
}

// eventKinds are the event kinds in the legend's order, with their
// colours (the shapes are in html.tmpl) and what they mean.
var eventKinds = []struct{ kind, fill, text string }{
	{EventEstablished, "#1b7f3b", "established"},
	{EventFailed, "#b45f06", "failed, no reset"},
	{EventReset, "#c62828", "reset"},
	{EventICMP, "#6a1b9a", "ICMP error"},
	{EventARP, "#1565c0", "ARP claim"},
	{EventRestart, "#ad1457", "restart"},
	{EventError, "#8d2400", "error logged"},
	{EventInfo, "#546e7a", "other"},
}

// lasts reports whether e stands for events over a stretch of time: it
// has an End after its Time. A zero End (year 1) is none, even after a
// yearless Time (year 0).
func lasts(e Event) bool { return !e.End.IsZero() && e.End.After(e.Time) }

// rangeHeight is the height of the bar of an event standing for many over
// a stretch of time; rangeFill its swatch in the legend.
const (
	rangeHeight = 10
	rangeFill   = "#8a8f96"
)

// kindFill is the colour of the event kind k.
func kindFill(k string) string {
	for _, e := range eventKinds {
		if e.kind == k {
			return e.fill
		}
	}
	return eventKinds[len(eventKinds)-1].fill
}

// kindOf is k, or EventInfo for a kind the chart does not know.
func kindOf(k string) string {
	for _, e := range eventKinds {
		if e.kind == k {
			return k
		}
	}
	return EventInfo
}

// shadeFills are the fills of the timeline spans by kind.
var shadeFills = map[string]string{SpanWindow: "#fff1a8", SpanStale: "#f9cfcf", SpanOwner: "#d5e8fb"}

// flapFill is the fill of a bar that stands for many short states.
const flapFill = "#9e9e9e"

// ownerFills are the fills of a lane's spans, one per distinct label.
var ownerFills = []string{"#cfe3fa", "#fde0bd", "#d3efd3", "#e9d5f4", "#f9d2d2", "#dddddd", "#fbf0a8", "#c6eaea"}

// num formats a coordinate with at most one decimal.
func num(f float64) string { return strconv.FormatFloat(float64(int(f*10+0.5))/10, 'f', -1, 64) }

// cut shortens s to maxLabelRunes runes, with an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// newHTMLChart lays out tl as the n-th chart of the page; cite gives the
// appendix entry of a position.
func newHTMLChart(tl *Timeline, n int, cite func(model.Pos) int) *htmlChart {
	c := &htmlChart{ID: "tl-" + strconv.Itoa(n), Title: esc(tl.Title), W: chartWidth, AxisY: axisHeight - 6, TrackW: plotX1 - plotX0}
	sc := timeScale(tl)
	c.Ticks, c.AxisNote = ticks(sc)
	lanes := tl.Lanes
	if len(lanes) > maxLanes {
		c.Notes = append(c.Notes, strconv.Itoa(len(lanes)-maxLanes)+" more rows not drawn (the chart shows the first "+strconv.Itoa(maxLanes)+").")
		lanes = lanes[:maxLanes]
	}
	c.LanesEnd = axisHeight + laneHeight*len(lanes)
	kinds := map[string]bool{}
	perLane := maxEvents / max(len(lanes), 1)
	binned := 0
	for _, l := range lanes {
		if len(l.Events) > perLane {
			binned++
		}
	}
	spanBudget := maxLaneSpans / max(len(lanes), 1)
	owners, flaps, ranges := false, false, false
	for i, l := range lanes {
		top := axisHeight + laneHeight*i
		sl := svgLane{LabelY: num(float64(top + 17)), Name: esc(cut(l.Name, maxLabelRunes)), Tip: esc(l.Name),
			TrackY: num(float64(top + laneTrackTop)), TrackH: trackHeight}
		var shapes []float64 // where the lane's events are drawn one by one
		if len(l.Events) <= perLane {
			for _, e := range l.Events {
				if !e.Time.IsZero() {
					shapes = append(shapes, sc.x(e.Time))
				}
			}
		}
		sl.Spans = laneSpans(sc, l.Spans, top+laneTrackTop, spanBudget, shapes, cite)
		for _, sp := range sl.Spans {
			owners = owners || sp.Class == "span"
			flaps = flaps || sp.Class != "span"
		}
		mid := float64(top + laneTrackTop + trackHeight/2)
		if len(l.Events) <= perLane {
			for _, e := range l.Events {
				if e.Time.IsZero() {
					continue // not placed in time
				}
				k := kindOf(e.Kind)
				kinds[k] = true
				tip := sc.when(e.Time) + ": " + e.Label
				if lasts(e) {
					tip = sc.when(e.Time) + " to " + sc.when(e.End) + ": " + e.Label
				}
				if e.Count > 1 {
					tip += " (×" + strconv.Itoa(e.Count) + ")"
				}
				ev := svgEvent{X: num(sc.x(e.Time)), Y: num(mid), Kind: k, Tip: esc(tip), Q: cite(e.Pos)}
				if x0, x1 := sc.x(e.Time), sc.x(e.End); lasts(e) && x1-x0 >= 2 {
					ev.RangeX, ev.RangeY, ev.RangeW, ev.Fill = num(x0), num(mid-rangeHeight/2), num(x1-x0), kindFill(k)
					ranges = true
				}
				sl.Events = append(sl.Events, ev)
			}
		} else {
			sl.Bins = laneBins(sc, l, top+laneTrackTop, binned, kinds, cite)
			c.Notes = appendOnce(c.Notes, binNote)
		}
		c.Lanes = append(c.Lanes, sl)
	}
	for _, e := range eventKinds {
		if kinds[e.kind] {
			c.Kinds = append(c.Kinds, e.kind)
			c.Legend = append(c.Legend, svgLegend{Kind: e.kind, Shape: true, Fill: e.fill, Text: e.text})
		}
	}
	if ranges {
		c.Legend = append(c.Legend, svgLegend{Bar: true, Fill: rangeFill, Text: "a bar behind a shape: many events, from its start to its end (hover for how many)"})
	}
	if owners {
		c.Legend = append(c.Legend, svgLegend{Fill: ownerFills[0], Text: "a row's state (the bar names it, such as the MAC owning a VIP)"})
	}
	if flaps {
		c.Legend = append(c.Legend, svgLegend{Fill: flapFill, Text: "states changing too often to draw apart (hover for how many)"})
	}
	c.Shades = shades(sc, tl.Spans, c.LanesEnd, cite)
	for _, k := range []string{SpanWindow, SpanStale, SpanOwner} {
		for _, s := range tl.Spans {
			if s.Kind == k {
				c.Legend = append(c.Legend, svgLegend{Fill: shadeFills[k], Text: map[string]string{
					SpanWindow: "window (shaded across the rows)", SpanStale: "state out of date", SpanOwner: "held"}[k]})
				break
			}
		}
	}
	c.Marks = marks(sc, tl.Marks, c.LanesEnd, cite)
	if len(tl.Marks) > maxMarks {
		c.Notes = append(c.Notes, strconv.Itoa(len(tl.Marks)-maxMarks)+" more marks not drawn.")
	}
	if len(tl.Spans) > maxShades {
		c.Notes = append(c.Notes, strconv.Itoa(len(tl.Spans)-maxShades)+" more shaded windows not drawn.")
	}
	c.H = c.LanesEnd + 8
	if len(c.Marks) > 0 {
		c.H += markRow * min(len(c.Marks), 3)
	}
	return c
}

const binNote = "Rows with many events are drawn as columns: each bar's height is the count of its kind in that stretch of time (hover for the counts)."

func appendOnce(l []string, s string) []string {
	if slices.Contains(l, s) {
		return l
	}
	return append(l, s)
}

// laneSpans lays out a lane's spans as bars on its track at y, merging
// those too narrow to see (an owner flapping) into one bar that counts
// them, so that at most budget are drawn. shapes are the x of the events
// drawn on the lane, which a bar's label must not run under.
func laneSpans(sc chartScale, spans []Span, y, budget int, shapes []float64, cite func(model.Pos) int) []svgRect {
	if len(spans) == 0 {
		return nil
	}
	fills := map[string]string{}
	// Bars at least minW wide, and the runs of narrower ones between
	// them, number at most budget.
	minW := max(2.0, 2*float64(plotX1-plotX0)/float64(max(budget, 1)))
	spans = coalesce(sc, spans)
	var out []svgRect
	for i := 0; i < len(spans); {
		s := spans[i]
		x0, x1 := sc.x(s.Start), sc.x(s.End)
		// A narrow span alone (the next one wide, or far) is a state
		// held briefly, not a flapping: it is drawn as itself.
		alone := i == len(spans)-1 || sc.x(spans[i+1].End)-sc.x(spans[i+1].Start) >= minW || sc.x(spans[i+1].Start)-x0 >= minW*4
		if x1-x0 >= minW || alone && len(out) < budget {
			if _, ok := fills[s.Label]; !ok {
				fills[s.Label] = ownerFills[len(fills)%len(ownerFills)]
			}
			r := svgRect{X: num(x0), Y: num(float64(y)), W: num(max(x1-x0, 1)), H: num(trackHeight), Fill: fills[s.Label],
				Class: "span", Tip: esc(s.Label + ": " + sc.when(s.Start) + " to " + sc.when(s.End)), Q: cite(s.Pos)}
			if lx, ok := labelPlace(x0, x1, float64(len([]rune(s.Label)))*9, shapes); ok {
				r.Label, r.TextX, r.TextY = esc(s.Label), num(lx), num(float64(y+trackHeight/2+5))
			}
			out = append(out, r)
			i++
			continue
		}
		// Merge the run of narrow spans that starts here.
		j, labels := i, map[string]bool{}
		var names []string
		for j < len(spans) && (j == i || sc.x(spans[j].End)-sc.x(spans[j].Start) < minW) && sc.x(spans[j].Start)-x0 < minW*4 {
			if !labels[spans[j].Label] {
				labels[spans[j].Label] = true
				names = append(names, spans[j].Label)
			}
			j++
		}
		end := sc.x(spans[j-1].End)
		tip := strconv.Itoa(j-i) + " changes between " + sc.when(s.Start) + " and " + sc.when(spans[j-1].End) + ": " + strings.Join(names, ", ")
		out = append(out, svgRect{X: num(x0), Y: num(float64(y)), W: num(max(end-x0, 1)), H: num(trackHeight), Fill: flapFill,
			Class: "span flap", Tip: esc(cut(tip, 400)), Q: cite(s.Pos)})
		i = j
	}
	return out
}

// shapeRadius is how far an event's shape reaches either side of its x.
const shapeRadius = 9

// labelPlace finds where in the bar from x0 to x1 a label w wide fits
// clear of the event shapes at xs: the start of the first gap wide
// enough, and whether there is one.
func labelPlace(x0, x1, w float64, xs []float64) (float64, bool) {
	from := x0 + 4
	var in []float64
	for _, x := range xs {
		if x+shapeRadius > x0 && x-shapeRadius < x1 {
			in = append(in, x)
		}
	}
	slices.Sort(in)
	for _, x := range in {
		if x-shapeRadius-from >= w {
			return from, true
		}
		from = max(from, x+shapeRadius+2)
	}
	return from, x1-2-from >= w
}

// coalesce joins the spans of one label that follow one another with no
// visible gap, so that a state held across many records is one bar.
func coalesce(sc chartScale, spans []Span) []Span {
	var out []Span
	for _, s := range spans {
		if n := len(out); n > 0 && out[n-1].Label == s.Label && out[n-1].Kind == s.Kind && !s.Start.Before(out[n-1].Start) &&
			sc.x(s.Start)-sc.x(out[n-1].End) < 1 {
			if s.End.After(out[n-1].End) {
				out[n-1].End = s.End
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// laneBins counts a lane's events by kind in columns, for a lane with too
// many to draw one by one; lanes is how many lanes are binned, which
// divides the budget of elements.
func laneBins(sc chartScale, l Lane, y, lanes int, kinds map[string]bool, cite func(model.Pos) int) []svgBin {
	laneKinds := map[string]bool{}
	for _, e := range l.Events {
		laneKinds[kindOf(e.Kind)] = true
	}
	// A column is a group, its tooltip and a bar per kind.
	cols := min(max(maxBinElems/(max(lanes, 1)*(2+len(laneKinds))), 1), 100)
	type column struct {
		counts map[string]int
		first  model.Pos
		n      int
	}
	colsOf := make([]column, cols)
	for _, e := range l.Events {
		if e.Time.IsZero() {
			continue
		}
		col := func(t time.Time) int {
			f := (sc.x(t) - plotX0) / (plotX1 - plotX0)
			return min(max(int(f*float64(cols)), 0), cols-1)
		}
		// An event standing for many from Time to End is spread evenly
		// over the columns it covers.
		first, last := col(e.Time), col(e.Time)
		if lasts(e) {
			last = col(e.End)
		}
		n := max(e.Count, 1)
		for i := first; i <= last; i++ {
			share := n*(i-first+1)/(last-first+1) - n*(i-first)/(last-first+1)
			if share == 0 {
				continue
			}
			c := &colsOf[i]
			if c.counts == nil {
				c.counts = map[string]int{}
			}
			c.counts[kindOf(e.Kind)] += share
			c.n += share
			if c.first.IsZero() {
				c.first = e.Pos
			}
		}
	}
	peak := 1
	for _, c := range colsOf {
		peak = max(peak, c.n)
	}
	w := float64(plotX1-plotX0) / float64(cols)
	var out []svgBin
	for i, c := range colsOf {
		if c.n == 0 {
			continue
		}
		x := plotX0 + float64(i)*w
		t0 := sc.start.Add(time.Duration(float64(sc.span) * float64(i) / float64(cols)))
		t1 := sc.start.Add(time.Duration(float64(sc.span) * float64(i+1) / float64(cols)))
		b := svgBin{Q: cite(c.first)}
		bottom := float64(y + trackHeight)
		var parts []string
		for _, k := range eventKinds {
			n := c.counts[k.kind]
			if n == 0 {
				continue
			}
			kinds[k.kind] = true
			h := max(float64(trackHeight)*float64(n)/float64(peak), 1.5)
			bottom -= h
			b.Bars = append(b.Bars, svgRect{X: num(x + 0.5), Y: num(bottom), W: num(max(w-1, 1)), H: num(h), Fill: k.fill})
			parts = append(parts, strconv.Itoa(n)+" "+k.text)
		}
		b.Tip = esc(strings.Join(parts, ", ") + " from " + sc.when(t0) + " to " + sc.when(t1))
		out = append(out, b)
	}
	return out
}

// shades lays out the timeline's spans as bands across every lane.
func shades(sc chartScale, spans []Span, lanesEnd int, cite func(model.Pos) int) []svgRect {
	var out []svgRect
	for i, s := range spans {
		if i == maxShades {
			break
		}
		x0, x1 := sc.x(s.Start), sc.x(s.End)
		fill, ok := shadeFills[s.Kind]
		if !ok {
			fill = shadeFills[SpanWindow]
		}
		out = append(out, svgRect{X: num(x0), Y: num(axisHeight - 4), W: num(max(x1-x0, 1)), H: num(float64(lanesEnd - axisHeight + 4)),
			Fill: fill, Class: "shade", Tip: esc(s.Label + ": " + sc.when(s.Start) + " to " + sc.when(s.End)), Q: cite(s.Pos)})
	}
	return out
}

// marks lays out the marks as lines across the lanes, their labels in up
// to three rows under them.
func marks(sc chartScale, ms []Mark, lanesEnd int, cite func(model.Pos) int) []svgMark {
	var out []svgMark
	for i, m := range ms {
		if i == maxMarks {
			break
		}
		x := sc.x(m.Time)
		mk := svgMark{X: num(x), Y1: num(axisHeight - 6), Y2: num(float64(lanesEnd + 4 + markRow*(i%3))),
			TextY: num(float64(lanesEnd + 18 + markRow*(i%3))), Label: esc(cut(m.Label, 40)),
			Tip: esc(sc.when(m.Time) + ": " + m.Label), Q: cite(m.Pos)}
		if x < chartWidth/2 {
			mk.Anchor, mk.TextX = "start", num(x+3)
		} else {
			mk.Anchor, mk.TextX = "end", num(x-3)
		}
		out = append(out, mk)
	}
	return out
}
