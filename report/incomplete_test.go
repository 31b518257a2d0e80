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

// TestIncomplete: a report of an analysis that did not read all it was
// given says so in every format: JSON and YAML list the reasons (and follow
// the schema), SARIF says the run was not successful, with an error
// notification per reason, and table and markdown list them, even without
// findings.
func TestIncomplete(t *testing.T) {
	reasons := []string{"missing.pcap: no such file or directory", "no input could be read"}
	withFindings := fixedReport()
	withFindings.Incomplete = reasons
	empty := &report.Report{Incomplete: reasons, Inputs: []model.Input{{Path: "missing.pcap", Skipped: "no such file or directory"}}}

	schema := testutil.Schema(t, reportSchemaFile, reportSchemaURL)
	sarifSchema := testutil.Schema(t, sarifSchemaFile, sarifSchemaURL)
	for name, r := range map[string]*report.Report{"findings": withFindings, "empty": empty} {
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
			var got struct {
				Incomplete []string `json:"incomplete"`
			}
			if err := json.Unmarshal(doc, &got); err != nil || strings.Join(got.Incomplete, "|") != strings.Join(reasons, "|") {
				t.Errorf("%s -o %s: incomplete %q (%v), want %q", name, format, got.Incomplete, err, reasons)
			}
		}

		var buf bytes.Buffer
		if err := report.Write(&buf, "sarif", r); err != nil {
			t.Fatal(err)
		}
		if err := testutil.Validate(sarifSchema, buf.Bytes()); err != nil {
			t.Errorf("%s: SARIF does not follow the SARIF 2.1.0 schema: %v", name, err)
		}
		var log struct {
			Runs []struct {
				Invocations []struct {
					ExecutionSuccessful bool `json:"executionSuccessful"`
					Notifications       []struct {
						Level   string `json:"level"`
						Message struct {
							Text string `json:"text"`
						} `json:"message"`
					} `json:"toolExecutionNotifications"`
				} `json:"invocations"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
			t.Fatal(err)
		}
		inv := log.Runs[0].Invocations[0]
		var errs []string
		for _, n := range inv.Notifications {
			if n.Level == "error" && strings.HasPrefix(n.Message.Text, "incomplete: ") {
				errs = append(errs, n.Message.Text)
			}
		}
		if inv.ExecutionSuccessful || len(errs) != len(reasons) || !strings.Contains(errs[0], reasons[0]) {
			t.Errorf("%s: SARIF executionSuccessful %v, errors %q; want false and one per reason", name, inv.ExecutionSuccessful, errs)
		}

		for _, format := range []string{"table", "markdown"} {
			var buf bytes.Buffer
			if err := report.Write(&buf, format, r); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, why := range reasons {
				if !strings.Contains(out, why) {
					t.Errorf("%s -o %s lacks %q:\n%s", name, format, why, out)
				}
			}
			if !strings.Contains(out, "incomplete") {
				t.Errorf("%s -o %s does not say the analysis is incomplete:\n%s", name, format, out)
			}
		}
	}

	// Without reasons, nothing is said, and SARIF's run is successful.
	var buf bytes.Buffer
	if err := report.Write(&buf, "table", &report.Report{}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); strings.Contains(out, "incomplete") || !strings.HasPrefix(out, "No findings (0 inputs read") {
		t.Errorf("a complete empty report:\n%s", out)
	}
}

// TestUnreadableCaptureNotRead: a capture whose header could not be read
// is listed as an input, not skipped, but not read either: the count of
// inputs read leaves it out in every format that prints one, so that the
// count agrees with the reason that says it could not be read.
func TestUnreadableCaptureNotRead(t *testing.T) {
	snap := &model.Snapshot{Inputs: []model.Input{
		{Path: "hdr.pcap", Format: "pcap", Kind: model.KindCapture},
		{Path: "sysctl.txt", Format: "sysctl", Kind: model.KindSysctl, Records: 3},
		{Path: "notes.bin", Skipped: "unrecognized content"},
	}}
	r := report.New(snap, nil, analyzer.Result{})
	r.Incomplete = []string{"1 capture could not be read: hdr.pcap"}
	want := map[string]string{
		"table":    "(1 input read, 0 warnings)",
		"markdown": ": 1 input read, 0 warnings.",
		"html":     "1 input read, 1 skipped",
	}
	for format, w := range want {
		var buf bytes.Buffer
		if err := report.Write(&buf, format, r); err != nil {
			t.Fatal(err)
		}
		if out := buf.String(); !strings.Contains(out, w) {
			t.Errorf("-o %s lacks %q:\n%s", format, w, out)
		}
	}
}
