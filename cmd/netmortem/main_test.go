package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/internal/testutil"
)

func fixture(rel string) string { return filepath.Join(testutil.Root(), "fixtures", rel) }

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

var incident = fixture("incidents/ephemeral-nodeport")

func TestAnalyzeJSON(t *testing.T) {
	code, out, stderr := runCLI(t, "analyze", "-o", "json", incident)
	if code != exitFindings {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFindings, stderr)
	}
	var rep struct {
		Findings []struct {
			Rule     string `json:"rule"`
			Severity string `json:"severity"`
			Evidence []struct {
				Pos string `json:"position"`
			} `json:"evidence"`
		} `json:"findings"`
		Inputs []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	var rules []string
	for _, f := range rep.Findings {
		rules = append(rules, f.Rule+"/"+f.Severity)
	}
	slices.Sort(rules)
	if want := []string{"ephemeral-nodeport-overlap/error", "synack-reset/error"}; !slices.Equal(rules, want) {
		t.Errorf("findings %v, want %v", rules, want)
	}
	kinds := map[string]string{}
	for _, in := range rep.Inputs {
		kinds[filepath.Base(in.Path)] = in.Kind
	}
	for file, kind := range map[string]string{"capture.pcap": "pcap", "ipvsadm.txt": "ipvsadm", "services.json": "kubectl",
		"kube-apiserver.yaml": "kubectl", "sysctl.txt": "sysctl", "EXPECTED.md": ""} {
		if got, ok := kinds[file]; !ok || got != kind {
			t.Errorf("input %s read as %q (present %v), want %q", file, got, ok, kind)
		}
	}
	if !strings.Contains(stderr, "read 5 inputs (1 skipped)") {
		t.Errorf("stderr lacks the input summary:\n%s", stderr)
	}
}

func TestAnalyzeFormats(t *testing.T) {
	for _, format := range []string{"table", "text", "json", "yaml", "markdown", "sarif"} {
		t.Run(format, func(t *testing.T) {
			code, out, stderr := runCLI(t, "analyze", "-q", "-o", format, incident)
			if code != exitFindings {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			if stderr != "" {
				t.Errorf("-q printed on stderr:\n%s", stderr)
			}
			for _, want := range []string{"synack-reset", "ephemeral-nodeport-overlap", "capture.pcap", "kube-apiserver.yaml"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s output lacks %q", format, want)
				}
			}
			switch format {
			case "json", "sarif":
				if !json.Valid([]byte(out)) {
					t.Errorf("%s output is not valid JSON", format)
				}
			case "yaml":
				var v any
				if err := yaml.Unmarshal([]byte(out), &v); err != nil {
					t.Errorf("yaml output: %v", err)
				}
			}
		})
	}
}

func TestAnalyzeTableGolden(t *testing.T) {
	code, out, _ := runCLI(t, "analyze", "-q", "-o", "text", incident)
	if code != exitFindings {
		t.Fatalf("exit %d", code)
	}
	out = strings.ReplaceAll(out, testutil.Root()+"/", "")
	testutil.Golden(t, "testdata/analyze-ephemeral-nodeport.txt", []byte(out))
}

func TestExitCodes(t *testing.T) {
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("nothing netmortem reads\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"analyze", "-q", incident}, exitFindings},
		{[]string{"analyze", "-q", "--fail-on", "error", incident}, exitFindings},
		{[]string{"analyze", "-q", fixture("incidents/ephemeral-nodeport-control")}, exitOK},
		{[]string{"analyze", "-q", "--fail-on", "info", fixture("incidents/ephemeral-nodeport-control")}, exitOK},
		{[]string{"analyze", "-q", "--disable", "synack-reset,ephemeral-nodeport-overlap", incident}, exitOK},
		{[]string{"analyze"}, exitUsage},
		{[]string{"analyze", "--fail-on", "fatal", incident}, exitUsage},
		{[]string{"analyze", "-o", "html", incident}, exitUsage},
		{[]string{"analyze", "--enable", "no-such-rule", incident}, exitUsage},
		{[]string{"analyze", "-q", filepath.Join(empty, "missing")}, exitUnreadable},
		{[]string{"analyze", "-q", empty}, exitUnreadable},
		{[]string{"frobnicate"}, exitUsage},
		{[]string{}, exitUsage},
		{[]string{"rules"}, exitOK},
		{[]string{"explain", "synack-reset"}, exitOK},
		{[]string{"explain", "no-such-rule"}, exitUsage},
		{[]string{"version"}, exitOK},
		{[]string{"flows", "-q", fixture("captures/handshakes.pcap")}, exitOK},
		{[]string{"flows"}, exitUsage},
		{[]string{"flows", "--state", "nonsense", fixture("captures/handshakes.pcap")}, exitUsage},
	} {
		if code, _, stderr := runCLI(t, c.args...); code != c.code {
			t.Errorf("netmortem %s: exit %d, want %d; stderr:\n%s", strings.Join(c.args, " "), code, c.code, stderr)
		}
	}
}

func TestFlows(t *testing.T) {
	code, out, stderr := runCLI(t, "flows", "-o", "json", incident)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var tab struct {
		Summary  map[string]int `json:"summary"`
		Attempts []struct {
			Client  string `json:"client"`
			Outcome string `json:"outcome"`
		} `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatal(err)
	}
	// The counts tshark gives for this capture (fixtures/tshark-truth).
	for k, v := range map[string]int{"tcp_streams": 8, "established": 6, "synack_client_rst": 2, "syn_retx": 4} {
		if tab.Summary[k] != v {
			t.Errorf("summary %s = %d, want %d", k, tab.Summary[k], v)
		}
	}
	code, out, _ = runCLI(t, "flows", "-o", "csv", "--state", "RSTO", incident)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0][0] != "where" {
		t.Fatalf("csv rows %v, want a header and the 2 reset attempts", rows)
	}
	for _, r := range rows[1:] {
		if r[4] != "synack_client_rst" || !(strings.HasSuffix(r[2], ":36704") || strings.HasSuffix(r[2], ":32080")) {
			t.Errorf("row %v", r)
		}
	}
}
