package report

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

func suppressedReport(show bool) *Report {
	kept := analyzer.Finding{Rule: "stale-dnat", Severity: analyzer.Error, Title: "kept one", Fingerprint: "00000000000000aa",
		Evidence: []analyzer.Evidence{{Pos: model.Pos{File: "a.txt", Line: 3}}}}
	gone := analyzer.Finding{Rule: "synack-reset", Severity: analyzer.Warning, Title: "gone one", Fingerprint: "00000000000000bb",
		Evidence: []analyzer.Evidence{{Pos: model.Pos{File: "b.pcap", Frame: 9}}}}
	base := analyzer.Finding{Rule: "mtu-blackhole", Severity: analyzer.Info, Title: "old one", Fingerprint: "00000000000000cc"}
	r := New(nil, nil, analyzer.Result{Findings: []analyzer.Finding{kept}})
	r.SetSuppressed([]analyzer.Suppressed{
		{Finding: gone, By: ".netmortem.yaml:4", Reason: "known, fixed next week"},
		{Finding: base, By: "baseline", Reason: "in the baseline old.json"},
	}, show)
	return r
}

// Every format counts the suppressed findings; they are listed, with why,
// only when asked for.
func TestSuppressedSummary(t *testing.T) {
	for _, show := range []bool{false, true} {
		r := suppressedReport(show)
		for _, format := range []string{"text", "table", "markdown"} {
			var b bytes.Buffer
			if err := Write(&b, format, r); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if !strings.Contains(out, "kept one") {
				t.Errorf("%s: the kept finding is missing:\n%s", format, out)
			}
			if show {
				for _, want := range []string{"gone one", "by .netmortem.yaml:4: known, fixed next week", "old one", "baseline: in the baseline old.json", "2 findings suppressed"} {
					if !strings.Contains(out, want) {
						t.Errorf("%s, shown: no %q in\n%s", format, want, out)
					}
				}
				if strings.Contains(out, "--show-suppressed") {
					t.Errorf("%s, shown: still points at --show-suppressed:\n%s", format, out)
				}
			} else {
				if strings.Contains(out, "gone one") || !strings.Contains(out, "2 findings suppressed (--show-suppressed lists them)") {
					t.Errorf("%s, hidden:\n%s", format, out)
				}
			}
		}
		if show {
			// In the text format a suppressed finding has "suppressed"
			// where a finding has its severity: a problem matcher for
			// error|warning|info passes over it.
			var b bytes.Buffer
			if err := Write(&b, "text", r); err != nil {
				t.Fatal(err)
			}
			line := regexp.MustCompile(`(?m)^[^\s:]+:\d+:\d+: suppressed: [a-z-]+: gone one .*\(warning, by \.netmortem\.yaml:4: known, fixed next week\)$`)
			if !line.MatchString(b.String()) {
				t.Errorf("text: no suppressed line for \"gone one\" in\n%s", b.String())
			}
		}
		var y bytes.Buffer
		if err := Write(&y, "yaml", r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(y.String(), "suppressed_count: 2") || show != strings.Contains(y.String(), "suppressed_by: .netmortem.yaml:4") {
			t.Errorf("yaml, show %v:\n%s", show, y.String())
		}
		var b bytes.Buffer
		if err := Write(&b, "json", r); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Findings        []analyzer.Finding    `json:"findings"`
			SuppressedCount int                   `json:"suppressed_count"`
			Suppressed      []analyzer.Suppressed `json:"suppressed"`
		}
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if got.SuppressedCount != 2 || len(got.Findings) != 1 {
			t.Errorf("json: count %d, %d findings", got.SuppressedCount, len(got.Findings))
		}
		switch {
		case show && (len(got.Suppressed) != 2 || got.Suppressed[0].By != ".netmortem.yaml:4" || got.Suppressed[0].Fingerprint != "00000000000000bb" ||
			got.Suppressed[1].Reason != "in the baseline old.json"):
			t.Errorf("json, shown: %+v", got.Suppressed)
		case !show && strings.Contains(b.String(), `"suppressed":`):
			t.Errorf("json, hidden: lists them:\n%s", b.String())
		}
	}
	// Nothing suppressed: no line about it.
	r := New(nil, nil, analyzer.Result{})
	var b bytes.Buffer
	if err := Write(&b, "text", r); err != nil || strings.Contains(b.String(), "suppressed") {
		t.Errorf("nothing suppressed: %q, %v", b.String(), err)
	}
}

// A suppressed finding's fact JSON cannot hold is written as text, as a
// finding's is.
func TestSuppressedNaN(t *testing.T) {
	r := New(nil, nil, analyzer.Result{})
	r.SetSuppressed([]analyzer.Suppressed{{Finding: analyzer.Finding{Rule: "r", Severity: analyzer.Info,
		Facts: map[string]any{"ratio": math.NaN()}}, By: "baseline", Reason: "x"}}, true)
	var b bytes.Buffer
	if err := Write(&b, "json", r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"ratio": "NaN"`) || !strings.Contains(b.String(), "cannot hold") {
		t.Errorf("json:\n%s", b.String())
	}
	if r.Suppressed[0].Facts["ratio"] == "NaN" {
		t.Error("the report itself was changed")
	}
}

// The JSON report names the fingerprints of the suppressed findings
// whether or not it lists them, sorted and each once; none when nothing
// was suppressed.
func TestSuppressedFingerprints(t *testing.T) {
	a := analyzer.Suppressed{Finding: analyzer.Finding{Rule: "x", Severity: analyzer.Info, Fingerprint: "00000000000000bb"}, By: "c.yaml:3"}
	b := analyzer.Suppressed{Finding: analyzer.Finding{Rule: "y", Severity: analyzer.Info, Fingerprint: "00000000000000aa"}, By: "baseline"}
	for _, show := range []bool{false, true} {
		r := New(nil, nil, analyzer.Result{})
		r.SetSuppressed([]analyzer.Suppressed{a, b, a}, show)
		var buf bytes.Buffer
		if err := writeJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		var got struct {
			SuppressedFingerprints []string `json:"suppressed_fingerprints"`
		}
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got.SuppressedFingerprints, ",") != "00000000000000aa,00000000000000bb" {
			t.Errorf("show %v: suppressed_fingerprints %v", show, got.SuppressedFingerprints)
		}
	}
	r := New(nil, nil, analyzer.Result{})
	r.SetSuppressed(nil, false)
	var buf bytes.Buffer
	if err := writeJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "suppressed_fingerprints") {
		t.Errorf("nothing suppressed, yet:\n%s", buf.String())
	}
}
