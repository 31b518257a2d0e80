// Package report renders netmortem's results: the findings of the rules,
// the inputs that were read, and the warnings found in them. All formats
// come from one Report value:
//
//   - table: for a terminal, its first screen first: the verdict (what
//     most likely went wrong, NewVerdict) with each cause's evidence,
//     fix and command to decide, then the findings in brief and the few
//     commands to collect that would change the answer; the full account
//     of findings with TableStyle.Detail (WriteTable)
//   - text: one line per finding, "file:line:col: severity: rule: message",
//     for editors, CI problem matchers and grep
//   - json and yaml: the whole Report, for programs
//   - markdown: ready to paste into a ticket, the verdict first, under
//     MaxMarkdown characters whatever the bundle
//   - html: one self-contained page (inline CSS, no script, nothing
//     loaded) with the verdict, every finding with its timeline drawn as
//     SVG (Report.Timelines) and its evidence linked to an appendix
//     quoting it (Report.Quotes)
package report

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/buildinfo"
	"github.com/netmortem/netmortem/model"
)

// Report is everything one analysis produced.
type Report struct {
	// SchemaVersion is the version of the shape of the JSON and YAML
	// outputs (SchemaVersion when New made the report).
	SchemaVersion string `json:"schema_version" yaml:"schema_version"`
	// Tool says which netmortem wrote the report (buildinfo.Get() when New
	// made it).
	Tool buildinfo.Info `json:"tool" yaml:"tool"`
	// Verdict says what most likely went wrong, the findings grouped by
	// shared root cause (NewVerdict of Rules and Findings). New sets it,
	// and Write sets it again from the findings it writes.
	Verdict Verdict `json:"verdict" yaml:"verdict"`
	// Findings are the rules' conclusions, highest severity first.
	Findings []analyzer.Finding `json:"findings" yaml:"findings"`
	// Warnings are problems found while reading the inputs, with their
	// positions.
	Warnings []Warning `json:"warnings" yaml:"warnings"`
	// Inputs lists every file read or skipped.
	Inputs []model.Input `json:"inputs" yaml:"inputs"`
	// Skipped lists rules that did not run, and the evidence they lacked.
	Skipped []analyzer.Skipped `json:"skipped_rules" yaml:"skipped_rules"`
	// Errors lists rules that failed.
	Errors []analyzer.RuleError `json:"rule_errors" yaml:"rule_errors"`
	// SuppressedCount is how many findings a configuration's ignore
	// entries or a baseline left out of Findings (SetSuppressed).
	SuppressedCount int `json:"suppressed_count" yaml:"suppressed_count"`
	// Suppressed are those findings, each with why, when they are asked
	// for (--show-suppressed); absent otherwise.
	Suppressed []analyzer.Suppressed `json:"suppressed,omitempty" yaml:"suppressed,omitempty"`
	// SuppressedFingerprints are the fingerprints of the suppressed
	// findings, sorted, with or without --show-suppressed: a report used
	// as a baseline suppresses them too. Empty when none were.
	SuppressedFingerprints []string `json:"suppressed_fingerprints,omitempty" yaml:"suppressed_fingerprints,omitempty"`
	// NextEvidence lists the commands whose output would decide what the
	// analysis could not: the evidence skipped rules lacked, the commands
	// that decide the causes not proven, deduplicated (NextEvidenceFor).
	// New fills it from the skipped rules and the findings; a caller that
	// knows the rules run sets it again with them.
	NextEvidence []NextEvidence `json:"next_evidence" yaml:"next_evidence"`
	// Incomplete says why the analysis did not cover all it was given,
	// one reason each ("missing.pcap: no such file or directory", "no
	// input could be read", a time budget that ran out, an interrupt);
	// absent when it did. The CLI exits 3 when it is not empty, and SARIF
	// then says the run was not successful.
	Incomplete []string `json:"incomplete,omitempty" yaml:"incomplete,omitempty"`

	// Timelines are the HTML report's charts, by finding fingerprint
	// (package timeline builds them from the model). They are not part of
	// the JSON or YAML report.
	Timelines map[string]*Timeline `json:"-" yaml:"-"`
	// Quotes are the texts at the findings' evidence positions, for the
	// HTML report's appendix. They are not part of the JSON or YAML report.
	Quotes []Quote `json:"-" yaml:"-"`

	// rules are the rules that ran (Rules, SetRules). They are not data
	// of the report but what reads it, kept apart from what encoders and
	// the anonymizer walk.
	rules []*analyzer.Rule
	// names are the bundle's names that hold shell syntax
	// (snapshotNames): quoted in commands, atoms of the Markdown prose.
	names []string
	// unreadable counts the inputs of Inputs that are captures whose
	// header could not be read (model.Snapshot.UnreadableCaptures): listed,
	// not skipped, but not read either.
	unreadable int
}

// Rules returns the rules that ran, as New or SetRules set them: the
// verdict reads their chains of cause and effect (Explains, FollowsFrom),
// SARIF their descriptors.
func (r *Report) Rules() []*analyzer.Rule { return r.rules }

// SetRules sets the rules that ran, for a report built by hand; New sets
// them from the analyzer's result (analyzer.Result.Rules). Without them,
// the verdict groups no findings by their rules' chains and SARIF
// describes each rule by its name alone.
func (r *Report) SetRules(rules []*analyzer.Rule) { r.rules = slices.Clone(rules) }

// Warning is a problem found in an input.
type Warning struct {
	// Position is Pos formatted as file:line or file#frame=N.
	Position string    `json:"position" yaml:"position"`
	Pos      model.Pos `json:"pos" yaml:"pos"`
	Message  string    `json:"message" yaml:"message"`
}

// New assembles a Report from a snapshot, the warnings met while reading
// it, and the result of analyzer.Run. A nil snapshot gives a report without
// inputs; nil entries of warnings are left out.
func New(snap *model.Snapshot, warnings model.ErrorList, res analyzer.Result) *Report {
	r := &Report{
		SchemaVersion: SchemaVersion,
		Tool:          buildinfo.Get(),
		Findings:      slices.Clone(res.Findings),
		Warnings:      []Warning{},
		Inputs:        []model.Input{},
		Skipped:       slices.Clone(res.Skipped),
		Errors:        slices.Clone(res.Errors),
		rules:         slices.Clone(res.Rules),
	}
	if snap != nil {
		r.Inputs = append(r.Inputs, snap.Inputs...)
		r.unreadable = len(snap.UnreadableCaptures())
	}
	sort.SliceStable(r.Inputs, func(i, j int) bool { return inputLess(r.Inputs[i].Path, r.Inputs[j].Path) })
	for _, w := range warnings {
		if w == nil {
			continue
		}
		msg := "<nil>"
		if w.Err != nil {
			msg = w.Err.Error()
		}
		if w.Text != "" {
			msg += fmt.Sprintf(" (%.60q)", w.Text)
		}
		r.Warnings = append(r.Warnings, Warning{Position: w.Pos.String(), Pos: w.Pos, Message: msg})
	}
	if r.Findings == nil {
		r.Findings = []analyzer.Finding{}
	}
	r.names = snapshotNames(snap)
	for i, f := range r.Findings {
		r.Findings[i] = pasteSafe(f, r.names...)
	}
	res.Findings = r.Findings
	if r.Skipped == nil {
		r.Skipped = []analyzer.Skipped{}
	}
	if r.Errors == nil {
		r.Errors = []analyzer.RuleError{}
	}
	r.NextEvidence = NextEvidenceFor(snap, nil, res)
	r.Verdict = NewVerdict(r.rules, r.Findings, r.Inputs)
	return r
}

// Max returns the highest severity among the findings (0 when none, or
// for a nil report).
func (r *Report) Max() analyzer.Severity {
	var m analyzer.Severity
	if r == nil {
		return m
	}
	for _, f := range r.Findings {
		m = max(m, f.Severity)
	}
	return m
}

// Formats lists the output formats Write accepts.
func Formats() []string {
	return []string{"table", "text", "json", "yaml", "markdown", "sarif", "html"}
}

// Errors of Write for arguments it cannot use.
var (
	ErrNilWriter = errors.New("report: nil writer")
	ErrNilReport = errors.New("report: nil report")
)

// forWriting checks the arguments of Write and WriteTable and returns the
// copy of r they render: empty lists instead of nil ones, and the verdict
// of the findings as they are now (r may have changed since New).
func forWriting(w io.Writer, r *Report) (*Report, error) {
	if w == nil || isNilPointer(w) {
		return nil, ErrNilWriter
	}
	if r == nil {
		return nil, ErrNilReport
	}
	c := *r.withEmptyLists()
	c.Verdict = NewVerdict(c.rules, c.Findings, c.Inputs)
	return &c, nil
}

// Write renders r in format (one of Formats) to w. It returns ErrNilWriter
// or ErrNilReport for a nil w or r, and an error naming the formats for an
// unknown one.
//
// Text, table, markdown, HTML and SARIF messages escape the control
// characters and other non-printing runes of names and messages (`\n`,
// `\x1b`, `\u202e`), so that no input can add a line to the output or
// drive a terminal; JSON and YAML keep the exact text. HTML escapes
// everything from the input for HTML too, and loads nothing. Times the JSON encoder
// cannot write (years outside 0-9999) and NaN or infinite numbers among a
// finding's facts are written clamped or as text, with one warning added.
func Write(w io.Writer, format string, r *Report) error {
	r, err := forWriting(w, r)
	if err != nil {
		return err
	}
	switch format {
	case "table":
		return writeTable(w, r)
	case "text":
		return writeText(w, r)
	case "json":
		return writeJSON(w, r.suppressedForJSON().forJSON())
	case "yaml":
		return writeYAML(w, r.suppressedForJSON().forJSON())
	case "markdown", "md":
		return writeMarkdown(w, r)
	case "sarif":
		return writeSARIF(w, r.suppressedForJSON().forJSON())
	case "html":
		return writeHTML(w, r)
	}
	return fmt.Errorf("unknown output format %q (want %s)", format, strings.Join(Formats(), ", "))
}

// isNilPointer reports whether w is a nil pointer (or map, func, chan)
// held in a non-nil interface, on which writing would panic.
func isNilPointer(w io.Writer) bool {
	v := reflect.ValueOf(w)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// withEmptyLists returns r, or a copy of it whose nil lists are empty, so
// that JSON shows [] and never null for a Report built by hand, and whose
// SchemaVersion and Tool are set.
func (r *Report) withEmptyLists() *Report {
	if r.Findings != nil && r.Warnings != nil && r.Inputs != nil && r.Skipped != nil && r.Errors != nil && r.NextEvidence != nil &&
		r.SchemaVersion != "" && r.Tool.Name != "" {
		return r
	}
	c := *r
	if c.SchemaVersion == "" {
		c.SchemaVersion = SchemaVersion
	}
	if c.Tool.Name == "" {
		c.Tool = buildinfo.Get()
	}
	if c.Findings == nil {
		c.Findings = []analyzer.Finding{}
	}
	if c.Warnings == nil {
		c.Warnings = []Warning{}
	}
	if c.Inputs == nil {
		c.Inputs = []model.Input{}
	}
	if c.Skipped == nil {
		c.Skipped = []analyzer.Skipped{}
	}
	if c.Errors == nil {
		c.Errors = []analyzer.RuleError{}
	}
	if c.NextEvidence == nil {
		c.NextEvidence = []NextEvidence{}
	}
	return &c
}

// factLines renders a finding's facts as "key: value" lines, keys sorted.
func factLines(facts map[string]any) []string {
	keys := make([]string, 0, len(facts))
	for k := range facts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+": "+FactValue(facts[k]))
	}
	return out
}

// FactValue formats one fact value: lists are comma separated.
func FactValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []string:
		return strings.Join(x, ", ")
	case []uint16:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = fmt.Sprint(p)
		}
		return strings.Join(parts, ", ")
	case []int:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = fmt.Sprint(p)
		}
		return strings.Join(parts, ", ")
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = FactValue(p)
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

// inputLess orders input paths by name, and the commands of a terminal
// session ("session.txt:12", listed after "session.txt") by their line.
func inputLess(a, b string) bool {
	splitLine := func(p string) (string, int) {
		i := strings.LastIndexByte(p, ':')
		if i < 0 {
			return p, 0
		}
		n, err := strconv.Atoi(p[i+1:])
		if err != nil || n <= 0 {
			return p, 0
		}
		return p[:i], n
	}
	pa, la := splitLine(a)
	pb, lb := splitLine(b)
	if pa != pb {
		return pa < pb
	}
	return la < lb
}
