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
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

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
	// Facts are the snapshot's derived facts, shared by every rule of the
	// run; a rule reads those it requires with Fact.Of.
	Facts *Facts
	out   []Finding
	mu    sync.Mutex
	lost  []string // why the facts read stand for evidence cut off
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

// Certainty says how firmly a finding's evidence establishes its cause.
type Certainty string

// The certainties, from the firmest.
const (
	// Proven: the evidence in the bundle shows the cause (Supports says
	// which), from at least two sources. Only a proven cause is an error.
	Proven Certainty = "proven"
	// Likely: the evidence points at the cause but does not show it
	// (one source, or a link inferred); the finding is at most a warning.
	Likely Certainty = "likely"
	// Unknown: the symptom is shown, its cause is not. Cause names none;
	// Alternatives lists the causes not ruled out and Decide the command
	// that would tell them apart. At most a warning.
	Unknown Certainty = "unknown"
)

// Finding is one conclusion of a rule, with what proves it.
type Finding struct {
	Rule string `json:"rule" yaml:"rule"`
	// Fingerprint is the finding's stable identity: a hash of Rule and
	// Subject, the same across runs, bundles and cut captures for the same
	// problem, whatever its counts, times or wording. Set by Run.
	Fingerprint string   `json:"fingerprint" yaml:"fingerprint"`
	Severity    Severity `json:"severity" yaml:"severity"`
	// Title is a short plain-language headline.
	Title string `json:"title" yaml:"title"`
	// Summary says what happened, in a few sentences.
	Summary string `json:"summary" yaml:"summary"`
	// Cause is the likely root cause.
	Cause string `json:"cause" yaml:"cause"`
	// Fix is what to do: the exact setting or command.
	Fix string `json:"fix" yaml:"fix"`
	// Facts are the key values the finding rests on: addresses, ports,
	// ranges, services, counts.
	Facts map[string]any `json:"facts" yaml:"facts"`
	// Subject identifies what the finding is about, and only that: the
	// node, the Service, the backend, the VIP, the client and port; never
	// a count, a time or wording. Keys are lower-case words ("node",
	// "object", "address", "port", ...). The Fingerprint is computed from
	// it, and suppressions match it.
	Subject map[string]string `json:"subject" yaml:"subject"`
	// Certainty says how firmly the evidence establishes Cause. A rule
	// that leaves it empty gets Proven for an error (which still needs
	// two sources) and Likely otherwise. A finding that is not Proven is
	// at most a warning.
	Certainty Certainty `json:"certainty" yaml:"certainty"`
	// Supports names the evidence in the bundle that shows the cause:
	// "ipvsadm -Ln lists TCP 10.0.0.5:31234, the client's source port".
	Supports []string `json:"supports" yaml:"supports"`
	// Contradicts names the evidence that would rule the cause out: found
	// in the bundle and weighing against it, or absent and deciding.
	Contradicts []string `json:"contradicts" yaml:"contradicts"`
	// Alternatives are the causes the evidence cannot rule out, most
	// likely first; set when the cause is not Proven (a finding that
	// lists them is not Proven).
	Alternatives []string `json:"alternatives" yaml:"alternatives"`
	// Decide is the one command whose output would decide the cause, when
	// it is not Proven: "sysctl net.bridge.bridge-nf-call-iptables".
	Decide string `json:"decide,omitempty" yaml:"decide,omitempty"`
	// ExplainedBy names the proven finding of another rule that cites the
	// same evidence, when this one's cause is not proven: "rp-filter-drop:
	// strict rp_filter on eth1 drops ...". Set by Run.
	ExplainedBy string `json:"explained_by,omitempty" yaml:"explained_by,omitempty"`
	// Sources are the kinds of evidence joined. A finding resting on one
	// source is at most a warning.
	Sources []model.Kind `json:"sources" yaml:"sources"`
	// Evidence points at the frames, lines and objects that prove it,
	// the most telling first.
	Evidence []Evidence `json:"evidence" yaml:"evidence"`
}

// Evidence is one piece of proof: a position and what is there.
type Evidence struct {
	model.Pos `yaml:",inline"`
	// Note says what the position shows: "SYN", "SYN/ACK", "client RST",
	// "ip_local_port_range".
	Note string `json:"note,omitempty" yaml:"note,omitempty"`
}

// String formats e as "pos (note)".
func (e Evidence) String() string {
	if e.Note == "" {
		return e.Pos.String()
	}
	return e.Pos.String() + " (" + e.Note + ")"
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
		return RunFacts(ctx, nil, rules, cfg)
	}
	return RunFacts(ctx, NewFacts(snap), rules, cfg)
}

// RunFacts is Run over the snapshot of facts prepared by the caller: facts
// already computed (or set by hand, in a test) are used as they are, and
// those computed by the rules stay in facts for a later run.
func RunFacts(ctx context.Context, facts *Facts, rules []*Rule, cfg *Config) Result {
	res := Result{Findings: []Finding{}, Skipped: []Skipped{}, Errors: []RuleError{}}
	if ctx == nil {
		ctx = context.Background()
	}
	var snap *model.Snapshot
	if facts != nil {
		snap = facts.Snapshot()
	}
	for i, r := range rules {
		switch {
		case r == nil:
			res.Errors = append(res.Errors, RuleError{Rule: fmt.Sprintf("#%d", i), Err: fmt.Sprintf("rule %d of the list is nil", i)})
			continue
		case snap == nil:
			res.Errors = append(res.Errors, RuleError{Rule: r.Name, Err: "no snapshot to analyze (nil)"})
			continue
		case ctx.Err() != nil:
			res.Errors = append(res.Errors, RuleError{Rule: r.Name, Err: ctx.Err().Error()})
			continue
		}
		rc := cfg.rule(r.Name)
		if rc.Disabled {
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
		p := &Pass{Ctx: ctx, Rule: r, Snap: snap, Config: rc, Facts: facts}
		if err := runOne(p); err != nil {
			res.Errors = append(res.Errors, RuleError{Rule: r.Name, Err: err.Error()})
		}
		for _, f := range p.out {
			res.Findings = append(res.Findings, onCutEvidence(normalize(f, rc), snap, p.lost))
		}
	}
	explain(res.Findings)
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

// normalize applies the engine's invariants: a finding whose cause is not
// Proven, or that rests on fewer than two sources, is at most a warning; a
// Proven cause on fewer than two sources, or with alternatives it has not
// ruled out, is Likely; configured overrides
// win; nil maps and lists become empty ones.
func normalize(f Finding, rc RuleConfig) Finding {
	if f.Facts == nil {
		f.Facts = map[string]any{}
	}
	if f.Subject == nil {
		f.Subject = map[string]string{}
	}
	if f.Sources == nil {
		f.Sources = []model.Kind{}
	}
	f.Sources = uniqueKinds(f.Sources)
	if f.Evidence == nil {
		f.Evidence = []Evidence{}
	}
	for _, l := range []*[]string{&f.Supports, &f.Contradicts, &f.Alternatives} {
		if *l == nil {
			*l = []string{}
		}
	}
	if f.Certainty == "" {
		// A rule that does not say: an error joined from two sources
		// is taken as proven, anything else as likely.
		f.Certainty = Likely
		if f.Severity == Error {
			f.Certainty = Proven
		}
	}
	if f.Certainty == Proven && (len(distinctKinds(f.Sources)) < 2 || len(f.Alternatives) > 0) {
		// Not proven after all: one kind of evidence, or causes left
		// that the evidence does not rule out.
		f.Certainty = Likely
	}
	if f.Certainty != Proven && f.Severity > Warning {
		f.Severity = Warning
	}
	if rc.Severity != 0 {
		f.Severity = rc.Severity
	}
	return f
}

// uniqueKinds drops the repeats of ks, keeping the order of first mention.
func uniqueKinds(ks []model.Kind) []model.Kind {
	out := ks[:0:0]
	for _, k := range ks {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func distinctKinds(ks []model.Kind) []model.Kind {
	out := slices.Clone(ks)
	slices.Sort(out)
	return slices.Compact(out)
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

var ruleName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

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
