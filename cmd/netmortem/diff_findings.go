package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/report"
)

// findingsDiff is how the findings of two runs differ, matched by
// fingerprint.
type findingsDiff struct {
	// Appeared are in NEW only, Resolved in OLD only.
	Appeared []findingRef `json:"appeared"`
	Resolved []findingRef `json:"resolved"`
	// Changed are in both, with another severity, certainty or facts.
	Changed []findingChange `json:"changed"`
	// Unchanged are in both, alike.
	Unchanged []findingRef `json:"unchanged"`
}

// findingRef names one finding.
type findingRef struct {
	Fingerprint string            `json:"fingerprint"`
	Rule        string            `json:"rule"`
	Severity    string            `json:"severity"`
	Title       string            `json:"title"`
	Subject     map[string]string `json:"subject"`
}

// findingChange is a finding of both runs (as NEW has it) and what
// changed from OLD.
type findingChange struct {
	findingRef
	Changes []fieldChange `json:"changes"`
}

// fieldChange is one field that changed: "severity", "certainty" or
// "facts.NAME"; Old or New is null for a fact only one run has.
type fieldChange struct {
	Field string `json:"field"`
	Old   any    `json:"old"`
	New   any    `json:"new"`
}

func refOf(f analyzer.Finding) findingRef {
	return findingRef{Fingerprint: f.Fingerprint, Rule: f.Rule, Severity: f.Severity.String(), Title: f.Title, Subject: f.Subject}
}

// diffFindings matches the findings of old and new by fingerprint.
func diffFindings(old, new []analyzer.Finding) findingsDiff {
	d := findingsDiff{Appeared: []findingRef{}, Resolved: []findingRef{}, Changed: []findingChange{}, Unchanged: []findingRef{}}
	byFP := map[string]analyzer.Finding{}
	for _, f := range old {
		byFP[f.Fingerprint] = f
	}
	seen := map[string]bool{}
	for _, f := range new {
		seen[f.Fingerprint] = true
		o, ok := byFP[f.Fingerprint]
		switch {
		case !ok:
			d.Appeared = append(d.Appeared, refOf(f))
		case len(changesOf(o, f)) > 0:
			d.Changed = append(d.Changed, findingChange{refOf(f), changesOf(o, f)})
		default:
			d.Unchanged = append(d.Unchanged, refOf(f))
		}
	}
	for _, f := range old {
		if !seen[f.Fingerprint] {
			d.Resolved = append(d.Resolved, refOf(f))
		}
	}
	less := func(a, b findingRef) int {
		return strings.Compare(a.Rule+"\x00"+a.Title+"\x00"+a.Fingerprint, b.Rule+"\x00"+b.Title+"\x00"+b.Fingerprint)
	}
	for _, l := range [][]findingRef{d.Appeared, d.Resolved, d.Unchanged} {
		slices.SortFunc(l, less)
	}
	slices.SortFunc(d.Changed, func(a, b findingChange) int { return less(a.findingRef, b.findingRef) })
	return d
}

// changesOf says how b differs from a in severity, certainty and facts.
func changesOf(a, b analyzer.Finding) []fieldChange {
	var out []fieldChange
	if a.Severity != b.Severity {
		out = append(out, fieldChange{"severity", a.Severity.String(), b.Severity.String()})
	}
	if a.Certainty != b.Certainty {
		out = append(out, fieldChange{"certainty", string(a.Certainty), string(b.Certainty)})
	}
	keys := slices.Sorted(maps.Keys(a.Facts))
	for k := range b.Facts {
		if _, ok := a.Facts[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		av, inA := a.Facts[k]
		bv, inB := b.Facts[k]
		if inA && inB && sameValue(av, bv) {
			continue
		}
		out = append(out, fieldChange{"facts." + k, av, bv})
	}
	return out
}

// sameValue compares two fact values as JSON writes them.
func sameValue(a, b any) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// maxChangeText bounds a value in the text of a change.
const maxChangeText = 60

// changeText says what changed: "severity warning -> error, facts.attempts
// 12 -> 5".
func changeText(cs []fieldChange) string {
	show := func(v any) string {
		if v == nil {
			return "(none)"
		}
		s := report.FactValue(v)
		if len(s) > maxChangeText {
			s = s[:maxChangeText] + "..."
		}
		return s
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %s -> %s", c.Field, show(c.Old), show(c.New))
	}
	return strings.Join(parts, ", ")
}

// failingChanges counts the appeared and changed findings at or above
// level (--fail-on).
func failingChanges(d findingsDiff, level analyzer.Severity) int {
	n := 0
	for _, r := range d.Appeared {
		if sev, err := analyzer.ParseSeverity(r.Severity); err == nil && sev >= level {
			n++
		}
	}
	for _, c := range d.Changed {
		if sev, err := analyzer.ParseSeverity(c.Severity); err == nil && sev >= level {
			n++
		}
	}
	return n
}
