// Package analyzer is netmortem's rule engine. A Rule reads a
// model.Snapshot and reports Findings; Run runs a set of rules and returns
// their findings in a stable order, with the rules that were skipped for
// lack of evidence. What several rules derive from a snapshot is a Fact,
// computed once and shared through the Pass (go/analysis's
// Requires/ResultOf). netmortem's own rules are in analyzer/rules, the
// facts they share in analyzer/facts.
//
// The package never parses: it works on any Snapshot, whether parse.Open
// built it from a support bundle or a program built it by hand.
package analyzer

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// Severity grades a finding.
type Severity int

// The severities, in increasing order.
const (
	Info Severity = iota + 1
	Warning
	Error
)

var severityNames = map[Severity]string{Info: "info", Warning: "warning", Error: "error"}

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	if n, ok := severityNames[s]; ok {
		return n
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// ParseSeverity reads "info", "warning" (or "warn") or "error".
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "info":
		return Info, nil
	case "warning", "warn":
		return Warning, nil
	case "error":
		return Error, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want info, warning or error)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (s Severity) MarshalText() ([]byte, error) {
	if _, ok := severityNames[s]; !ok {
		return nil, fmt.Errorf("invalid severity %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Pass is one rule's run over one snapshot.
type Pass struct {
	Ctx    context.Context
	Rule   *Rule
	Snap   *model.Snapshot
	Config RuleConfig
	// FactSet holds the snapshot's derived facts, shared by every rule
	// of the run; a rule reads those it requires with Fact.Of.
	FactSet *FactSet
	out     []Finding
	kinds   *Kinds // the kinds of the snapshot's inputs
	mu      sync.Mutex
	lost    []string // why the facts read stand for evidence cut off
}

// lose records that a fact the rule read stands for evidence cut off.
func (p *Pass) lose(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.lost, why) {
		p.lost = append(p.lost, why)
	}
}

// Report records a finding. Rule and Severity default to the rule's.
func (p *Pass) Report(f Finding) {
	if f.Rule == "" {
		f.Rule = p.Rule.Name
	}
	if f.Severity == 0 {
		f.Severity = p.Rule.Severity
	}
	p.out = append(p.out, f)
}

// Param returns the rule's numeric parameter name from the configuration,
// or def when it is not set. name must be declared in the rule's Params
// (with def as its Default): reading an undeclared parameter is a bug of
// the rule, which panics, and Run reports the rule as failed.
func (p *Pass) Param(name string, def float64) float64 {
	if p.Rule.param(name) == nil {
		panic(fmt.Sprintf("rule %s reads parameter %q, which its Params do not declare", p.Rule.Name, name))
	}
	if v, ok := p.Config.Params[name]; ok {
		return v
	}
	return def
}

// Skipped is a rule that did not run for lack of evidence.
type Skipped struct {
	Rule    string       `json:"rule" yaml:"rule"`
	Missing []model.Kind `json:"missing" yaml:"missing"`
	// AnyOf lists the kinds of which the rule needs one, when none was read.
	AnyOf []model.Kind `json:"any_of,omitempty" yaml:"any_of,omitempty"`
}

// RuleError is a rule that failed while running.
type RuleError struct {
	Rule string `json:"rule" yaml:"rule"`
	Err  string `json:"error" yaml:"error"`
}

// Stopped reports whether the rule did not run, or not to its end,
// because Run's context was done (interrupted, or out of time).
func (e RuleError) Stopped() bool {
	return e.Err == context.Canceled.Error() || e.Err == context.DeadlineExceeded.Error()
}

// Result is what Run returns.
type Result struct {
	Findings []Finding   `json:"findings" yaml:"findings"`
	Skipped  []Skipped   `json:"skipped" yaml:"skipped"`
	Errors   []RuleError `json:"errors" yaml:"errors"`
	// Rules are the rules Run was given, in their order, without those the
	// configuration disables: what report, timeline and collect read of a
	// rule (its chains, plot, descriptor) they read from these.
	Rules []*Rule `json:"-" yaml:"-"`
}

// Max returns the highest severity among the findings, or 0 when there are
// none.
func (r *Result) Max() Severity {
	var m Severity
	for _, f := range r.Findings {
		m = max(m, f.Severity)
	}
	return m
}

// Run runs rules over snap and returns their findings sorted by severity
// (highest first), rule, and first evidence. Rules whose Needs are missing
// are listed in Skipped. A rule that returns an error or panics is listed in
// Errors; the other rules still run. The facts the rules require are
// computed once, on first use. ctx and cfg may be nil; a nil snap, or a nil
// rule in the list, is reported in Errors.
func Run(ctx context.Context, snap *model.Snapshot, rules []*Rule, cfg *Config) Result {
	if snap == nil {
		return RunFactSet(ctx, nil, rules, cfg)
	}
	return RunFactSet(ctx, NewFactSet(snap), rules, cfg)
}

// RunFactSet is Run over the facts of a snapshot prepared by the caller:
// facts already computed (or set by hand, in a test) are used as they are,
// and those computed by the rules stay in fs for a later run.
func RunFactSet(ctx context.Context, fs *FactSet, rules []*Rule, cfg *Config) Result {
	res := Result{Findings: []Finding{}, Skipped: []Skipped{}, Errors: []RuleError{}}
	if ctx == nil {
		ctx = context.Background()
	}
	var snap *model.Snapshot
	if fs != nil {
		snap = fs.Snapshot()
	}
	kinds := NewKinds(snap)
	for i, r := range rules {
		switch {
		case r == nil:
			res.Errors = append(res.Errors, RuleError{Rule: fmt.Sprintf("#%d", i), Err: fmt.Sprintf("rule %d of the list is nil", i)})
			continue
		case snap == nil:
			res.Errors = append(res.Errors, RuleError{Rule: r.Name, Err: "no snapshot to analyze (nil)"})
			continue
		}
		rc := cfg.rule(r.Name)
		switch {
		case rc.Disabled:
			continue
		case ctx.Err() != nil:
			res.Errors = append(res.Errors, RuleError{Rule: r.Name, Err: ctx.Err().Error()})
			continue
		}
		res.Rules = append(res.Rules, r)
		var missing []model.Kind
		for _, k := range r.Needs {
			if !snap.Has(k) {
				missing = append(missing, k)
			}
		}
		var anyOf []model.Kind
		if len(r.NeedsAny) > 0 && !slices.ContainsFunc(r.NeedsAny, snap.Has) {
			anyOf = r.NeedsAny
		}
		if len(missing) > 0 || len(anyOf) > 0 {
			res.Skipped = append(res.Skipped, Skipped{Rule: r.Name, Missing: missing, AnyOf: anyOf})
			continue
		}
		p := &Pass{Ctx: ctx, Rule: r, Snap: snap, Config: rc, FactSet: fs, kinds: kinds}
		if err := runOne(p); err != nil {
			res.Errors = append(res.Errors, RuleError{Rule: r.Name, Err: err.Error()})
		}
		for _, f := range p.out {
			lost := append(slices.Clone(p.lost), f.lost...)
			f.lost = nil
			res.Findings = append(res.Findings, onCutEvidence(normalize(f, rc, kinds), snap, lost))
		}
	}
	explain(res.Findings)
	rankCandidates(&res, snap)
	Sort(res.Findings)
	setFingerprints(res.Findings)
	return res
}

func runOne(p *Pass) (err error) {
	if p.Rule.Run == nil {
		return fmt.Errorf("rule %s has no Run function", p.Rule.Name)
	}
	defer func() {
		if v := recover(); v != nil {
			if fe, ok := v.(*FactError); ok {
				err = fe
				return
			}
			err = fmt.Errorf("rule %s panicked: %v\n%s", p.Rule.Name, v, debug.Stack())
		}
	}()
	return p.Rule.Run(p)
}

// explain links each finding whose cause is not proven to a proven finding
// of another rule that cites one of its positions (a frame, a line): the
// symptom and the cause shown for it.
func explain(fs []Finding) {
	proven := map[model.Pos]int{}
	for i, f := range fs {
		if f.Certainty != Proven {
			continue
		}
		for _, e := range f.Evidence {
			if _, ok := proven[e.Pos]; !ok && !e.Pos.IsZero() {
				proven[e.Pos] = i
			}
		}
	}
	for i := range fs {
		f := &fs[i]
		if f.Certainty == Proven {
			continue
		}
		for _, e := range f.Evidence {
			if j, ok := proven[e.Pos]; ok && fs[j].Rule != f.Rule {
				f.ExplainedBy = fs[j].Rule + ": " + fs[j].Title
				break
			}
		}
	}
}

// Sort orders findings by severity (highest first), rule name, first
// evidence and title, so output is deterministic.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		var pa, pb model.Pos
		if len(a.Evidence) > 0 {
			pa = a.Evidence[0].Pos
		}
		if len(b.Evidence) > 0 {
			pb = b.Evidence[0].Pos
		}
		if pa != pb {
			return pa.Less(pb)
		}
		return a.Title < b.Title
	})
}

var ruleName = lazyre.New(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Validate checks a rule list: names kebab-case and unique, a Doc with a
// title of at most 60 characters, a severity, a Run function, Requires
// without nil entries or duplicates, Params each named in snake_case
// once, documented, of a known type, with a default of that type,
// SubjectKeys in snake_case, each once, and Explains, FollowsFrom,
// Symptoms and Plot well formed (see validateInfo), the edges leading
// no rule back to itself.
func Validate(rules []*Rule) error {
	var errs []error
	seen := map[string]bool{}
	for i, r := range rules {
		if r == nil {
			errs = append(errs, fmt.Errorf("rule %d is nil", i))
			continue
		}
		if !ruleName.MatchString(r.Name) {
			errs = append(errs, fmt.Errorf("rule %q: name is not kebab-case", r.Name))
		}
		if seen[r.Name] {
			errs = append(errs, fmt.Errorf("rule %q: duplicate name", r.Name))
		}
		seen[r.Name] = true
		title := r.Title()
		switch {
		case title == "":
			errs = append(errs, fmt.Errorf("rule %q: empty Doc", r.Name))
		case len(title) > 60:
			errs = append(errs, fmt.Errorf("rule %q: title longer than 60 characters", r.Name))
		case strings.HasSuffix(title, "."):
			errs = append(errs, fmt.Errorf("rule %q: title ends with a period", r.Name))
		case strings.ToLower(title[:1]) != title[:1]:
			errs = append(errs, fmt.Errorf("rule %q: title is not lower case", r.Name))
		}
		if r.Explanation() == "" {
			errs = append(errs, fmt.Errorf("rule %q: Doc has no explanation", r.Name))
		}
		if _, ok := severityNames[r.Severity]; !ok {
			errs = append(errs, fmt.Errorf("rule %q: invalid severity", r.Name))
		}
		if r.Run == nil {
			errs = append(errs, fmt.Errorf("rule %q: Run is nil", r.Name))
		}
		errs = append(errs, validateParams(r)...)
		errs = append(errs, validateSubjectKeys(r)...)
		errs = append(errs, validateInfo(r)...)
		facts := map[FactKey]bool{}
		for j, k := range r.Requires {
			switch {
			case k == nil || k.isNil():
				errs = append(errs, fmt.Errorf("rule %q: Requires[%d] is nil", r.Name, j))
				continue
			case facts[k]:
				errs = append(errs, fmt.Errorf("rule %q: Requires lists fact %s twice", r.Name, k.FactName()))
			}
			facts[k] = true
		}
	}
	errs = append(errs, validateCausality(rules)...)
	return errors.Join(errs...)
}
