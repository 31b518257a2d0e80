package analyzertest

import (
	"strings"
	"testing"
)

// The findings with the captures summarized are held to those with every
// attempt kept: any difference fails, unless the scenario lets summary
// mode be weaker, and then only a weaker finding passes.
func TestCompareModes(t *testing.T) {
	f := func(sev, cert string, ev ...string) wantFinding {
		return wantFinding{Rule: "r", Severity: sev, Certainty: cert, Subject: map[string]string{"address": "10.0.0.1:80"}, Evidence: ev}
	}
	all := want{Findings: []wantFinding{f("warning", "likely", "c.pcap#frame=2 (SYN)")}}
	counted := want{Findings: []wantFinding{f("warning", "likely", "c.pcap (8 attempts counted)")}}
	tests := []struct {
		name   string
		sum    want
		reason string
		fails  string // a part of the one problem expected, "" for none
	}{
		{"same", all, "", ""},
		{"missing", want{Findings: []wantFinding{}}, "", "missing finding 1: r"},
		{"other evidence", counted, "", "evidence[0]"},
		{"weaker allowed", counted, "counts only", ""},
		{"listed yet same", all, "counts only", "remove it"},
		{"more certain", want{Findings: []wantFinding{f("warning", "proven")}}, "counts only", "more certain"},
		{"more severe", want{Findings: []wantFinding{f("error", "likely")}}, "counts only", "more severe"},
		{"other finding", want{Findings: []wantFinding{{Rule: "q", Subject: map[string]string{"x": "y"}}}}, "counts only", "not found"},
	}
	for _, tt := range tests {
		got := compareModes("hit-x", tt.sum, all, tt.reason)
		switch {
		case tt.fails == "" && len(got) > 0:
			t.Errorf("%s: got problems %q, want none", tt.name, got)
		case tt.fails != "" && (len(got) != 1 || !strings.Contains(got[0], tt.fails) || !strings.Contains(got[0], "hit-x")):
			t.Errorf("%s: got problems %q, want one naming hit-x and saying %q", tt.name, got, tt.fails)
		}
	}
}
