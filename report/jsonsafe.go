package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/netmortem/netmortem/internal/jsontime"
)

// forJSON returns r, or a copy of it whose facts encoding/json can write:
// a time outside the years 0-9999 is clamped (see package jsontime), a NaN
// or infinite number becomes its text ("NaN", "+Inf"). One warning, at the
// first finding changed, says how many values were.
func (r *Report) forJSON() *Report {
	var (
		c       *Report
		changed int
		first   string
	)
	for i := range r.Findings {
		f := &r.Findings[i]
		var facts map[string]any
		for _, k := range slices.Sorted(maps.Keys(f.Facts)) {
			v, n := jsonValue(f.Facts[k])
			if n == 0 {
				continue
			}
			if facts == nil {
				facts = maps.Clone(f.Facts)
			}
			facts[k] = v
			if changed == 0 {
				first = fmt.Sprintf("fact %q of %s", k, f.Rule)
			}
			changed += n
		}
		if facts == nil {
			continue
		}
		if c == nil {
			cp := *r
			cp.Findings = slices.Clone(r.Findings)
			c = &cp
		}
		c.Findings[i].Facts = facts
	}
	if c == nil {
		return r
	}
	w := Warning{Position: "-", Message: fmt.Sprintf("%s: %d value(s) JSON cannot hold (a time outside the years %d-%d, NaN or an infinite number) written clamped or as text",
		first, changed, jsontime.MinYear, jsontime.MaxYear)}
	c.Warnings = append(slices.Clone(r.Warnings), w)
	return c
}

// jsonValue returns v made writable by encoding/json, and how many values
// in it had to change (0: v is returned as it is).
func jsonValue(v any) (any, int) {
	switch x := v.(type) {
	case time.Time:
		if !jsontime.InRange(x) {
			return jsontime.Clamp(x), 1
		}
	case *time.Time:
		if x != nil && !jsontime.InRange(*x) {
			return jsontime.Clamp(*x), 1
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return floatText(x), 1
		}
	case float32:
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return floatText(f), 1
		}
	case []time.Time:
		return jsonSlice(x)
	case []float64:
		return jsonSlice(x)
	case []any:
		return jsonSlice(x)
	case map[string]any:
		var out map[string]any
		total := 0
		for k, e := range x {
			if ev, n := jsonValue(e); n > 0 {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = ev
				total += n
			}
		}
		if out != nil {
			return out, total
		}
	}
	return v, 0
}

func jsonSlice[T any](x []T) (any, int) {
	var out []any
	total := 0
	for i, e := range x {
		ev, n := jsonValue(e)
		if n > 0 && out == nil {
			out = make([]any, len(x))
			for j := range i {
				out[j] = x[j]
			}
		}
		if out != nil {
			out[i] = ev
		}
		total += n
	}
	if out == nil {
		return x, 0
	}
	return out, total
}

func floatText(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
