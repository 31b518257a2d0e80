package analyzer

import (
	"slices"

	"github.com/netmortem/netmortem/model"
)

// Certainty says how firmly a finding's evidence establishes its cause.
type Certainty string

// The certainties, from the firmest.
const (
	// Proven: the evidence in the bundle shows the cause (Supports says
	// which), from at least two sources: Evidence of two kinds. Only a proven cause is an error.
	Proven Certainty = "proven"
	// Likely: the evidence points at the cause but does not show it
	// (one source, or a link inferred); the finding is at most a warning.
	Likely Certainty = "likely"
	// Unknown: the symptom is shown, its cause is not. Cause names none;
	// Alternatives lists the causes not ruled out and Decide the command
	// that would tell them apart. At most a warning.
	Unknown Certainty = "unknown"
)

// Rank orders certainties from the least firm: Unknown 1, Likely 2,
// Proven 3, and 0 for any other value.
func (c Certainty) Rank() int {
	switch c {
	case Unknown:
		return 1
	case Likely:
		return 2
	case Proven:
		return 3
	}
	return 0
}

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
	// Candidates are, for a finding of unknown cause at warning or
	// above, the other rules that explain one of its rule's symptoms, in
	// the order the bundle's evidence supports them, each with the
	// command that decides it (see Candidate). Set by Run; Alternatives
	// lead with those found, and Decide tells the first from the next.
	Candidates []Candidate `json:"candidates,omitempty" yaml:"candidates,omitempty"`
	// ExplainedBy names the proven finding of another rule that cites the
	// same evidence, when this one's cause is not proven: "rp-filter-drop:
	// strict rp_filter on eth1 drops ...". Set by Run.
	ExplainedBy string `json:"explained_by,omitempty" yaml:"explained_by,omitempty"`
	// Sources are the kinds of evidence joined: those of Evidence, sorted,
	// once each. Set by Run, from the inputs each piece of evidence is in
	// (what a rule sets is replaced). A cause resting on fewer than two is
	// not Proven, and at most a warning.
	Sources []model.Kind `json:"sources" yaml:"sources"`
	// Evidence points at the frames, lines and objects that prove it,
	// the most telling first.
	Evidence []Evidence `json:"evidence" yaml:"evidence"`

	// lost lists the facts read that stand for what a cut lost and that
	// the finding rests on (Fact.RestsOn); Run consumes it.
	lost []string
}

// normalize applies the engine's invariants: the kinds of the evidence are
// told from the inputs it is in (kinds), and the finding's Sources are
// those kinds; a Proven cause that rests on fewer than two of them (see
// Joins), or with alternatives it has not ruled out, is Likely; a finding
// whose cause is not Proven is at most a warning; configured overrides
// win; nil maps and lists become empty ones.
func normalize(f Finding, rc RuleConfig, kinds *Kinds) Finding {
	if f.Facts == nil {
		f.Facts = map[string]any{}
	}
	if f.Subject == nil {
		f.Subject = map[string]string{}
	}
	if f.Evidence == nil {
		f.Evidence = []Evidence{}
	}
	f.Evidence = slices.Clone(f.Evidence) // the rule's slice is left as it is
	for i := range f.Evidence {
		if f.Evidence[i].Kind == "" {
			f.Evidence[i].Kind = kinds.Of(f.Evidence[i].Pos)
		}
	}
	f.Sources = sources(f.Evidence)
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
	if f.Certainty == Proven && (!joins(f.Sources) || len(f.Alternatives) > 0) {
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

// joins reports whether sources name two kinds of evidence at least: what a
// Proven cause rests on. It is the one place that says so; rules ask
// through Pass.Joins.
func joins(sources []model.Kind) bool { return len(sources) >= 2 }

// sources returns the kinds of ev, sorted, once each; evidence of no known
// kind counts for none.
func sources(ev []Evidence) []model.Kind {
	out := []model.Kind{}
	for _, e := range ev {
		if e.Kind != "" && !slices.Contains(out, e.Kind) {
			out = append(out, e.Kind)
		}
	}
	slices.Sort(out)
	return out
}
