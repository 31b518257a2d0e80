package analyzer

import (
	"fmt"
	"math"
	"regexp"
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
	// Doc says in a sentence what the parameter changes.
	Doc string
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

var paramName = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// check says what is wrong with v as a value of p, or "".
func (p *Param) check(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "a finite number"
	case p.Type == Integer && v != math.Trunc(v):
		return "an integer"
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
		} else if want := p.check(p.Default); want != "" {
			errs = append(errs, fmt.Errorf("rule %q: parameter %q: default %v is not %s", r.Name, p.Name, p.Default, want))
		}
		if p.Doc == "" {
			errs = append(errs, fmt.Errorf("rule %q: parameter %q has no Doc", r.Name, p.Name))
		}
	}
	return errs
}

var subjectKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

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
	return errs
}
