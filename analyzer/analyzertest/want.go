package analyzertest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// want is the content of a want.yaml.
type want struct {
	Skipped  *wantSkipped  `yaml:"skipped,omitempty"`
	Findings []wantFinding `yaml:"findings"`
}

// wantSkipped says the rule did not run, and which evidence it lacked.
type wantSkipped struct {
	Missing []model.Kind `yaml:"missing,omitempty,flow"`
	AnyOf   []model.Kind `yaml:"any_of,omitempty,flow"`
}

// wantFinding is the judgement of one expected finding, its positions
// relative to the scenario directory.
type wantFinding struct {
	Rule      string `yaml:"rule"`
	Severity  string `yaml:"severity"`
	Certainty string `yaml:"certainty"`
	// Subject is the finding's Subject, which every finding must have:
	// it pairs the findings of the output with those of the file.
	Subject map[string]string `yaml:"subject"`
	// Decide is the command that would decide a cause not proven.
	Decide string `yaml:"decide,omitempty"`
	// Says are phrases the finding's words must contain.
	Says     []string `yaml:"says,omitempty"`
	Evidence []string `yaml:"evidence"`

	// text is the finding's words, in an output only: its title, summary,
	// cause, fix, supports, contradicts and alternatives.
	text string
	// cause, fix and facts are its own, in an output only: where -update
	// finds the phrases of a new finding.
	title, cause, fix string
	facts             []string
}

// name names a finding in a message: its rule and subject.
func (f wantFinding) name() string {
	return fmt.Sprintf("%s %s", f.Rule, subjectString(f.Subject))
}

// subjectString writes a subject as its keys and values, sorted.
func subjectString(s map[string]string) string {
	return fmt.Sprint(s)
}

// fromResult turns a result into what a want.yaml says of it, with the
// paths under dir made relative to it.
func fromResult(res analyzer.Result, dir string) want {
	prefix := filepath.ToSlash(filepath.Clean(dir)) + "/"
	rel := func(s string) string { return strings.ReplaceAll(filepath.ToSlash(s), prefix, "") }
	var w want
	if len(res.Skipped) > 0 {
		w.Skipped = &wantSkipped{Missing: res.Skipped[0].Missing, AnyOf: res.Skipped[0].AnyOf}
	}
	w.Findings = []wantFinding{}
	for _, f := range res.Findings {
		wf := wantFinding{Rule: f.Rule, Severity: f.Severity.String(), Certainty: string(f.Certainty),
			Subject: f.Subject, Decide: rel(f.Decide), Evidence: []string{}, text: rel(words(f)),
			title: rel(f.Title), cause: rel(f.Cause), fix: rel(f.Fix), facts: factStrings(f.Facts, rel)}
		for _, e := range f.Evidence {
			s := filepath.ToSlash(e.Pos.String())
			if e.Note != "" {
				s += " (" + e.Note + ")"
			}
			wf.Evidence = append(wf.Evidence, rel(s))
		}
		w.Findings = append(w.Findings, wf)
	}
	return w
}

// words returns the text of a finding the phrases of a want file are
// looked for in, one field a line.
func words(f analyzer.Finding) string {
	parts := []string{f.Title, f.Summary, f.Cause, f.Fix}
	parts = append(parts, f.Supports...)
	parts = append(parts, f.Contradicts...)
	parts = append(parts, f.Alternatives...)
	return strings.Join(parts, "\n")
}

// readWant reads a want file; strict refuses a key it does not know (a
// want file of an older format, which -update rewrites).
func readWant(path string, strict bool) (want, error) {
	var w want
	b, err := os.ReadFile(path)
	if err != nil {
		return w, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(strict)
	if err := dec.Decode(&w); err != nil {
		return w, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// writeWant writes w to path, keeping the comment lines at the top of the
// file there.
func writeWant(path string, w want) error {
	var head bytes.Buffer
	if old, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(old)
		for sc.Scan() && strings.HasPrefix(sc.Text(), "#") {
			head.WriteString(sc.Text() + "\n")
		}
		old.Close()
	}
	var body bytes.Buffer
	enc := yaml.NewEncoder(&body)
	enc.SetIndent(2)
	if err := enc.Encode(w); err != nil {
		return err
	}
	return os.WriteFile(path, append(head.Bytes(), body.Bytes()...), 0o644)
}

// pair pairs the findings of got with those of want: same rule and
// subject first, then the rest of one rule in order (their subjects
// differ). pairOf[i] is the index in want of got's i-th finding, or -1.
func pair(got, want []wantFinding) (pairOf []int, used []bool) {
	pairOf = make([]int, len(got))
	used = make([]bool, len(want))
	for i := range pairOf {
		pairOf[i] = -1
	}
	for pass := range 2 {
		for i, g := range got {
			if pairOf[i] >= 0 {
				continue
			}
			for j, w := range want {
				if !used[j] && g.Rule == w.Rule && (pass == 1 || subjectString(g.Subject) == subjectString(w.Subject)) {
					pairOf[i], used[j] = j, true
					break
				}
			}
		}
	}
	return pairOf, used
}

// compare says how got differs from want, one line per difference, each
// naming the finding and the field.
func compare(got, want want) []string {
	var out []string
	switch {
	case got.Skipped != nil && want.Skipped == nil:
		out = append(out, fmt.Sprintf("the rule was skipped (missing %v, any of %v), want.yaml expects it to run",
			got.Skipped.Missing, got.Skipped.AnyOf))
	case got.Skipped == nil && want.Skipped != nil:
		out = append(out, "the rule ran, want.yaml expects it skipped")
	case got.Skipped != nil && !reflect.DeepEqual(*got.Skipped, *want.Skipped):
		out = append(out, fmt.Sprintf("skipped: got missing %v any of %v, want missing %v any of %v",
			got.Skipped.Missing, got.Skipped.AnyOf, want.Skipped.Missing, want.Skipped.AnyOf))
	}
	pairOf, used := pair(got.Findings, want.Findings)
	inOrder := true
	last := -1
	for i, g := range got.Findings {
		j := pairOf[i]
		if j < 0 {
			out = append(out, fmt.Sprintf("unexpected finding %s", g.name()))
			inOrder = false
			continue
		}
		inOrder = inOrder && j > last
		last = j
		for _, d := range compareFinding(g, want.Findings[j]) {
			out = append(out, fmt.Sprintf("finding %d (%s): %s", j+1, want.Findings[j].name(), d))
		}
	}
	for j, w := range want.Findings {
		if !used[j] {
			out = append(out, fmt.Sprintf("missing finding %d: %s", j+1, w.name()))
			inOrder = false
		}
	}
	if len(out) == 0 && !inOrder {
		out = append(out, "the findings are in another order than analyzer.Sort gives")
	}
	return out
}

// compareFinding compares the judgement of g, a finding of the output,
// with w, one of the want file: subject, severity, certainty, decide and
// evidence equal, and every phrase of w in g's words.
func compareFinding(g, w wantFinding) []string {
	var out []string
	field := func(name string, got, want any) {
		if !reflect.DeepEqual(got, want) {
			out = append(out, fmt.Sprintf("%s: got %q, want %q", name, got, want))
		}
	}
	field("subject", subjectString(g.Subject), subjectString(w.Subject))
	field("severity", g.Severity, w.Severity)
	field("certainty", g.Certainty, w.Certainty)
	field("decide", g.Decide, w.Decide)
	for _, p := range w.Says {
		if !strings.Contains(g.text, p) {
			out = append(out, fmt.Sprintf("says: no %q in its words:\n\t%s", p, strings.ReplaceAll(g.text, "\n", "\n\t")))
		}
	}
	for i := range max(len(g.Evidence), len(w.Evidence)) {
		switch {
		case i >= len(w.Evidence):
			out = append(out, fmt.Sprintf("evidence[%d]: unexpected %q", i, g.Evidence[i]))
		case i >= len(g.Evidence):
			out = append(out, fmt.Sprintf("evidence[%d]: missing %q", i, w.Evidence[i]))
		default:
			field(fmt.Sprintf("evidence[%d]", i), g.Evidence[i], w.Evidence[i])
		}
	}
	return out
}
