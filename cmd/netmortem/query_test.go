package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/results"
)

// queryLines writes a batch's lines to a file: two bundles with
// synack-reset (one also with syn-unanswered) in two weeks, one without a
// time or a finding.
func queryLines(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, l := range queryLineValues() {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "results.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// queryLineValues are the lines of queryLines.
func queryLineValues() []results.Line {
	mon := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	return []results.Line{
		{Bundle: "tickets/a.tar.gz", Status: results.StatusOK, BundleTime: mon.Add(-time.Second), KubernetesVersion: "v1.31.2",
			Findings: []analyzer.Finding{
				{Rule: "synack-reset", Fingerprint: "fp1", Severity: analyzer.Error, Title: "resets, a"},
				{Rule: "syn-unanswered", Fingerprint: "fp2", Severity: analyzer.Warning, Title: "no reply"}}},
		{Bundle: "tickets/b.tar.gz", Status: results.StatusOK, BundleTime: mon, KubernetesVersion: "v1.30.0",
			Findings: []analyzer.Finding{{Rule: "synack-reset", Fingerprint: "fp1", Severity: analyzer.Warning, Title: "resets, b"}}},
		{Bundle: "tickets/c.tar.gz", Status: results.StatusUnreadable, Error: "no input could be read", Findings: []analyzer.Finding{}},
	}
}

func TestQueryOutputs(t *testing.T) {
	file := queryLines(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rules", "-o", "csv"}, "rule,bundles,findings,max_severity,first,last\n" +
			"synack-reset,2,2,error,2026-11-01T23:59:59Z,2026-11-02T00:00:00Z\n" +
			"syn-unanswered,1,1,warning,2026-11-01T23:59:59Z,2026-11-01T23:59:59Z\n"},
		{[]string{"weeks", "-o", "csv"}, "group,bundles,matching,findings\n2026-W44,1,1,2\n2026-W45,1,1,1\nunknown,1,0,0\n"},
		{[]string{"weeks", "-o", "csv", "--rule", "syn-unanswered"}, "group,bundles,matching,findings\n2026-W44,1,1,1\n2026-W45,1,0,0\nunknown,1,0,0\n"},
		{[]string{"versions", "-o", "csv", "--since", "2026-W45"}, "group,bundles,matching,findings\n1.30,1,1,1\n"},
		{[]string{"versions", "-o", "csv", "--until", "2026-11-02"}, "group,bundles,matching,findings\n1.31,1,1,2\n"},
		{[]string{"fingerprints", "-o", "csv"}, "fingerprint,rule,title,bundles\nfp1,synack-reset,\"resets, a\",2\nfp2,syn-unanswered,no reply,1\n"},
		{[]string{"bundles", "-o", "csv", "fp1", "--since", "2026-11-01T23:59:59.5Z"},
			"bundle,rule,severity,title,bundle_time,kubernetes_version\ntickets/b.tar.gz,synack-reset,warning,\"resets, b\",2026-11-02T00:00:00Z,v1.30.0\n"},
		{[]string{"bundles", "-o", "json", "fp2"}, `[
  {
    "bundle": "tickets/a.tar.gz",
    "rule": "syn-unanswered",
    "severity": "warning",
    "title": "no reply",
    "bundle_time": "2026-11-01T23:59:59Z",
    "kubernetes_version": "v1.31.2"
  }
]
`},
		{[]string{"weeks", "-o", "json", "--rule", "synack-reset"}, `[
  {
    "group": "2026-W44",
    "bundles": 1,
    "matching": 1,
    "findings": 1
  },
  {
    "group": "2026-W45",
    "bundles": 1,
    "matching": 1,
    "findings": 1
  },
  {
    "group": "unknown",
    "bundles": 1,
    "matching": 0,
    "findings": 0
  }
]
`},
	} {
		code, stdout, stderr := runCLI(t, append(append([]string{"query"}, tc.args...), file)...)
		if code != exitOK || stderr != "" || stdout != tc.want {
			t.Errorf("query %q: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", tc.args, code, stderr, stdout, tc.want)
		}
	}
	code, stdout, stderr := runCLI(t, "query", "rules", file)
	for _, want := range []string{"│      RULE      │", "MAX SEVERITY", "│ synack-reset   │ 2       │ 2        │ error        │ 2026-11-01 23:59 │ 2026-11-02 00:00 │"} {
		if code != exitOK || !strings.Contains(stdout, want) {
			t.Errorf("query rules: exit %d, stderr %q, table lacks %q:\n%s", code, stderr, want, stdout)
		}
	}
	code, stdout, _ = runCLI(t, "query", "weeks", "--rule", "syn-unanswered", file)
	if code != exitOK || !strings.Contains(stdout, "WITH syn-unanswered") {
		t.Errorf("query weeks --rule: exit %d, the table does not name the rule:\n%s", code, stdout)
	}
}

// A table is fitted to the width of its output ($COLUMNS here).
func TestQueryTableFits(t *testing.T) {
	file := queryLines(t)
	t.Setenv("COLUMNS", "50")
	code, stdout, _ := runCLI(t, "query", "bundles", "fp1", file)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if n := len([]rune(l)); n > 50 {
			t.Errorf("line of %d columns, want at most 50: %q", n, l)
		}
	}
	if !strings.Contains(stdout, "tar.gz") || !strings.Contains(stdout, "v1.30.0") {
		t.Errorf("the fitted table lacks a bundle:\n%s", stdout)
	}
}

// An empty answer is not an error: stderr says so. Bad flags are usage
// errors; results that cannot be read, exit 3.
func TestQueryExitCodes(t *testing.T) {
	file := queryLines(t)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"bundle\":\"a\",\"status\":\"ok\"}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string
		stderrPart string
	}{
		{[]string{"bundles", "-o", "json", "feedfeedfeedfeed", file}, exitOK, "[]\n", "no bundle has the finding feedfeedfeedfeed"},
		{[]string{"bundles", "feedfeedfeedfeed", file}, exitOK, "", "no bundle has the finding feedfeedfeedfeed"},
		{[]string{"rules", "--since", "2030-01-01", "-o", "csv", file}, exitOK, "rule,bundles,findings,max_severity,first,last\n", "no finding from 2030-01-01T00:00:00Z"},
		{[]string{"versions", "--rule", "synack-rest", file}, exitUsage, "", `unknown rule "synack-rest"`},
		{[]string{"rules", "-o", "xml", file}, exitUsage, "", `invalid --output "xml"`},
		{[]string{"rules", "--since", "last week", file}, exitUsage, "", "want a date"},
		{[]string{"rules", "--until", "2027-W53", file}, exitUsage, "", "2027 has no week 53"},
		{[]string{"rules", "--since", "2026-11-02", "--until", "2026-11-01", file}, exitUsage, "", "is not before --until"},
		{[]string{"rules"}, exitUsage, "", "no results to read"},
		{[]string{"rules", "--db", "results.db", file}, exitUsage, "", "--db and FILEs"},
		{[]string{"bundles"}, exitUsage, "", "no FINGERPRINT given"},
		{[]string{"rule", file}, exitUsage, "", `unknown command "rule"`},
		{[]string{"rules", "--nope", file}, exitUsage, "", "unknown flag: --nope"},
		{[]string{"rules", filepath.Join(t.TempDir(), "missing.jsonl")}, exitUnreadable, "", "missing.jsonl: no such file"},
		{[]string{"rules", bad}, exitUnreadable, "", "bad.jsonl:2: not a line of netmortem batch"},
		{[]string{"rules", "--db", file}, exitUnreadable, "", "holds JSON Lines, not a database: give it with --out, as batch wrote it"},
		{[]string{"rules", "--db", "results.db", "--out", file}, exitUsage, "", "--db and FILEs"},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"query"}, tc.args...)...)
		if code != tc.code || stdout != tc.stdout || !strings.Contains(stderr, tc.stderrPart) {
			t.Errorf("query %q: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q",
				tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderrPart)
		}
	}
}

// The query commands complete their flags' values and their files.
func TestQueryCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "query", ""}, "fingerprints"},
		{[]string{"__complete", "query", "rules", "-o", ""}, "csv"},
		{[]string{"__complete", "query", "weeks", "--rule", "synack"}, "synack-reset"},
		{[]string{"__complete", "query", "versions", ""}, "jsonl"},
	} {
		_, stdout, _ := runCLI(t, tc.args...)
		if !strings.Contains(stdout, tc.want) {
			t.Errorf("%q: completions lack %q:\n%s", tc.args, tc.want, stdout)
		}
	}
}

// The examples' fixture holds a line for every incident of
// fixtures/incidents (make query-fixture writes it again).
func TestQueryFixture(t *testing.T) {
	incidents, err := os.ReadDir(fixture("incidents"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []results.GroupCount
	_, stdout, stderr := runCLI(t, "query", "weeks", "-o", "json", fixture("query/incidents.jsonl"))
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("%v; stderr %q", err, stderr)
	}
	n := 0
	for _, r := range rows {
		n += r.Bundles
	}
	if n != len(incidents) {
		t.Errorf("%s holds %d bundles, fixtures/incidents %d: run make query-fixture", fixture("query/incidents.jsonl"), n, len(incidents))
	}
	// --out, as batch writes the file, reads it as the argument does.
	code, viaOut, stderr := runCLI(t, "query", "weeks", "-o", "json", "--out", fixture("query/incidents.jsonl"))
	if code != exitOK || viaOut != stdout {
		t.Errorf("query weeks --out FILE: exit %d, %q, want the argument's %q\n%s", code, viaOut, stdout, stderr)
	}
}

// At 80 columns the rules table keeps each rule's name readable: a name
// of up to 18 characters on one line, a longer one broken after a '-';
// the times wrap between the day and the hour.
func TestQueryRulesTableAt80(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	code, stdout, stderr := runCLI(t, "query", "rules", fixture("query/incidents.jsonl"))
	if code != exitOK {
		t.Fatalf("exit %d; stderr %q", code, stderr)
	}
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line of %d columns, want at most 80: %q", n, l)
		}
	}
	for _, rule := range []string{"syn-unanswered", "connection-skew", "hairpin-drop", "conntrack-drops", "rp-filter-drop"} {
		if !strings.Contains(stdout, "│ "+rule+" ") {
			t.Errorf("rule %s is not whole on a line:\n%s", rule, stdout)
		}
	}
	if !strings.Contains(stdout, "│ service-rule-") || !strings.Contains(stdout, "│ shadowed ") {
		t.Errorf("service-rule-shadowed is not broken after a '-':\n%s", stdout)
	}
	if !strings.Contains(stdout, "│ 2026-11-24 ") || !strings.Contains(stdout, "│ 19:11 ") {
		t.Errorf("times not wrapped between the day and the hour:\n%s", stdout)
	}
}
