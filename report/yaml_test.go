package report_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// jsonKeys lists the object keys of a JSON document in the order they
// are written, each as its path ("findings.rule").
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var keys []string
	var walk func(prefix string)
	walk = func(prefix string) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, prefix+k.(string))
				walk(prefix + k.(string) + ".")
			}
			dec.Token()
		case json.Delim('['):
			for dec.More() {
				walk(prefix)
			}
			dec.Token()
		}
	}
	walk("")
	return keys
}

// yamlKeys lists the mapping keys of a YAML document in order, as jsonKeys.
func yamlKeys(t *testing.T, b []byte) []string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c, prefix)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				keys = append(keys, prefix+n.Content[i].Value)
				walk(n.Content[i+1], prefix+n.Content[i].Value+".")
			}
		}
	}
	walk(&doc, "")
	return keys
}

// trickyReport holds strings YAML would read as other types if they were
// written plain, and text with line breaks.
func trickyReport() *report.Report {
	r := fixedReport()
	r.Findings = append(r.Findings, analyzer.Finding{
		Rule: "odd", Severity: analyzer.Info, Title: "true", Summary: "1e3", Cause: "null", Fix: "line one\nline two",
		Facts:    map[string]any{"yes": "no", "port": "0755", "list": []string{"- a", "b: c", "#d", "1:20", "Off", "0x1f", ".inf", "2026-11-24"}},
		Evidence: []analyzer.Evidence{{Pos: model.Pos{File: "x: y.txt", Line: 1}, Note: "~"}},
	})
	return r
}

func TestYAMLKeysInJSONOrder(t *testing.T) {
	for name, r := range map[string]*report.Report{"fixed": fixedReport(), "tricky": trickyReport()} {
		var js, ym bytes.Buffer
		if err := report.Write(&js, "json", r); err != nil {
			t.Fatal(err)
		}
		if err := report.Write(&ym, "yaml", r); err != nil {
			t.Fatal(err)
		}
		jk, yk := jsonKeys(t, js.Bytes()), yamlKeys(t, ym.Bytes())
		if !reflect.DeepEqual(jk, yk) {
			t.Errorf("%s: YAML keys differ from JSON's:\njson %v\nyaml %v", name, jk, yk)
		}
		if len(jk) < 2 || jk[0] != "schema_version" || jk[1] != "tool" {
			t.Errorf("%s: the report starts with %v, want schema_version then tool", name, jk[:min(2, len(jk))])
		}
		// The same values: YAML read back and written as JSON is the JSON.
		var fromJSON, fromYAML any
		if err := json.Unmarshal(js.Bytes(), &fromJSON); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(yamlToJSON(t, ym.Bytes()), &fromYAML); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromJSON, fromYAML) {
			t.Errorf("%s: YAML read back differs from JSON:\n%s", name, ym.String())
		}
		// YAML 1.1 readers take yes, no and off for booleans, 1:20 for a
		// number.
		if name == "tricky" && (!strings.Contains(ym.String(), `"yes": "no"`) || !strings.Contains(ym.String(), `- "1:20"`) ||
			!strings.Contains(ym.String(), `- "Off"`)) {
			t.Errorf("%s: yes and no written plain:\n%s", name, ym.String())
		}
		if strings.Contains(ym.String(), "{") && name == "fixed" {
			t.Errorf("%s: YAML in flow style:\n%s", name, ym.String())
		}
	}
}

// yamlToJSON reads a YAML document and writes it as JSON.
func yamlToJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestSchemaVersionAndTool(t *testing.T) {
	// A report built by hand gets them from Write.
	var buf bytes.Buffer
	if err := report.Write(&buf, "json", &report.Report{}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		SchemaVersion string `json:"schema_version"`
		Tool          struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"tool"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.SchemaVersion != report.SchemaVersion || got.Tool.Name != "netmortem" || got.Tool.Version == "" {
		t.Errorf("hand-built report: schema_version %q, tool %+v", got.SchemaVersion, got.Tool)
	}
	r := report.New(nil, nil, analyzer.Result{})
	if r.SchemaVersion != report.SchemaVersion || r.Tool.Name != "netmortem" {
		t.Errorf("New: schema_version %q, tool %+v", r.SchemaVersion, r.Tool)
	}
}
