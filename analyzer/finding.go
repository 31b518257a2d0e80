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
