package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// The schemas the machine outputs are checked against, and the URLs they
// are registered under (their $id).
const (
	reportSchemaFile = "docs/report.schema.json"
	reportSchemaURL  = "https://raw.githubusercontent.com/netmortem/netmortem/main/docs/report.schema.json"
	sarifSchemaFile  = "report/testdata/sarif-schema-2.1.0.json"
	sarifSchemaURL   = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

// archiveReport has evidence inside archives, at absolute paths, with
// colons, with a "!" that is not an archive's, a position that is only an
// object, and warnings without a position.
func archiveReport() *report.Report {
	r := fixedReport()
	r.Findings = append(r.Findings, analyzer.Finding{
		Rule: "stale-dnat-target", Severity: analyzer.Warning, Certainty: analyzer.Likely, Title: "t", Summary: "s",
		Fingerprint: "0123abcd", Subject: map[string]string{"object": "Service ns/web"},
		Evidence: []analyzer.Evidence{
			{Pos: model.Pos{File: "b.tar.gz!node1/sysctl.txt", Line: 3, Col: 2}},
			{Pos: model.Pos{File: "/tmp/x.zip!inner.TGZ!ipt.txt", Line: 1}},
			{Pos: model.Pos{File: "wow!/a:b.txt", Line: 9}},
			{Pos: model.Pos{Object: "Service ns/web", Path: "spec.ports[0]"}},
		},
	})
	r.Warnings = append(r.Warnings, report.Warning{Position: "-", Message: "no position"})
	return r
}

func TestReportSchema(t *testing.T) {
	schema := testutil.Schema(t, reportSchemaFile, reportSchemaURL)
	for name, r := range map[string]*report.Report{"fixed": fixedReport(), "archive": archiveReport(), "hostile": hostileReport(),
		"suppressed": suppressedReport(), "collected": collectedReport(), "empty": {}} {
		for _, format := range []string{"json", "yaml"} {
			var buf bytes.Buffer
			if err := report.Write(&buf, format, r); err != nil {
				t.Fatal(err)
			}
			doc := buf.Bytes()
			if format == "yaml" {
				doc = yamlToJSON(t, doc)
			}
			if err := testutil.Validate(schema, doc); err != nil {
				t.Errorf("%s -o %s does not follow %s: %v", name, format, reportSchemaFile, err)
			}
		}
	}
	// The schema is strict: each change below must make the document fail.
	var buf bytes.Buffer
	if err := report.Write(&buf, "json", fixedReport()); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name   string
		mutate func(doc map[string]any)
	}{
		{"unknown top-level field", func(doc map[string]any) { doc["extra"] = 1 }},
		{"unknown finding field", func(doc map[string]any) { finding(doc)["confidence"] = 0.9 }},
		{"unknown evidence field", func(doc map[string]any) { evidence(doc)["offset"] = 12 }},
		{"unknown tool field", func(doc map[string]any) { doc["tool"].(map[string]any)["arch"] = "amd64" }},
		{"severity not a word", func(doc map[string]any) { finding(doc)["severity"] = 2 }},
		{"unknown severity", func(doc map[string]any) { finding(doc)["severity"] = "fatal" }},
		{"line as text", func(doc map[string]any) { evidence(doc)["frame"] = "812" }},
		{"subject value not text", func(doc map[string]any) { finding(doc)["subject"] = map[string]any{"port": 80} }},
		{"findings missing", func(doc map[string]any) { delete(doc, "findings") }},
		{"schema_version missing", func(doc map[string]any) { delete(doc, "schema_version") }},
		{"other schema_version", func(doc map[string]any) { doc["schema_version"] = "2" }},
		{"inputs null", func(doc map[string]any) { doc["inputs"] = nil }},
		{"suppressed_count missing", func(doc map[string]any) { delete(doc, "suppressed_count") }},
		{"suppressed without why", func(doc map[string]any) { doc["suppressed"] = []any{finding(doc)} }},
		{"suppressed_fingerprints not strings", func(doc map[string]any) { doc["suppressed_fingerprints"] = []any{1} }},
		{"suppressed_fingerprints repeated", func(doc map[string]any) { doc["suppressed_fingerprints"] = []any{"a", "a"} }},
		{"verdict missing", func(doc map[string]any) { delete(doc, "verdict") }},
		{"unknown verdict field", func(doc map[string]any) { doc["verdict"].(map[string]any)["summary"] = "x" }},
		{"unknown verdict link", func(doc map[string]any) { verdictLink(doc)["link"] = "same-node" }},
		{"verdict cause without a line", func(doc map[string]any) {
			delete(doc["verdict"].(map[string]any)["causes"].([]any)[0].(map[string]any), "line")
		}},
		{"next_evidence missing", func(doc map[string]any) { delete(doc, "next_evidence") }},
		{"unknown next_evidence field", func(doc map[string]any) { nextEvidence(doc)["priority"] = 1 }},
		{"next_evidence scope unknown", func(doc map[string]any) { nextEvidence(doc)["scope"] = "pod" }},
		{"next_evidence without shell", func(doc map[string]any) { delete(nextEvidence(doc), "shell") }},
		{"next_evidence nodes repeated", func(doc map[string]any) { nextEvidence(doc)["nodes"] = []any{"n1", "n1"} }},
		{"unknown suppressed field", func(doc map[string]any) {
			f := finding(doc)
			f["suppressed_by"], f["suppressed_reason"], f["suppressed_until"] = ".netmortem.yaml:3", "known", "2027-01-01"
			doc["suppressed"] = []any{f}
		}},
	} {
		var doc map[string]any
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		m.mutate(doc)
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := testutil.Validate(schema, b); err == nil {
			t.Errorf("%s: the schema accepts the document", m.name)
		}
	}
}

// TestReportSchemaCollected holds that the schema checks what the
// collector did with a command, strictly.
func TestReportSchemaCollected(t *testing.T) {
	schema := testutil.Schema(t, reportSchemaFile, reportSchemaURL)
	var buf bytes.Buffer
	if err := report.Write(&buf, "json", collectedReport()); err != nil {
		t.Fatal(err)
	}
	collected := func(doc map[string]any) map[string]any {
		return nextEvidence(doc)["collected"].([]any)[0].(map[string]any)
	}
	for _, m := range []struct {
		name   string
		mutate func(doc map[string]any)
	}{
		{"unknown outcome", func(doc map[string]any) { collected(doc)["outcome"] = "lost" }},
		{"unknown collected field", func(doc map[string]any) { collected(doc)["file"] = "x.txt" }},
		{"collected without node", func(doc map[string]any) { delete(collected(doc), "node") }},
		{"collected empty", func(doc map[string]any) { nextEvidence(doc)["collected"] = []any{} }},
	} {
		var doc map[string]any
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		m.mutate(doc)
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := testutil.Validate(schema, b); err == nil {
			t.Errorf("%s: the schema accepts the document", m.name)
		}
	}
}

// collectedReport asks for commands the collector ran, skipped or failed
// on some nodes.
func collectedReport() *report.Report {
	snap, res := collectedCase()
	r := report.New(snap, nil, res)
	r.NextEvidence = report.NextEvidenceFor(snap, nil, res)
	return r
}

// suppressedReport lists a suppressed finding, as --show-suppressed does.
func suppressedReport() *report.Report {
	r := fixedReport()
	sup := analyzer.Suppressed{Finding: r.Findings[0], By: ".netmortem.yaml:3", Reason: "known, tracked in OPS-12"}
	r.Findings = r.Findings[1:]
	r.SetSuppressed([]analyzer.Suppressed{sup}, true)
	return r
}

func verdictLink(doc map[string]any) map[string]any {
	c := doc["verdict"].(map[string]any)["causes"].([]any)[0].(map[string]any)
	return c["related"].([]any)[0].(map[string]any)
}

func nextEvidence(doc map[string]any) map[string]any {
	return doc["next_evidence"].([]any)[0].(map[string]any)
}

func finding(doc map[string]any) map[string]any {
	return doc["findings"].([]any)[0].(map[string]any)
}

func evidence(doc map[string]any) map[string]any {
	return finding(doc)["evidence"].([]any)[0].(map[string]any)
}

func TestSARIFSchema(t *testing.T) {
	schema := testutil.Schema(t, sarifSchemaFile, sarifSchemaURL)
	for name, r := range map[string]*report.Report{"fixed": fixedReport(), "archive": archiveReport(), "tricky": trickyReport(), "hostile": hostileReport(),
		"suppressed": suppressedReport(), "empty": {}} {
		var buf bytes.Buffer
		if err := report.Write(&buf, "sarif", r); err != nil {
			t.Fatal(err)
		}
		if err := testutil.Validate(schema, buf.Bytes()); err != nil {
			t.Errorf("%s: SARIF does not follow the SARIF 2.1.0 schema: %v", name, err)
		}
	}
	// The schema is the real one: documents it forbids fail.
	var buf bytes.Buffer
	if err := report.Write(&buf, "sarif", fixedReport()); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][2]string{
		"unknown level":          {`"level": "error"`, `"level": "fatal"`},
		"unknown result field":   {`"ruleIndex": 0,`, `"ruleIndex": 0, "severity": "high",`},
		"wrong version":          {`"version": "2.1.0"`, `"version": "2.2"`},
		"startLine not a number": {`"startLine": 241`, `"startLine": "241"`},
	} {
		doc := strings.Replace(buf.String(), bad[0], bad[1], 1)
		if doc == buf.String() {
			t.Fatalf("%s: %q not in the SARIF", name, bad[0])
		}
		if err := testutil.Validate(schema, []byte(doc)); err == nil {
			t.Errorf("%s: the SARIF schema accepts it", name)
		}
	}
}

// TestSARIFArtifacts checks the artifact locations of archive members,
// absolute paths and names that are not plain URI segments.
func TestSARIFArtifacts(t *testing.T) {
	var buf bytes.Buffer
	if err := report.Write(&buf, "sarif", archiveReport()); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			OriginalURIBaseIDs map[string]json.RawMessage `json:"originalUriBaseIds"`
			Results            []struct {
				Locations        []sarifLoc `json:"locations"`
				RelatedLocations []sarifLoc `json:"relatedLocations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	res := run.Results[2]
	locs := append(res.Locations, res.RelatedLocations...)
	var got []string
	for _, l := range locs {
		if l.PhysicalLocation == nil {
			got = append(got, "-")
			continue
		}
		a := l.PhysicalLocation.ArtifactLocation
		if _, ok := run.OriginalURIBaseIDs[a.URIBaseID]; !ok {
			t.Errorf("%s: uriBaseId %q is not among originalUriBaseIds", a.URI, a.URIBaseID)
		}
		got = append(got, a.URIBaseID+":"+a.URI)
	}
	want := []string{"BUNDLE:b.tar.gz/node1/sysctl.txt", "ROOT:tmp/x.zip/inner.TGZ/ipt.txt", "BUNDLE:wow%21/a%3Ab.txt", "-"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("artifact locations %q, want %q", got, want)
	}
	if l := locs[0].PhysicalLocation.Region; l == nil || l.StartLine != 3 || l.StartColumn != 2 {
		t.Errorf("region %+v, want line 3 column 2", l)
	}
	if obj := locs[3].LogicalLocations; len(obj) != 1 || obj[0].Kind != "object" || obj[0].Name != "Service ns/web" {
		t.Errorf("object position: logical locations %+v", obj)
	}
}

type sarifLoc struct {
	PhysicalLocation *struct {
		ArtifactLocation struct {
			URI       string `json:"uri"`
			URIBaseID string `json:"uriBaseId"`
		} `json:"artifactLocation"`
		Region *struct {
			StartLine   int `json:"startLine"`
			StartColumn int `json:"startColumn"`
		} `json:"region"`
	} `json:"physicalLocation"`
	LogicalLocations []struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
	} `json:"logicalLocations"`
}

// TestSARIFSuppressed checks that --show-suppressed gives SARIF the
// suppressed findings as results with a suppression, which viewers show as
// suppressed, and that without it they are left out.
func TestSARIFSuppressed(t *testing.T) {
	type result struct {
		RuleID       string `json:"ruleId"`
		Suppressions []struct {
			Kind, Status, Justification string
		} `json:"suppressions"`
	}
	var log struct {
		Runs []struct {
			Results []result `json:"results"`
		} `json:"runs"`
	}
	r := suppressedReport()
	var buf bytes.Buffer
	if err := report.Write(&buf, "sarif", r); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	res := log.Runs[0].Results
	if len(res) != len(r.Findings)+1 {
		t.Fatalf("%d results, want the %d findings and the suppressed one", len(res), len(r.Findings))
	}
	last := res[len(res)-1]
	if last.RuleID != r.Suppressed[0].Rule || len(last.Suppressions) != 1 ||
		last.Suppressions[0].Kind != "external" || last.Suppressions[0].Justification != "by .netmortem.yaml:3: known, tracked in OPS-12" {
		t.Errorf("suppressed result = %+v, want rule %s with an external suppression and its justification", last, r.Suppressed[0].Rule)
	}
	for _, x := range res[:len(res)-1] {
		if len(x.Suppressions) != 0 {
			t.Errorf("result of %s is marked suppressed", x.RuleID)
		}
	}
	r.SetSuppressed(r.Suppressed, false)
	buf.Reset()
	if err := report.Write(&buf, "sarif", r); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if n := len(log.Runs[0].Results); n != len(r.Findings) {
		t.Errorf("without --show-suppressed: %d results, want %d", n, len(r.Findings))
	}
}
