package analyzer

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
)

// ParamType is the type of a rule's parameter.
type ParamType string

// The parameter types. Both are numbers in a configuration file; an
// integer parameter takes whole numbers only.
const (
	Integer ParamType = "integer"
	Number  ParamType = "number"
)

// Param declares one numeric parameter of a rule: a threshold a Config
// may set under rules: NAME: params:.
type Param struct {
	// Name is the parameter's snake_case key: "min_attempts".
	Name string
	// Type is Integer or Number.
	Type ParamType
	// Default is the value the rule uses when the configuration does
	// not set one.
	Default float64
	// Range is the values the parameter takes; a configuration setting
	// one outside it is an error. Every parameter declares one.
	Range Range
	// Doc says in a sentence what the parameter changes.
	Doc string
}

// Range is an interval of parameter values, each end closed, open or
// absent. The zero Range is unbounded.
type Range struct {
	Min, Max         float64
	HasMin, HasMax   bool
	MinOpen, MaxOpen bool // the bound itself is outside the range
}

// AtLeast is the range of the values >= min.
func AtLeast(min float64) Range { return Range{Min: min, HasMin: true} }

// Between is the range of the values > min and < max (open at both ends:
// a probability that is neither 0 nor 1, say).
func Between(min, max float64) Range {
	return Range{Min: min, Max: max, HasMin: true, HasMax: true, MinOpen: true, MaxOpen: true}
}

// Contains reports whether v is in the range.
func (r Range) Contains(v float64) bool {
	switch {
	case r.HasMin && (v < r.Min || r.MinOpen && v == r.Min):
		return false
	case r.HasMax && (v > r.Max || r.MaxOpen && v == r.Max):
		return false
	}
	return true
}

// String writes the range as docs/config.md and errors say it: ">= 1",
// "> 0 and < 1", "any".
func (r Range) String() string {
	var parts []string
	if r.HasMin {
		op := ">="
		if r.MinOpen {
			op = ">"
		}
		parts = append(parts, op+" "+strconv.FormatFloat(r.Min, 'g', -1, 64))
	}
	if r.HasMax {
		op := "<="
		if r.MaxOpen {
			op = "<"
		}
		parts = append(parts, op+" "+strconv.FormatFloat(r.Max, 'g', -1, 64))
	}
	if len(parts) == 0 {
		return "any"
	}
	return strings.Join(parts, " and ")
}

// param returns the rule's declared parameter called name, or nil.
func (r *Rule) param(name string) *Param {
	for i := range r.Params {
		if r.Params[i].Name == name {
			return &r.Params[i]
		}
	}
	return nil
}

var paramName = lazyre.New(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// check says what is wrong with v as a value of p, or "".
func (p *Param) check(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "a finite number"
	case p.Type == Integer && v != math.Trunc(v):
		return "an integer " + p.Range.String()
	case !p.Range.Contains(v):
		if p.Type == Integer {
			return "an integer " + p.Range.String()
		}
		return "a number " + p.Range.String()
	}
	return ""
}

func validateParams(r *Rule) []error {
	var errs []error
	seen := map[string]bool{}
	for _, p := range r.Params {
		if !paramName.MatchString(p.Name) {
			errs = append(errs, fmt.Errorf("rule %q: parameter %q is not snake_case", r.Name, p.Name))
		}
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("rule %q: parameter %q declared twice", r.Name, p.Name))
		}
		seen[p.Name] = true
		if p.Type != Integer && p.Type != Number {
			errs = append(errs, fmt.Errorf("rule %q: parameter %q has type %q (want integer or number)", r.Name, p.Name, p.Type))
		} else if !p.Range.HasMin && !p.Range.HasMax {
			errs = append(errs, fmt.Errorf("rule %q: parameter %q declares no Range (AtLeast, Between)", r.Name, p.Name))
		} else if p.Range.HasMin && p.Range.HasMax && !(p.Range.Min < p.Range.Max) {
			errs = append(errs, fmt.Errorf("rule %q: parameter %q: the range %s is empty", r.Name, p.Name, p.Range))
		} else if want := p.check(p.Default); want != "" {
			errs = append(errs, fmt.Errorf("rule %q: parameter %q: default %v is not %s", r.Name, p.Name, p.Default, want))
		}
		if p.Doc == "" {
			errs = append(errs, fmt.Errorf("rule %q: parameter %q has no Doc", r.Name, p.Name))
		}
	}
	return errs
}

var subjectKey = lazyre.New(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

func validateSubjectKeys(r *Rule) []error {
	var errs []error
	seen := map[string]bool{}
	for _, k := range r.SubjectKeys {
		if !subjectKey.MatchString(k) {
			errs = append(errs, fmt.Errorf("rule %q: subject key %q is not lower-case snake_case", r.Name, k))
		}
		if seen[k] {
			errs = append(errs, fmt.Errorf("rule %q: subject key %q listed twice", r.Name, k))
		}
		seen[k] = true
	}
	switch hasObject := slices.Contains(r.SubjectKeys, "object"); {
	case hasObject && len(r.ObjectKinds) == 0:
		errs = append(errs, fmt.Errorf("rule %q: its subjects hold an object but it declares no ObjectKinds", r.Name))
	case !hasObject && len(r.ObjectKinds) > 0:
		errs = append(errs, fmt.Errorf("rule %q: ObjectKinds without the subject key object", r.Name))
	}
	return errs
}
