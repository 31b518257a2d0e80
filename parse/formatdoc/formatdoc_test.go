package formatdoc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
)

// Every registered format is listed once, with the domain package its
// sniffer lives in and its command.
func TestDescribe(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var docs []Format
	if err := json.Unmarshal(b.Bytes(), &docs); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	listed := map[string]Format{}
	for _, d := range docs {
		if _, dup := listed[d.Name]; dup {
			t.Errorf("%s listed twice", d.Name)
		}
		listed[d.Name] = d
	}
	for _, f := range parse.Formats() {
		d, ok := listed[f.Name]
		switch {
		case !ok:
			t.Errorf("%s is not listed", f.Name)
		case d.Kind != string(f.Kind) || d.Command != f.Command || d.Command == "":
			t.Errorf("%s listed as %+v", f.Name, d)
		}
	}
	if len(docs) != len(parse.Formats()) {
		t.Errorf("%d formats listed, %d registered", len(docs), len(parse.Formats()))
	}
	for name, pkg := range map[string]string{"pcap": "parse", "nft": "parse/netfilter", "ss": "parse/host",
		"kubectl-table": "parse/kube", "klog": "parse/logs", "terminal-session": "parse/bundle"} {
		if got := listed[name].Package; got != pkg {
			t.Errorf("%s in package %q, want %q", name, got, pkg)
		}
	}
}

// docs/inputs.md is what WriteMarkdown writes (make docs).
func TestMarkdownIsInputsDoc(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	want, err := os.ReadFile(filepath.Join(testutil.Root(), "docs", "inputs.md"))
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Error("docs/inputs.md is stale: run make docs")
	}
	for _, f := range parse.Formats() {
		if !strings.Contains(out, "| `"+f.Name+"` |") {
			t.Errorf("no row for %s", f.Name)
		}
	}
}

// The formats table fits the width it is given, the package left out when
// it does not fit beside the command, the name and kind whole down to 60
// columns, and below.
func TestWriteTableWidths(t *testing.T) {
	for _, c := range []struct {
		width int
		pkg   bool
	}{{0, true}, {200, true}, {80, false}, {60, false}} {
		var b strings.Builder
		if err := WriteTable(&b, c.width); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, l := range strings.Split(out, "\n") {
			if c.width > 0 && utf8.RuneCountInString(l) > c.width {
				t.Errorf("width %d: line %d wide: %q", c.width, utf8.RuneCountInString(l), l)
			}
		}
		if strings.Contains(out, " PACKAGE ") != c.pkg {
			t.Errorf("width %d: PACKAGE shown %v, want %v", c.width, !c.pkg, c.pkg)
		}
		for _, f := range Describe() {
			if !strings.Contains(out, "│ "+f.Name+" ") || !strings.Contains(out, " "+f.Kind+" ") {
				t.Errorf("width %d: %s or its kind is not whole", c.width, f.Name)
			}
		}
	}
	// Narrower than a format's name, its kind and a command's 20 columns,
	// the table still fits.
	for width := 8; width < 60; width += 3 {
		var b strings.Builder
		if err := WriteTable(&b, width); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if fit.Width(l) > width {
				t.Fatalf("width %d: line %d wide: %q", width, fit.Width(l), l)
			}
		}
	}
}
