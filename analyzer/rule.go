package analyzer

import (
	"strings"

	"github.com/netmortem/netmortem/model"
)

// Rule is one check. netmortem's rules are listed explicitly in
// analyzer/rules.All; a rule's Name is a stable ID that is never reused.
//
// A rule is the only place that knows about itself: what other packages
// need of it (the verdict's chains of cause and effect, the symptoms and
// commands of the collector's documentation, the timeline's drawing, the
// SARIF descriptor) is read from its fields, by packages given the rules
// that ran (Result.Rules), never looked up by name.
type Rule struct {
	// Name is the rule's kebab-case ID: "synack-reset".
	Name string
	// Doc is "title\n\nexplanation": the title is lower case, without a
	// final period; the explanation says what the rule means, which
	// evidence it uses, how it grades severity, and the fix.
	Doc string
	// Severity is the highest severity the rule reports by default.
	Severity Severity
	// Needs lists the kinds of evidence the rule cannot run without. When
	// one is missing the rule is reported as skipped, not failed.
	Needs []model.Kind
	// NeedsAny lists kinds of which the rule needs at least one (on top
	// of Needs): a rule that can reach its conclusion from any of several
	// sources.
	NeedsAny []model.Kind
	// Uses lists further kinds the rule joins when present.
	Uses []model.Kind
	// Requires lists the facts the rule reads (through Fact.Of): each is
	// computed once per snapshot, however many rules require it.
	Requires []FactKey
	// Proof says which evidence proves the cause the rule names: "the
	// client's source port is an IPVS virtual service's port (ipvsadm -Ln)
	// or a NodePort (Services, NodePort rules)".
	Proof string
	// Unproven says what the rule reports when that evidence is missing:
	// the symptom, the causes it cannot rule out, and the command that
	// would decide.
	Unproven string
	// Decide is the one command whose output shows whether the rule's
	// cause is at work: what a finding of unknown cause that names the
	// rule among its Candidates tells to run (the Decide of the rule's
	// own finding, when it has one, comes first).
	Decide string
	// Params declares the numeric parameters the rule reads with
	// Pass.Param, which a Config may set.
	Params []Param
	// SubjectKeys lists the keys the Subjects of the rule's findings may
	// hold (see the package doc). LoadConfig refuses an ignore entry of
	// the rule whose selectors need a key not listed; analyzertest checks
	// that findings hold no other. Empty: not declared.
	SubjectKeys []string
	// ObjectKinds lists the kinds of the Kubernetes objects its Subjects'
	// object key names ("Service", "Pod"), when SubjectKeys holds
	// object. LoadConfig refuses an object selector of a kind that no
	// rule names.
	ObjectKinds []string
	// Explains lists the rules whose findings, on the same node, are
	// known to follow from this rule's cause: the verdict groups them under
	// this rule's finding (report.NewVerdict, through Causality).
	Explains []*Rule
	// FollowsFrom lists the rules whose cause is known to bring about this
	// rule's findings on the same node: Explains seen from the other end,
	// for a rule that names the causes before it. An edge is stated once,
	// on either rule (two rule variables naming each other would be an
	// initialization cycle).
	FollowsFrom []*Rule
	// Symptoms are the symptoms the rule can explain: docs/collect.md
	// lists the rule, and the evidence it reads, under each (package
	// collect).
	Symptoms []SymptomRef
	// Plot says how the HTML report's timeline draws the rule's findings
	// (package timeline); the zero Plot draws what most rules need.
	Plot Plot
	// Run inspects p.Snap and calls p.Report for each finding.
	Run func(p *Pass) error
}

// NeedsText says in words what the rule needs: "netfilter, kube", "one of
// kube, logs", "capture and one of kube, logs", or "nothing".
func (r *Rule) NeedsText() string {
	join := func(ks []model.Kind) string {
		parts := make([]string, len(ks))
		for i, k := range ks {
			parts[i] = string(k)
		}
		return strings.Join(parts, ", ")
	}
	switch {
	case len(r.NeedsAny) == 0 && len(r.Needs) == 0:
		return "nothing"
	case len(r.NeedsAny) == 0:
		return join(r.Needs)
	case len(r.Needs) == 0:
		return "one of " + join(r.NeedsAny)
	}
	return join(r.Needs) + " and one of " + join(r.NeedsAny)
}

// Title returns the first line of Doc.
func (r *Rule) Title() string {
	t, _, _ := strings.Cut(r.Doc, "\n")
	return strings.TrimSpace(t)
}

// Explanation returns Doc without its title.
func (r *Rule) Explanation() string {
	_, rest, _ := strings.Cut(r.Doc, "\n")
	return strings.TrimSpace(rest)
}
