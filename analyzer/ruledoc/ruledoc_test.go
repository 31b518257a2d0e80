package ruledoc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/internal/testutil"
)

// docs/rules.md and docs/rules/ are what WriteMarkdown and
// WriteMarkdownDir write (make docs).
func TestRulesDocsCurrent(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, rules.All()); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(testutil.Root(), "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Error("docs/rules.md is stale: run make docs")
	}
	dir := t.TempDir()
	if err := WriteMarkdownDir(dir, rules.All()); err != nil {
		t.Fatal(err)
	}
	for _, r := range rules.All() {
		got, err1 := os.ReadFile(filepath.Join(dir, r.Name+".md"))
		want, err2 := os.ReadFile(filepath.Join(testutil.Root(), "docs", "rules", r.Name+".md"))
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/rules/%s.md is stale (%v, %v): run make docs", r.Name, err1, err2)
		}
	}
}

// Describe says which facts each rule requires, and its parameters; a rule
// without evidence gives empty lists, not null.
func TestDescribe(t *testing.T) {
	all := rules.All()
	docs := Describe(all)
	if len(docs) != len(all) {
		t.Fatalf("%d rules described, want %d", len(docs), len(all))
	}
	for i, r := range all {
		if docs[i].Name != r.Name || !slices.Equal(docs[i].Requires, r.FactNames()) || len(docs[i].Params) != len(r.Params) {
			t.Errorf("%s described as %+v", r.Name, docs[i])
		}
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, []*analyzer.Rule{{Name: "bare", Doc: "Bare."}}); err != nil {
		t.Fatal(err)
	}
	var raw []map[string]any
	if err := json.Unmarshal(b.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 1 || raw[0]["needs"] == nil || raw[0]["uses"] == nil || raw[0]["params"] != nil {
		t.Errorf("a bare rule: %s", b.String())
	}
}

// WriteExplanation gives the parameters of a rule that has some, and the
// facts it requires.
func TestWriteExplanation(t *testing.T) {
	var b bytes.Buffer
	if err := WriteExplanation(&b, rules.StaleDNAT); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, rules.StaleDNAT.Name+": ") || !strings.Contains(out, "\nRequires the facts: "+strings.Join(rules.StaleDNAT.FactNames(), ", ")+"\n") ||
		strings.Contains(out, "Parameters") {
		t.Errorf("explanation:\n%s", out)
	}
	b.Reset()
	_ = WriteExplanation(&b, rules.ConnectionSkew)
	if !strings.Contains(b.String(), "alpha (number > 0 and < 1, default 0.001): the significance level") {
		t.Errorf("explanation lacks the parameters:\n%s", b.String())
	}
}

func TestSentence(t *testing.T) {
	for in, want := range map[string]string{"": "", "  a capture  ": "A capture.", "done.": "Done."} {
		if got := sentence(in); got != want {
			t.Errorf("sentence(%q) = %q, want %q", in, got, want)
		}
	}
}

// The rules table fits the width it is given: every column when there is
// room, the title and what a rule needs at 100 columns, the needs under
// the title at 80, a rule's name whole down to 50 columns, and below.
func TestWriteTableWidths(t *testing.T) {
	for _, c := range []struct {
		width   int
		columns []string
	}{{0, []string{"NEEDS", "USES", "REQUIRES"}}, {250, []string{"NEEDS", "USES", "REQUIRES"}}, {100, []string{"NEEDS"}}, {80, nil}, {60, nil}} {
		var b strings.Builder
		if err := WriteTable(&b, rules.All(), c.width); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, l := range strings.Split(out, "\n") {
			if c.width > 0 && utf8.RuneCountInString(l) > c.width {
				t.Errorf("width %d: line %d wide: %q", c.width, utf8.RuneCountInString(l), l)
			}
		}
		for _, col := range []string{"NEEDS", "USES", "REQUIRES"} {
			if slices.Contains(c.columns, col) != strings.Contains(out, " "+col+" ") {
				t.Errorf("width %d: column %s shown %v, want %v", c.width, col, !slices.Contains(c.columns, col), slices.Contains(c.columns, col))
			}
		}
		if len(c.columns) == 0 && !strings.Contains(out, "│ needs capture ") {
			t.Errorf("width %d: what a rule needs is not under its title:\n%s", c.width, out)
		}
		for _, r := range rules.All() {
			if !strings.Contains(out, "│ "+r.Name+" ") {
				t.Errorf("width %d: %s is not whole", c.width, r.Name)
			}
		}
	}
	// Narrower than a rule's name beside the others, the table still fits.
	for width := 8; width < 50; width += 3 {
		var b strings.Builder
		if err := WriteTable(&b, rules.All(), width); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if fit.Width(l) > width {
				t.Fatalf("width %d: line %d wide: %q", width, fit.Width(l), l)
			}
		}
	}
}
