package report

import (
	"strconv"
	"time"
)

// chartScale maps times to x.
type chartScale struct {
	start, end time.Time
	span       time.Duration
	rel        bool
}

func (s chartScale) x(t time.Time) float64 {
	f := float64(t.Sub(s.start)) / float64(s.span)
	return plotX0 + min(max(f, 0), 1)*(plotX1-plotX0)
}

// yearless reports whether the chart's times are of a clock without year
// or zone: log lines (klog, syslog) that give neither are read in year 0,
// in UTC, and the chart must not show that year or call it UTC.
func (s chartScale) yearless() bool { return s.start.Year() == 0 }

// stamp formats t to the millisecond: "2024-01-26 10:00:12.345 UTC", or
// "Jan 26 10:00:12.345" for a yearless clock.
func (s chartScale) stamp(t time.Time, layout string) string {
	if s.yearless() {
		return t.UTC().Format("Jan 2 " + layout)
	}
	return t.UTC().Format("2006-01-02 " + layout + " UTC")
}

// when says when t is: "2024-01-26 10:00:12.345 UTC (+12.345 s)".
func (s chartScale) when(t time.Time) string {
	w := s.stamp(t, "15:04:05.000")
	if s.rel {
		d, sign := t.Sub(s.start), "+"
		if d < 0 {
			d, sign = -d, "-"
		}
		w += " (" + sign + seconds(d) + ")"
	}
	return w
}

// seconds formats d as seconds, to the millisecond: "12.5 s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64) + " s"
}

// timeScale is tl's time range: Start to End, or the range of what it
// holds when those are not set; one second at least.
func timeScale(tl *Timeline) chartScale {
	start, end := tl.Start, tl.End
	if start.IsZero() || end.IsZero() {
		var lo, hi time.Time
		see := func(t time.Time) {
			if t.IsZero() {
				return
			}
			if lo.IsZero() || t.Before(lo) {
				lo = t
			}
			if hi.IsZero() || t.After(hi) {
				hi = t
			}
		}
		for _, l := range tl.Lanes {
			for _, e := range l.Events {
				see(e.Time)
				see(e.End)
			}
			for _, s := range l.Spans {
				see(s.Start)
				see(s.End)
			}
		}
		for _, s := range tl.Spans {
			see(s.Start)
			see(s.End)
		}
		for _, m := range tl.Marks {
			see(m.Time)
		}
		if start.IsZero() {
			start = lo
		}
		if end.IsZero() {
			end = hi
		}
	}
	if !end.After(start) {
		end = start.Add(time.Second)
	}
	span := end.Sub(start)
	return chartScale{start: start, end: end, span: span, rel: span <= 15*time.Minute}
}

// tickSteps are the distances between ticks the axis chooses from.
var tickSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 48 * time.Hour,
	7 * 24 * time.Hour, 14 * 24 * time.Hour, 30 * 24 * time.Hour, 90 * 24 * time.Hour, 365 * 24 * time.Hour,
}

// ticks places at most six ticks on the axis: seconds after the start for
// a span of up to 15 minutes, else the time of day in UTC (with the date
// for a span over two days). The note says which.
func ticks(sc chartScale) ([]svgTick, string) {
	step := sc.span / 5 // beyond the steps: years
	for _, s := range tickSteps {
		if sc.span/s <= 5 {
			step = s
			break
		}
	}
	var out []svgTick
	add := func(t time.Time, label string) {
		x, anchor := sc.x(t), "middle"
		if x < plotX0+40 {
			anchor = "start"
		} else if x > plotX1-40 {
			anchor = "end"
		}
		out = append(out, svgTick{X: num(x), Label: label, Anchor: anchor})
	}
	if sc.rel {
		for d := time.Duration(0); d <= sc.span; d += step {
			add(sc.start.Add(d), "+"+seconds(d))
		}
		return out, "Seconds after " + sc.stamp(sc.start, "15:04:05.000") + "." + sc.clockNote()
	}
	layout := "15:04"
	if step < time.Minute {
		layout = "15:04:05"
	}
	switch {
	case sc.span > 365*24*time.Hour && !sc.yearless():
		layout = "2006-01-02"
	case sc.span > 48*time.Hour && step >= 24*time.Hour:
		layout = "Jan 2"
	case sc.span > 48*time.Hour:
		layout = "Jan 2 15:04"
	}
	first := sc.start.UTC().Truncate(step)
	if first.Before(sc.start) {
		first = first.Add(step)
	}
	for t := first; !t.After(sc.end); t = t.Add(step) {
		add(t, t.UTC().Format(layout))
	}
	if sc.yearless() {
		return out, "Times from " + sc.stamp(sc.start, "15:04:05") + " to " + sc.stamp(sc.end, "15:04:05") + "." + sc.clockNote()
	}
	return out, "Times in UTC, from " + sc.start.UTC().Format("2006-01-02 15:04:05") + " to " + sc.end.UTC().Format("2006-01-02 15:04:05") + "."
}

// clockNote says, for a yearless clock, that the times are as the lines
// give them.
func (s chartScale) clockNote() string {
	if !s.yearless() {
		return ""
	}
	return " The log lines give no year and no time zone: times are as they wrote them (the node's clock, often local time)."
}
