package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/netmortem/netmortem/internal/testutil"
)

// The schemas of the JSON and SARIF outputs, as report's tests register them.
const (
	reportSchemaURL = "https://raw.githubusercontent.com/netmortem/netmortem/main/docs/report.schema.json"
	sarifSchemaURL  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

// problemMatcher is a typical CI problem matcher for compiler-style lines.
var problemMatcher = regexp.MustCompile(`^([^\s].*?):(\d+):(\d+):\s+(error|warning|info):\s+([\w.-]+):\s+(.*)$`)

func TestSeveralOutputs(t *testing.T) {
	dir := t.TempDir()
	jsonPath, sarifPath := filepath.Join(dir, "report.json"), filepath.Join(dir, "report.sarif")
	code, out, stderr := runCLI(t, "analyze", "-q", "-o", "table", "-o", "json="+jsonPath, "--output", "sarif="+sarifPath, incident)
	if code != exitFindings || stderr != "" {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFindings, stderr)
	}
	if !strings.Contains(out, "Findings (") || !strings.Contains(out, "synack-reset") {
		t.Errorf("standard output is not the table:\n%s", out)
	}
	// The file holds what -o json prints.
	_, alone, _ := runCLI(t, "analyze", "-q", "-o", "json", incident)
	if b, err := os.ReadFile(jsonPath); err != nil || string(b) != alone {
		t.Errorf("%s (%v) differs from what -o json prints", jsonPath, err)
	}
	b, err := os.ReadFile(sarifPath)
	if err != nil || !json.Valid(b) || !strings.Contains(string(b), `"version": "2.1.0"`) {
		t.Errorf("%s is not SARIF (%v)", sarifPath, err)
	}
	// The modes of the files: TestOutputUmask and TestOutputKeepsMode.
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files in the output directory, want the 2 reports: %v", len(entries), entries)
	}

	// Files only: nothing on standard output.
	code, out, _ = runCLI(t, "analyze", "-q", "-o", "json="+jsonPath, incident)
	if code != exitFindings || out != "" {
		t.Errorf("-o json=FILE alone: exit %d, standard output %q", code, out)
	}
}

func TestOutputErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-o", "xml=r.xml"}, exitUsage, `-o "xml=r.xml": unknown output format "xml"`},
		{[]string{"-o", "pdf"}, exitUsage, `-o "pdf": unknown output format "pdf"`},
		{[]string{"-o", "json="}, exitUsage, `-o "json=": no file after "json="`},
		{[]string{"-o", "table", "-o", "json"}, exitUsage, `-o "table" and "json": at most one output goes to standard output`},
		{[]string{"-o", "json=" + filepath.Join(dir, "r"), "-o", "sarif=" + filepath.Join(dir, "r")}, exitUsage, "two outputs write the same file"},
		{[]string{"-o", "json=" + filepath.Join(dir, "missing", "r.json")}, exitUnreadable, "-o json=" + filepath.Join(dir, "missing", "r.json") + ": create "},
		// A directory cannot be replaced by a report.
		{[]string{"-o", "table", "-o", "sarif=" + dir}, exitUnreadable, "-o sarif=" + dir + ": write " + dir},
	} {
		code, _, stderr := runCLI(t, append(append([]string{"analyze", "-q"}, c.args...), incident)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, want %d; stderr lacks %q:\n%s", c.args, code, c.code, c.want, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed outputs left files behind: %v", entries)
	}
}

// TestIncidentOutputs runs analyze on every committed incident bundle with
// text on standard output and JSON and SARIF files: the JSON follows
// docs/report.schema.json, the SARIF the SARIF 2.1.0 schema, and each line
// of the text that is not indented is read by a problem matcher.
func TestIncidentOutputs(t *testing.T) {
	reportSchema := testutil.Schema(t, "docs/report.schema.json", reportSchemaURL)
	sarifSchema := testutil.Schema(t, "report/testdata/sarif-schema-2.1.0.json", sarifSchemaURL)
	bundles, err := filepath.Glob(fixture("incidents/*"))
	if err != nil || len(bundles) < 40 {
		t.Fatalf("%d incident bundles (%v)", len(bundles), err)
	}
	all := len(bundles)
	bundles = sampled(t, bundles)
	out := t.TempDir()
	findings := 0
	for _, b := range bundles {
		name := filepath.Base(b)
		jsonPath, sarifPath := filepath.Join(out, name+".json"), filepath.Join(out, name+".sarif")
		code, text, stderr := runCLI(t, "analyze", "-q", "--fail-on", "error", "-o", "text", "-o", "json="+jsonPath, "-o", "sarif="+sarifPath, b)
		if code != exitOK && code != exitFindings {
			t.Errorf("%s: exit %d; stderr:\n%s", name, code, stderr)
			continue
		}
		for path, schema := range map[string]*jsonschema.Schema{jsonPath: reportSchema, sarifPath: sarifSchema} {
			doc, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := testutil.Validate(schema, doc); err != nil {
				t.Errorf("%s: %s does not follow its schema: %v", name, filepath.Base(path), err)
			}
		}
		for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if line == "" || strings.HasPrefix(line, "\t") {
				continue
			}
			if !problemMatcher.MatchString(line) {
				t.Errorf("%s: text line %d is not read by a problem matcher: %q", name, i+1, line)
			}
			findings++
		}
	}
	t.Logf("%d bundles, %d findings", len(bundles), findings)
	if want := atLeast(20, len(bundles), all); findings < want {
		t.Errorf("%d findings in the incident bundles, want at least %d: the bundles were not analyzed", findings, want)
	}
}
