package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// analyze -o html=FILE writes the page, with a section for each finding of
// the JSON report written beside it, and standard output stays empty.
func TestAnalyzeHTMLFile(t *testing.T) {
	dir := t.TempDir()
	page, rep := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.json")
	code, out, stderr := runCLI(t, "analyze", "-q", "-o", "html="+page, "-o", "json="+rep, incident)
	if code != exitFindings || out != "" {
		t.Fatalf("exit %d, standard output %q; stderr:\n%s", code, out, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	j, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Findings []struct {
			Fingerprint string `json:"fingerprint"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(j, &r); err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if len(r.Findings) == 0 || !strings.HasPrefix(html, "<!DOCTYPE html>") ||
		!strings.Contains(html, `<body data-findings="`+strconv.Itoa(len(r.Findings))+`">`) {
		t.Fatalf("%d findings; the page starts %.200q", len(r.Findings), html)
	}
	for _, f := range r.Findings {
		if want := `<section class="finding" id="f-` + f.Fingerprint + `" data-fingerprint="` + f.Fingerprint + `"`; !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}
