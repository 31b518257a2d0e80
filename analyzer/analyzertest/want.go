package analyzertest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

// wantFinding is one expected finding: its positions relative to the
// scenario directory, its facts as YAML values.
type wantFinding struct {
	Rule      string `yaml:"rule"`
	Severity  string `yaml:"severity"`
	Certainty string `yaml:"certainty"`
	Title     string `yaml:"title"`
	// Subject is the finding's Subject, which every finding must have.
	Subject map[string]string `yaml:"subject"`
	// The causal fields, left out of the file when empty.
	Supports     []string       `yaml:"supports,omitempty"`
	Contradicts  []string       `yaml:"contradicts,omitempty"`
	Alternatives []string       `yaml:"alternatives,omitempty"`
	Decide       string         `yaml:"decide,omitempty"`
	Sources      []model.Kind   `yaml:"sources,flow"`
	Facts        map[string]any `yaml:"facts"`
	Evidence     []string       `yaml:"evidence"`
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
			Title: rel(f.Title), Subject: f.Subject, Sources: f.Sources, Facts: yamlFacts(f.Facts, rel), Evidence: []string{},
			Supports: relAll(f.Supports, rel), Contradicts: relAll(f.Contradicts, rel),
			Alternatives: relAll(f.Alternatives, rel), Decide: rel(f.Decide)}
		for _, e := range f.Evidence {
			e.Pos.File = rel(e.Pos.File)
			wf.Evidence = append(wf.Evidence, e.String())
		}
		w.Findings = append(w.Findings, wf)
	}
	return w
}

// relAll applies rel to each string of l; an empty l is nil, as an absent
// list of a want file reads.
func relAll(l []string, rel func(string) string) []string {
	var out []string
	for _, s := range l {
		out = append(out, rel(s))
	}
	return out
}

// yamlFacts returns facts as they read back from YAML (ints of any size
// as int, lists as []any), so that they compare equal to a want file's.
func yamlFacts(facts map[string]any, rel func(string) string) map[string]any {
	b, err := yaml.Marshal(facts)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	out := map[string]any{}
	if err := yaml.Unmarshal([]byte(rel(string(b))), &out); err != nil {
		return map[string]any{"error": err.Error()}
	}
	return out
}

func readWant(path string) (want, error) {
	var w want
	b, err := os.ReadFile(path)
	if err != nil {
		return w, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&w); err != nil {
		return w, fmt.Errorf("%s: %w", path, err)
	}
	for i := range w.Findings {
		if w.Findings[i].Facts == nil {
			w.Findings[i].Facts = map[string]any{}
		}
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
	// Pair the findings: same rule and title first, then the rest of one
	// rule in order; what is left is unexpected or missing.
	pairOf := make([]int, len(got.Findings)) // index in want, -1
	used := make([]bool, len(want.Findings))
	for i := range pairOf {
		pairOf[i] = -1
	}
	for pass := range 2 {
		for i, g := range got.Findings {
			if pairOf[i] >= 0 {
				continue
			}
			for j, w := range want.Findings {
				if !used[j] && g.Rule == w.Rule && (pass == 1 || g.Title == w.Title) {
					pairOf[i], used[j] = j, true
					break
				}
			}
		}
	}
	inOrder := true
	last := -1
	for i, g := range got.Findings {
		j := pairOf[i]
		if j < 0 {
			out = append(out, fmt.Sprintf("unexpected finding %s %q", g.Rule, g.Title))
			inOrder = false
			continue
		}
		inOrder = inOrder && j > last
		last = j
		for _, d := range compareFinding(g, want.Findings[j]) {
			out = append(out, fmt.Sprintf("finding %d (%s %q): %s", j+1, g.Rule, want.Findings[j].Title, d))
		}
	}
	for j, w := range want.Findings {
		if !used[j] {
			out = append(out, fmt.Sprintf("missing finding %d: %s %q", j+1, w.Rule, w.Title))
			inOrder = false
		}
	}
	if len(out) == 0 && !inOrder {
		out = append(out, "the findings are in another order than analyzer.Sort gives")
	}
	return out
}

func compareFinding(g, w wantFinding) []string {
	var out []string
	field := func(name string, got, want any) {
		if !reflect.DeepEqual(got, want) {
			out = append(out, fmt.Sprintf("%s: got %s, want %s", name, show(got), show(want)))
		}
	}
	field("severity", g.Severity, w.Severity)
	field("certainty", g.Certainty, w.Certainty)
	field("title", g.Title, w.Title)
	field("subject", fmt.Sprint(g.Subject), fmt.Sprint(w.Subject))
	field("supports", g.Supports, w.Supports)
	field("contradicts", g.Contradicts, w.Contradicts)
	field("alternatives", g.Alternatives, w.Alternatives)
	field("decide", g.Decide, w.Decide)
	field("sources", fmt.Sprint(g.Sources), fmt.Sprint(w.Sources))
	var keys []string
	for k := range g.Facts {
		keys = append(keys, k)
	}
	for k := range w.Facts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for _, k := range keys {
		gv, inGot := g.Facts[k]
		wv, inWant := w.Facts[k]
		switch {
		case !inWant:
			out = append(out, fmt.Sprintf("facts.%s: unexpected, got %s", k, show(gv)))
		case !inGot:
			out = append(out, fmt.Sprintf("facts.%s: missing, want %s", k, show(wv)))
		default:
			field("facts."+k, gv, wv)
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

// show prints a value as YAML writes it, on one line.
func show(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.Join(strings.Fields(strings.TrimSpace(string(b))), " ")
}
