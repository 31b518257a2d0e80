package report_test

import (
	"bytes"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/report"
)

// A finding's candidates follow the report's schema in JSON and YAML.
func TestCandidatesSchema(t *testing.T) {
	schema := testutil.Schema(t, reportSchemaFile, reportSchemaURL)
	r := fixedReport()
	r.Findings[1].Certainty = analyzer.Unknown
	r.Findings[1].Candidates = []analyzer.Candidate{
		{Rule: "rp-filter-drop", Standing: analyzer.CandidateFound, Why: "its own finding", Decide: "sysctl -a"},
		{Rule: "filter-forward-drop", Standing: analyzer.CandidateOpen, Why: "the bundle has no netfilter"},
		{Rule: "mtu-blackhole", Standing: analyzer.CandidateWeakened, Why: "read and found nothing", Decide: "ip -d link"},
	}
	for _, format := range []string{"json", "yaml"} {
		var buf bytes.Buffer
		if err := report.Write(&buf, format, r); err != nil {
			t.Fatal(err)
		}
		doc := buf.Bytes()
		if format == "yaml" {
			doc = yamlToJSON(t, doc)
		}
		if !bytes.Contains(doc, []byte(`"standing"`)) {
			t.Fatalf("-o %s carries no candidates", format)
		}
		if err := testutil.Validate(schema, doc); err != nil {
			t.Errorf("-o %s does not follow %s: %v", format, reportSchemaFile, err)
		}
	}
}
