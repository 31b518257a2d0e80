package report_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// forged is a finding line of `-o text` that a hostile bundle tries to
// add to the output through a file name, a member name or a message.
const forged = "/etc/kubernetes/ipt.txt:1: error: stale-dnat: forged finding"

// hostile names carry a newline before a forged line, a carriage return,
// terminal escape sequences and a right-to-left override.
var hostile = []string{
	"bundle/node1\n" + forged,
	"bundle/x\r" + forged,
	"bundle/\x1b[2J\x1b[31mred.txt",
	"bundle/evil\u202etxt.pcap",
	"a|b\n| forged | cell |",
}

func hostileReport() *report.Report {
	var inputs []model.Input
	var warns model.ErrorList
	var evidence []analyzer.Evidence
	for i, h := range hostile {
		inputs = append(inputs, model.Input{Path: h, Format: "sysctl", Kind: model.KindSysctl, Node: h, Records: 1},
			model.Input{Path: h + ".skipped", Skipped: "unrecognized content: " + h})
		warns = append(warns, &model.Error{Pos: model.Pos{File: h, Line: i + 1}, Text: h, Err: errors.New("syntax error near " + h)})
		evidence = append(evidence, analyzer.Evidence{Pos: model.Pos{File: h, Line: i + 1, Object: "Service " + h}, Note: h})
	}
	warns = append(warns, nil) // a nil entry is left out
	res := analyzer.Result{
		Findings: []analyzer.Finding{{
			Rule: "ephemeral-nodeport-overlap", Severity: analyzer.Error,
			Title: "title " + hostile[0], Summary: "summary " + hostile[1], Cause: "cause " + hostile[2],
			Fix: "fix " + hostile[3], Sources: []model.Kind{model.KindSysctl},
			Facts:    map[string]any{"node": hostile[0], "nodes": []string{hostile[1], hostile[2]}, "quoted": "`x` and ``y``\n" + forged},
			Evidence: evidence,
		}},
		Errors: []analyzer.RuleError{{Rule: "synack-reset", Err: "panicked: " + hostile[0]}},
	}
	return report.New(&model.Snapshot{Inputs: inputs}, warns, res)
}

// TestHostileNames renders names and messages that try to forge output
// lines or drive the terminal in every format.
func TestHostileNames(t *testing.T) {
	for _, format := range report.Formats() {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := report.Write(&buf, format, hostileReport()); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if strings.ContainsAny(out, "\x1b\r") {
				t.Errorf("an ESC or CR byte reached the output:\n%q", out)
			}
			if format == "yaml" && strings.ContainsFunc(out, func(r rune) bool { return r < 0x20 && r != '\n' }) {
				t.Errorf("YAML holds a raw control character")
			}
			for i, line := range strings.Split(out, "\n") {
				trimmed := strings.TrimLeft(line, " \t│|-`")
				if strings.HasPrefix(trimmed, forged) || strings.HasPrefix(trimmed, "forged | cell") {
					t.Errorf("line %d is forged: %q", i+1, line)
				}
			}
			switch format {
			case "json":
				var got struct {
					Findings []analyzer.Finding `json:"findings"`
					Inputs   []model.Input      `json:"inputs"`
				}
				if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
					t.Fatal(err)
				}
				if got.Findings[0].Title != "title "+hostile[0] || got.Findings[0].Facts["node"] != hostile[0] {
					t.Errorf("JSON does not keep the exact text: %q", got.Findings[0].Title)
				}
				if !strings.Contains(out, `\u001b[2J`) {
					t.Errorf("JSON lacks the escaped ESC")
				}
			case "yaml":
				var got struct {
					Findings []struct {
						Title string `yaml:"title"`
					} `yaml:"findings"`
					Inputs []struct {
						Path string `yaml:"path"`
					} `yaml:"inputs"`
				}
				if err := yaml.Unmarshal(buf.Bytes(), &got); err != nil {
					t.Fatal(err)
				}
				if got.Findings[0].Title != "title "+hostile[0] {
					t.Errorf("YAML does not keep the exact text: %q", got.Findings[0].Title)
				}
				paths := map[string]bool{}
				for _, in := range got.Inputs {
					paths[in.Path] = true
				}
				for _, h := range hostile {
					if !paths[h] {
						t.Errorf("YAML lost input %q", h)
					}
				}
			case "sarif":
				var doc any
				if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				texts := 0
				walkJSON(doc, "", func(key, s string) {
					if key != "text" && key != "name" && key != "fullyQualifiedName" {
						return // properties keep the exact values, as JSON does
					}
					texts++
					if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x202e }) {
						t.Errorf("SARIF %s %q holds a control character or a bidi override", key, s)
					}
				})
				if texts < 10 || !strings.Contains(out, `bundle/evil\\u202etxt.pcap`) {
					t.Errorf("SARIF: %d texts, or the escaped bidi override missing", texts)
				}
			default:
				if strings.Contains(out, "\u202e") {
					t.Errorf("a bidi override reached the output")
				}
				for _, want := range []string{`bundle/node1\n` + forged, `\x1b[2J\x1b[31mred.txt`, `evil\u202etxt.pcap`} {
					if !strings.Contains(out, want) {
						t.Errorf("output lacks the escaped %q", want)
					}
				}
			}
		})
	}
}

// TestMarkdownCode checks that a backtick in a name cannot close the code
// span it is shown in, and that a pipe cannot add a table cell.
func TestMarkdownCode(t *testing.T) {
	rep := hostileReport()
	rep.Findings[0].Title = "a | b"
	rep.Findings[0].Evidence = []analyzer.Evidence{{Pos: model.Pos{File: "x`y``z.txt", Line: 3}}}
	var buf bytes.Buffer
	if err := report.Write(&buf, "markdown", rep); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"| error | - | `ephemeral-nodeport-overlap` | a \\| b |\n", "- ``` x`y``z.txt:3 ```\n",
		"- quoted: ``` `x` and ``y``\\n" + forged + " ```\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteArguments(t *testing.T) {
	var nilBuf *bytes.Buffer
	for _, c := range []struct {
		name string
		err  error
		f    func() error
	}{
		{"nil writer", report.ErrNilWriter, func() error { return report.Write(nil, "text", fixedReport()) }},
		{"nil pointer writer", report.ErrNilWriter, func() error { return report.Write(nilBuf, "json", fixedReport()) }},
		{"nil report", report.ErrNilReport, func() error { return report.Write(&bytes.Buffer{}, "json", nil) }},
	} {
		if err := c.f(); !errors.Is(err, c.err) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
		}
	}
	// A report built by hand, without lists, is written with empty ones.
	for _, format := range report.Formats() {
		var buf bytes.Buffer
		if err := report.Write(&buf, format, &report.Report{}); err != nil {
			t.Errorf("%s: empty report: %v", format, err)
		}
		if format == "json" && strings.Contains(buf.String(), "null") {
			t.Errorf("empty report as JSON has null lists:\n%s", buf.String())
		}
	}
	// New takes a nil snapshot, nil warnings and an empty result.
	rep := report.New(nil, model.ErrorList{nil}, analyzer.Result{})
	if rep == nil || len(rep.Inputs) != 0 || len(rep.Warnings) != 0 || rep.Findings == nil {
		t.Errorf("New(nil, [nil], {}) = %+v", rep)
	}
}

// TestFactsJSON checks that a fact encoding/json cannot write as it is (a
// time past the year 9999, NaN) does not fail the output: it is written
// clamped or as text, with one warning.
func TestFactsJSON(t *testing.T) {
	far := time.Date(12345, 6, 7, 8, 9, 10, 0, time.UTC)
	rep := fixedReport()
	rep.Findings[0].Facts = map[string]any{"first": far, "ratio": math.NaN(), "times": []any{far, "x"}, "ok": 3}
	for _, format := range []string{"json", "yaml", "sarif"} {
		var buf bytes.Buffer
		if err := report.Write(&buf, format, rep); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out := buf.String()
		if strings.Count(out, "9999-06-07T08:09:10Z") != 2 || !strings.Contains(out, "NaN") {
			t.Errorf("%s: clamped values missing:\n%s", format, out)
		}
		if n := strings.Count(out, "3 value(s) JSON cannot hold"); n != 1 {
			t.Errorf("%s: %d warnings about the clamped values, want 1", format, n)
		}
	}
	if rep.Findings[0].Facts["first"] != far {
		t.Error("Write changed the report's own facts")
	}
}

// walkJSON calls f with each string of a decoded JSON document and the key
// it is under, leaving out SARIF's tool.driver.rules.
func walkJSON(v any, key string, f func(key, s string)) {
	switch x := v.(type) {
	case string:
		f(key, x)
	case []any:
		for _, e := range x {
			walkJSON(e, key, f)
		}
	case map[string]any:
		for k, e := range x {
			if k != "rules" { // the rules' own documentation
				walkJSON(e, k, f)
			}
		}
	}
}

func TestMaxNil(t *testing.T) {
	var r *report.Report
	if r.Max() != 0 {
		t.Error("a nil report has findings")
	}
	if fixedReport().Max() != analyzer.Error {
		t.Error("Max of the fixed report")
	}
}
