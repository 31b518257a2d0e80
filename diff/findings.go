package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/report"
)

// FindingsDiff is how the findings of two runs differ, matched by
// fingerprint.
type FindingsDiff struct {
	// Appeared are in NEW only, Resolved in OLD only.
	Appeared []FindingRef `json:"appeared"`
	Resolved []FindingRef `json:"resolved"`
	// Changed are in both, with another severity, certainty or facts.
	Changed []FindingChange `json:"changed"`
	// Unchanged are in both, alike.
	Unchanged []FindingRef `json:"unchanged"`
}

// FindingRef names one finding.
type FindingRef struct {
	Fingerprint string            `json:"fingerprint"`
	Rule        string            `json:"rule"`
	Severity    analyzer.Severity `json:"severity"`
	Title       string            `json:"title"`
	Subject     map[string]string `json:"subject"`
}

// FindingChange is a finding of both runs (as NEW has it) and what
// changed from OLD.
type FindingChange struct {
	FindingRef
	Changes []FieldChange `json:"changes"`
	// Worse says its severity rose or its certainty firmed (unknown to
	// likely to proven): only such changes count for --fail-on, not a
	// change of facts alone (a count) or a lower severity.
	Worse bool `json:"worse"`
}

// FieldChange is one field that changed: "severity", "certainty" or
// "facts.NAME"; Old or New is null for a fact only one run has.
type FieldChange struct {
	Field string `json:"field"`
	Old   any    `json:"old"`
	New   any    `json:"new"`
}

func refOf(f analyzer.Finding) FindingRef {
	return FindingRef{Fingerprint: f.Fingerprint, Rule: f.Rule, Severity: f.Severity, Title: f.Title, Subject: f.Subject}
}

// Findings matches the findings of old and new by fingerprint.
func Findings(old, new []analyzer.Finding) FindingsDiff {
	d := FindingsDiff{Appeared: []FindingRef{}, Resolved: []FindingRef{}, Changed: []FindingChange{}, Unchanged: []FindingRef{}}
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
			d.Changed = append(d.Changed, FindingChange{refOf(f), changesOf(o, f), worse(o, f)})
		default:
			d.Unchanged = append(d.Unchanged, refOf(f))
		}
	}
	for _, f := range old {
		if !seen[f.Fingerprint] {
			d.Resolved = append(d.Resolved, refOf(f))
		}
	}
	less := func(a, b FindingRef) int {
		return strings.Compare(a.Rule+"\x00"+a.Title+"\x00"+a.Fingerprint, b.Rule+"\x00"+b.Title+"\x00"+b.Fingerprint)
	}
	for _, l := range [][]FindingRef{d.Appeared, d.Resolved, d.Unchanged} {
		slices.SortFunc(l, less)
	}
	slices.SortFunc(d.Changed, func(a, b FindingChange) int { return less(a.FindingRef, b.FindingRef) })
	return d
}

// changesOf says how b differs from a in severity, certainty and facts.
func changesOf(a, b analyzer.Finding) []FieldChange {
	var out []FieldChange
	if a.Severity != b.Severity {
		out = append(out, FieldChange{"severity", a.Severity.String(), b.Severity.String()})
	}
	if a.Certainty != b.Certainty {
		out = append(out, FieldChange{"certainty", string(a.Certainty), string(b.Certainty)})
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
		out = append(out, FieldChange{"facts." + k, av, bv})
	}
	return out
}

// worse reports whether b, the same finding as a in a later run, is worse:
// a higher severity, or a firmer certainty.
func worse(a, b analyzer.Finding) bool {
	return b.Severity > a.Severity || b.Certainty.Rank() > a.Certainty.Rank()
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

// maxChangeText bounds a value in the text of a change, and
// maxChangeItems how many items of a list it names.
const (
	maxChangeText  = 60
	maxChangeItems = 3
)

// ChangeText says what changed, one change after another separated by
// "; ": "severity warning -> error; facts.failed 8 -> 6; facts.attempts 2
// -> 3 items, added "10.0.0.5:41000 -> 10.96.0.10:53"". Strings are
// quoted, so that an arrow or a separator inside a value is not read as
// one; of a list, the items added and removed are named (or counted), and
// of a list that appears or goes, its first items.
func ChangeText(cs []FieldChange) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		if !strings.HasPrefix(c.Field, "facts.") { // severity, certainty: words
			parts[i] = fmt.Sprintf("%s %v -> %v", c.Field, c.Old, c.New)
			continue
		}
		parts[i] = c.Field + " " + valueChange(jsonValue(c.Old), jsonValue(c.New))
	}
	return strings.Join(parts, "; ")
}

// jsonValue returns v as encoding/json reads it back: nil, bool, float64,
// string, []any or map[string]any.
func jsonValue(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return report.FactValue(v)
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return report.FactValue(v)
	}
	return out
}

// valueChange writes how a value changed from a to b.
func valueChange(a, b any) string {
	la, okA := a.([]any)
	lb, okB := b.([]any)
	switch {
	case a == nil && okB:
		return "(none) -> " + listText(lb)
	case okA && b == nil:
		return listText(la) + " -> (none)"
	}
	if okA && okB {
		added, removed := listMinus(lb, la), listMinus(la, lb)
		s := fmt.Sprintf("%d -> %d items", len(la), len(lb))
		if len(added)+len(removed) == 0 {
			return s + ", the same reordered"
		}
		if len(added) > 0 {
			s += ", added " + someItems(added)
		}
		if len(removed) > 0 {
			s += ", removed " + someItems(removed)
		}
		return s
	}
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	if okA && okB {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(mb)) {
			if av, ok := ma[k]; !ok {
				parts = append(parts, "added "+strconv.Quote(k)+" "+scalarText(mb[k], ""))
			} else if !sameValue(av, mb[k]) {
				parts = append(parts, strconv.Quote(k)+" "+valueChange(av, mb[k]))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(ma)) {
			if _, ok := mb[k]; !ok {
				parts = append(parts, "removed "+strconv.Quote(k))
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	sa, sb := scalarText(a, ""), scalarText(b, "")
	if sa == sb { // cut to the same text: show where they differ
		sa, sb = scalarText(a, b), scalarText(b, a)
	}
	return sa + " -> " + sb
}

// listMinus returns the items of a that b does not have (as many times
// as a has them more).
func listMinus(a, b []any) []any {
	left := map[string]int{}
	for _, x := range b {
		left[scalarText(x, "")]++
	}
	var out []any
	for _, x := range a {
		k := scalarText(x, "")
		if left[k] > 0 {
			left[k]--
			continue
		}
		out = append(out, x)
	}
	return out
}

// listText counts the items of l and names the first ones.
func listText(l []any) string {
	if len(l) == 1 {
		return "1 item: " + someItems(l)
	}
	return fmt.Sprintf("%d items: %s", len(l), someItems(l))
}

// someItems names the first items of l and counts the others.
func someItems(l []any) string {
	parts := make([]string, 0, maxChangeItems+1)
	for i, x := range l {
		if i == maxChangeItems {
			parts = append(parts, fmt.Sprintf("and %d more", len(l)-i))
			break
		}
		parts = append(parts, scalarText(x, ""))
	}
	return strings.Join(parts, ", ")
}

// scalarText writes a value: (none) for nil, a string quoted, a number or
// a boolean as it is, a list or mapping as compact JSON; cut to
// maxChangeText, from where it differs from other when other is set.
func scalarText(v, other any) string {
	var s string
	quote := strconv.Quote
	switch x := v.(type) {
	case nil:
		return "(none)"
	case string:
		s = x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	default:
		s = plainJSON(x)
		quote = func(s string) string { return s } // JSON already
	}
	o, _ := other.(string)
	if other != nil && o == "" {
		o = plainJSON(other)
	}
	if len(s) <= maxChangeText {
		return quote(s)
	}
	start := 0
	if other != nil {
		for start < len(s) && start < len(o) && s[start] == o[start] {
			start++
		}
		start = max(0, start-10)
	}
	end := min(len(s), start+maxChangeText)
	out := strings.ToValidUTF8(s[start:end], "")
	if start > 0 {
		out = "..." + out
	}
	if end < len(s) {
		out += "..."
	}
	return quote(out)
}

// plainJSON returns v as compact JSON for a reader, not a web page: an
// arrow in a value ("10.0.0.5:41000 -> 10.96.0.10:53") stays one, rather
// than encoding/json's "-\u003e".
func plainJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Failing counts the findings that appeared at or above level
// (--fail-on), and those that changed for the worse (a higher severity,
// a firmer certainty) and are at or above it in NEW.
func Failing(d FindingsDiff, level analyzer.Severity) int {
	n := 0
	for _, r := range d.Appeared {
		if r.Severity >= level {
			n++
		}
	}
	for _, c := range d.Changed {
		if c.Severity >= level && c.Worse {
			n++
		}
	}
	return n
}
