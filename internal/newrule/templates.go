package main

import "text/template"

// ruleTemplate is a new rule's file: a rule value in the shape of the
// others, each field with what to fill in.
var ruleTemplate = template.Must(template.New("rule").Parse(`package rules

import (
	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// {{.Var}} TODO: says in one sentence what the rule finds.
var {{.Var}} = &analyzer.Rule{
	// Name is the rule's ID, for good: a retired rule's name is never
	// reused.
	Name: "{{.Name}}",
	// TODO: the highest severity it reports; analyzer.Error only for a
	// cause the evidence proves from two kinds of evidence.
	Severity: analyzer.Warning,
	// TODO: the kinds of evidence it cannot run without (it is skipped
	// without them, and next_evidence asks for the commands that give
	// them), NeedsAny those of which it needs one, Uses those it joins
	// when present.
	Needs: []model.Kind{model.KindCapture},
	Uses:  []model.Kind{},
	// TODO: the facts it reads with Fact.Of (package analyzer/facts):
	// each is computed once per snapshot, for every rule requiring it.
	Requires: []analyzer.FactKey{},
	// TODO: the keys of its findings' Subject: what a finding is about
	// (node, object, address, port...), never a count, a time or words.
	SubjectKeys: []string{"node"},
	Run:         run{{.Var}},
	// TODO: the rules whose findings on the same node follow from this
	// rule's cause (Explains), or whose cause brings this rule's findings
	// about (FollowsFrom): the verdict groups their findings, the cause
	// first. One direction per pair of rules. Delete when none.
	Explains:    []*analyzer.Rule{},
	FollowsFrom: []*analyzer.Rule{},
	// TODO: the symptoms it can explain (symptoms.go), with its rank
	// under each: docs/collect.md lists the rule, its evidence and their
	// commands under them. At least one.
	Symptoms: []analyzer.SymptomRef{},
	// TODO: what the HTML report's timeline draws of its findings. The
	// zero Plot draws the attempts to the subject's address, vip or
	// backend from its client, the ICMP errors and ARP claims the
	// evidence cites, then the log lines it cites; see analyzer.Plot
	// for the other parts and selectors.
	Plot: analyzer.Plot{},
	// TODO: which evidence proves the cause it names, and what it
	// reports without that evidence (the symptom, the causes not ruled
	// out, the command that would decide).
	Proof:    "TODO",
	Unproven: "TODO",
	// TODO: the title (lower case, no final period, at most 60
	// characters), then what the rule means, the evidence it uses, how
	// it grades severity, and the fix. docs/rules.md and docs/rules/
	// are generated from it (make docs).
	Doc: ` + "`" + `{{.Title}}: todo, the rule's title

TODO: what the rule means, which evidence it uses, how it grades
severity, and the fix.` + "`" + `,
}

// run{{.Var}} TODO: says what the rule reads and reports.
func run{{.Var}}(p *analyzer.Pass) error {
	// TODO: judge from p.Snap and the facts the rule requires (cause,
	// certainty, evidence, alternatives, the deciding command), then say
	// it in words, and call p.Report for each finding.
	return nil
}
`))

// testTemplate is a new rule's test: its scenarios.
var testTemplate = template.Must(template.New("test").Parse(`package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func Test{{.Var}}(t *testing.T) { analyzertest.Run(t, rules.{{.Var}}, "testdata/{{.Name}}") }
`))

// readmeTemplate is the README of a new rule's scenario directory.
var readmeTemplate = template.Must(template.New("readme").Parse(`# {{.Name}} scenarios

TODO: one directory per scenario, hit-* where {{.Name}} reports and miss-*
where it does not, each with its evidence files as the commands print them
and want.yaml (go test ./analyzer/rules -run Test{{.Var}} -update writes
it); say here where each file comes from (see ../README.md).
`))
