package report

import (
	"encoding/json"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/model"
)

// SARIF 2.1.0 output (OASIS Static Analysis Results Interchange Format), for
// code-scanning dashboards and CI annotations.
//
//   - tool.driver is netmortem: its version and, when that is a semantic
//     version, semanticVersion (without the "v"); the commit and the Go
//     toolchain in its properties. The run's properties carry the
//     report's schema_version, and its next_evidence as in JSON (the
//     commands that would decide what the analysis could not).
//   - Each rule that has findings is a tool.driver.rules entry: its Name is
//     the id, its title the shortDescription, its explanation (from Rule.Doc)
//     the fullDescription and help.
//   - Each finding is a result at the rule's level (error, warning, note for
//     info), its message "title: summary", its Fingerprint the
//     partialFingerprints entry "netmortem/v1". The first piece of evidence
//     is the location, the others are relatedLocations, each with its note
//     as the message.
//   - A position's file is a physicalLocation's artifactLocation: a URI
//     reference relative to a base named in run.originalUriBaseIds and in
//     the artifactLocation's uriBaseId: BUNDLE (the directory netmortem
//     ran in, which relative input paths start from; its URI is the
//     consumer's to set) or ROOT ("file:///", for absolute paths). The
//     path is "/" separated and percent-encoded, an archive's member a path
//     inside the archive ("bundle.tar.gz/node1/sysctl.txt"). A line is
//     region.startLine (and startColumn). A packet capture position has no
//     line: the location carries the file, a logicalLocation of kind
//     "packet" named "frame=N", and the frame number in its properties
//     ("frame"). A Kubernetes object is a logicalLocation of kind "object"
//     ("Service kube-system/dns", with the field path in
//     fullyQualifiedName), beside its file and line when known.
//   - The finding's cause, fix, facts and sources are result properties.
//   - Input warnings, skipped rules and rule failures are
//     toolExecutionNotifications of the run's invocation.
//   - Message texts and logical location names are escaped as in the text
//     formats (see package escape): viewers show them as text, and a name
//     from the bundle must not carry a control character or a bidi
//     override there. Square brackets in message texts are escaped with
//     a backslash (SARIF 3.11.6): a message is plain text, and a name
//     from the bundle must not make an embedded link ("[x](javascript:...)")
//     in it. Properties keep the exact values, as in JSON.

const sarifSchema = "https://json.schemastore.org/sarif-2.1.0.json"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                        `json:"tool"`
	OriginalURIBaseIDs map[string]sarifArtifactLocation `json:"originalUriBaseIds"`
	Invocations        []sarifInvocation                `json:"invocations"`
	Results            []sarifResult                    `json:"results"`
	Properties         map[string]any                   `json:"properties"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name            string         `json:"name"`
	Version         string         `json:"version,omitempty"`
	SemanticVersion string         `json:"semanticVersion,omitempty"`
	InformationURI  string         `json:"informationUri"`
	Rules           []sarifRule    `json:"rules"`
	Properties      map[string]any `json:"properties,omitempty"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	Help                 sarifText      `json:"help"`
	DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties,omitempty"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	RelatedLocations    []sarifLocation   `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	// Suppressions is set for a suppressed finding (--show-suppressed):
	// viewers show the result as suppressed, with the justification.
	Suppressions []sarifSuppression `json:"suppressions,omitempty"`
	Properties   map[string]any     `json:"properties,omitempty"`
}

// sarifSuppression says that a result was suppressed, and why: kind
// "external" (an ignore entry of the configuration, or a baseline).
type sarifSuppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status,omitempty"`
	Justification string `json:"justification,omitempty"`
}

type sarifLocation struct {
	ID               *int                   `json:"id,omitempty"`
	PhysicalLocation *sarifPhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
	Message          *sarifText             `json:"message,omitempty"`
	Properties       map[string]any         `json:"properties,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifArtifactLocation struct {
	URI         string     `json:"uri,omitempty"`
	URIBaseID   string     `json:"uriBaseId,omitempty"`
	Description *sarifText `json:"description,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifLogicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
	Locations  []sarifLocation `json:"locations,omitempty"`
	Descriptor *sarifReference `json:"descriptor,omitempty"`
}

type sarifReference struct {
	ID string `json:"id"`
}

func sarifLevel(s analyzer.Severity) string {
	switch s {
	case analyzer.Error:
		return "error"
	case analyzer.Warning:
		return "warning"
	}
	return "note"
}

// sarifLoc converts a position. ok is false for the zero position.
func sarifLoc(p model.Pos, note string) (sarifLocation, bool) {
	var loc sarifLocation
	if p.IsZero() {
		return loc, false
	}
	if p.File != "" {
		loc.PhysicalLocation = &sarifPhysicalLocation{ArtifactLocation: sarifArtifact(p.File)}
		if p.Line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: p.Line, StartColumn: p.Col}
		}
	}
	if p.Frame > 0 {
		loc.LogicalLocations = append(loc.LogicalLocations, sarifLogicalLocation{
			Name: "frame=" + itoa(p.Frame), FullyQualifiedName: escape.String(p.String()), Kind: "packet"})
		loc.Properties = map[string]any{"frame": p.Frame}
	}
	if p.Object != "" || p.Path != "" {
		name := p.Object
		if name == "" {
			name = p.Path
		}
		loc.LogicalLocations = append(loc.LogicalLocations, sarifLogicalLocation{
			Name: escape.String(name), FullyQualifiedName: escape.String(strings.TrimSpace(p.Object + " " + p.Path)), Kind: "object"})
	}
	if note != "" {
		loc.Message = &sarifText{Text: sarifMessage(note)}
	}
	return loc, true
}

// sarifMessage is s as the text of a SARIF message: its control and bidi
// characters escaped (package escape), and its square brackets, which
// would open an embedded link, and the backslashes that would escape them,
// escaped with a backslash (SARIF 3.11.6).
func sarifMessage(s string) string {
	s = escape.String(s)
	if !strings.ContainsAny(s, "[]") {
		return s
	}
	return sarifBrackets.Replace(s)
}

var sarifBrackets = strings.NewReplacer(`\[`, `\\\[`, `\]`, `\\\]`, "[", `\[`, "]", `\]`)

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// sarifRuleFor describes the rule called name: from its value among rules
// (the rules that ran), or from the finding alone for a rule not among
// them (a report read back from JSON).
func sarifRuleFor(rules []*analyzer.Rule, name string, f analyzer.Finding) sarifRule {
	i := slices.IndexFunc(rules, func(r *analyzer.Rule) bool { return r != nil && r.Name == name })
	if i < 0 {
		return sarifRule{
			ID: name, Name: name,
			ShortDescription:     sarifText{Text: name},
			FullDescription:      sarifText{Text: name},
			Help:                 sarifText{Text: "netmortem explain " + name},
			DefaultConfiguration: sarifConfig{Level: sarifLevel(f.Severity)},
		}
	}
	r := rules[i]
	props := map[string]any{"needs": kindNames(r.Needs)}
	if len(r.Uses) > 0 {
		props["uses"] = kindNames(r.Uses)
	}
	return sarifRule{
		ID: r.Name, Name: r.Name,
		ShortDescription:     sarifText{Text: r.Title()},
		FullDescription:      sarifText{Text: r.Explanation()},
		Help:                 sarifText{Text: r.Explanation(), Markdown: "**" + r.Title() + "**\n\n" + r.Explanation()},
		DefaultConfiguration: sarifConfig{Level: sarifLevel(r.Severity)},
		Properties:           props,
	}
}

func kindNames(ks []model.Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

func writeSARIF(w io.Writer, r *Report) error {
	run := sarifRun{
		Tool:               sarifTool{Driver: sarifDriverFor(r.Tool)},
		OriginalURIBaseIDs: map[string]sarifArtifactLocation{sarifBundle: {Description: &sarifText{Text: sarifBundleText}}},
		Results:            []sarifResult{},
		Properties:         map[string]any{"schema_version": r.SchemaVersion, "next_evidence": r.NextEvidence},
	}
	// The findings, then (with --show-suppressed) the suppressed ones,
	// each with the suppression that left it out of the report.
	all := slices.Clone(r.Findings)
	for _, sup := range r.Suppressed {
		all = append(all, sup.Finding)
	}
	var names []string
	first := map[string]analyzer.Finding{}
	for _, f := range all {
		if _, ok := first[f.Rule]; !ok {
			first[f.Rule] = f
			names = append(names, f.Rule)
		}
	}
	sort.Strings(names)
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRuleFor(r.rules, n, first[n]))
	}
	for _, f := range r.Findings {
		run.Results = append(run.Results, sarifResultFor(f, index[f.Rule]))
	}
	for _, sup := range r.Suppressed {
		res := sarifResultFor(sup.Finding, index[sup.Rule])
		res.Suppressions = []sarifSuppression{{Kind: "external", Status: "accepted",
			Justification: sarifMessage(why(sup))}}
		run.Results = append(run.Results, res)
	}
	inv := sarifInvocation{ExecutionSuccessful: len(r.Errors) == 0 && len(r.Incomplete) == 0, ToolExecutionNotifications: []sarifNotification{}}
	for _, why := range r.Incomplete {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Level: "error", Message: sarifText{Text: sarifMessage("incomplete: " + why)}})
	}
	for _, e := range r.Errors {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Level: "error", Message: sarifText{Text: sarifMessage("rule " + e.Rule + " failed: " + e.Err)}, Descriptor: &sarifReference{ID: e.Rule}})
	}
	for _, s := range r.Skipped {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Level: "note", Message: sarifText{Text: "rule " + s.Rule + " skipped: no " + strings.Join(kindNames(slices.Concat(s.Missing, s.AnyOf)), ", ") + " evidence"},
			Descriptor: &sarifReference{ID: s.Rule}})
	}
	for _, wn := range r.Warnings {
		n := sarifNotification{Level: "warning", Message: sarifText{Text: sarifMessage(wn.Message)}}
		if loc, ok := sarifLoc(wn.Pos, ""); ok {
			n.Locations = []sarifLocation{loc}
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	run.Invocations = []sarifInvocation{inv}
	if sarifUsesRoot(run) {
		run.OriginalURIBaseIDs[sarifRoot] = sarifArtifactLocation{URI: "file:///"}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: "2.1.0", Runs: []sarifRun{run}})
}

// sarifResultFor is the result of finding f, of the rule at ruleIndex in
// the driver's rules.
func sarifResultFor(f analyzer.Finding, ruleIndex int) sarifResult {
	res := sarifResult{
		RuleID:    f.Rule,
		RuleIndex: ruleIndex,
		Level:     sarifLevel(f.Severity),
		Message:   sarifText{Text: sarifMessage(strings.TrimSpace(f.Title + ": " + f.Summary))},
		Locations: []sarifLocation{},
	}
	if f.Fingerprint != "" {
		res.PartialFingerprints = map[string]string{sarifFingerprintKey: f.Fingerprint}
	}
	for _, e := range f.Evidence {
		loc, ok := sarifLoc(e.Pos, e.Note)
		if !ok {
			continue
		}
		if len(res.Locations) == 0 {
			res.Locations = append(res.Locations, loc)
			continue
		}
		id := len(res.RelatedLocations) + 1
		loc.ID = &id
		res.RelatedLocations = append(res.RelatedLocations, loc)
	}
	props := map[string]any{}
	if f.Cause != "" {
		props["cause"] = f.Cause
	}
	if f.Fix != "" {
		props["fix"] = f.Fix
	}
	if f.Certainty != "" {
		props["certainty"] = string(f.Certainty)
	}
	for name, l := range map[string][]string{"supports": f.Supports, "contradicts": f.Contradicts, "alternatives": f.Alternatives} {
		if len(l) > 0 {
			props[name] = l
		}
	}
	if f.Decide != "" {
		props["decide"] = f.Decide
	}
	if f.ExplainedBy != "" {
		props["explained_by"] = f.ExplainedBy
	}
	if len(f.Facts) > 0 {
		props["facts"] = f.Facts
	}
	if len(f.Sources) > 0 {
		props["sources"] = kindNames(f.Sources)
	}
	if len(props) > 0 {
		res.Properties = props
	}
	return res
}
