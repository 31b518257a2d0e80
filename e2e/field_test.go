package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
)

// fieldDir holds the field corpus: real incidents published by others, one
// directory each, with the evidence as it was pasted, its PROVENANCE and
// its want.yaml.
const fieldDir = "../fixtures/field"

// fieldWant is a field case's want.yaml: the cause established in the
// thread, and what netmortem must (and must not) say of its evidence.
type fieldWant struct {
	// Cause is the established cause, in a sentence.
	Cause string `yaml:"cause"`
	// Family is the incident family: a rule's name, or the id of a family
	// no rule covers yet.
	Family string `yaml:"family"`
	// Rules are the rules that name the cause; empty while no rule
	// covers the family.
	Rules []string `yaml:"rules"`
	// Certainty is the firmest the evidence in the files allows.
	Certainty analyzer.Certainty `yaml:"certainty"`
	// Wrong are the rules whose cause would be a wrong one here.
	Wrong []string `yaml:"wrong"`
	// Decide is the command that would decide, when the evidence cannot.
	Decide string `yaml:"decide"`
	// Control marks a healthy control or a trap: nothing at warning or
	// above is expected.
	Control bool `yaml:"control"`
	// Signal quotes the strongest signal the evidence carries.
	Signal string `yaml:"signal"`
}

// fieldOutcome is how netmortem did on one case.
type fieldOutcome string

const (
	fieldNamed  fieldOutcome = "named"  // a rule of Rules reports at warning or above
	fieldSilent fieldOutcome = "silent" // nothing named, nothing wrong
	fieldWrong  fieldOutcome = "WRONG"  // a wrong cause is claimed
	fieldQuiet  fieldOutcome = "quiet"  // a control with nothing at warning or above
	fieldNoisy  fieldOutcome = "NOISY"  // a control with a finding at warning or above
)

// classifyField judges the findings of one case against its want. A cause
// is wrong when a rule of Wrong claims it (likely or proven, at warning or
// above), or when any rule outside Rules claims one as proven.
func classifyField(w fieldWant, fs []analyzer.Finding) (fieldOutcome, string) {
	var loud []analyzer.Finding
	for _, f := range fs {
		if f.Severity >= analyzer.Warning {
			loud = append(loud, f)
		}
	}
	if w.Control {
		if len(loud) > 0 {
			return fieldNoisy, loud[0].Rule + ": " + loud[0].Title
		}
		return fieldQuiet, ""
	}
	for _, f := range loud {
		claims := f.Certainty == analyzer.Proven || f.Certainty == analyzer.Likely
		if slices.Contains(w.Rules, f.Rule) {
			continue
		}
		if (claims && slices.Contains(w.Wrong, f.Rule)) || f.Certainty == analyzer.Proven {
			return fieldWrong, fmt.Sprintf("%s (%s): %s", f.Rule, f.Certainty, f.Title)
		}
	}
	for _, f := range loud {
		if slices.Contains(w.Rules, f.Rule) {
			note := string(f.Certainty)
			if w.Certainty != "" && f.Certainty != w.Certainty {
				note += ", want " + string(w.Certainty)
			}
			return fieldNamed, f.Rule + " (" + note + ")"
		}
	}
	return fieldSilent, ""
}

// provenanceKeys are the keys every PROVENANCE file gives.
var provenanceKeys = []string{"source", "date", "established_by"}

// readProvenance reads the "key: value" lines of a PROVENANCE file.
func readProvenance(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && !strings.HasPrefix(k, " ") && k != "" {
			kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return kv, sc.Err()
}

func readFieldWant(path string) (fieldWant, error) {
	var w fieldWant
	b, err := os.ReadFile(path)
	if err != nil {
		return w, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&w); err != nil {
		return w, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// TestFieldCorpus runs netmortem on every case of the field corpus and
// prints one line per case and the totals. It fails on a wrong cause, a
// noisy control, and a case whose want.yaml or PROVENANCE is incomplete;
// a silent case is counted, not failed.
func TestFieldCorpus(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(fieldDir, "*", "want.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatalf("no case in %s", fieldDir)
	}
	sort.Strings(dirs)
	counts := map[fieldOutcome]int{}
	sources := map[string]bool{}
	var lines []string
	for _, wantPath := range dirs {
		dir := filepath.Dir(wantPath)
		name := filepath.Base(dir)
		w, err := readFieldWant(wantPath)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checkFieldWant(t, name, w)
		prov, err := readProvenance(filepath.Join(dir, "PROVENANCE"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, k := range provenanceKeys {
			if prov[k] == "" {
				t.Errorf("%s: PROVENANCE has no %s", name, k)
			}
		}
		sources[prov["source"]] = true
		_, _, res := analyze(t, dir)
		outcome, why := classifyField(w, res.Findings)
		counts[outcome]++
		line := fmt.Sprintf("%-7s %s", outcome, name)
		if why != "" {
			line += ": " + why
		}
		lines = append(lines, line)
		if outcome == fieldWrong || outcome == fieldNoisy {
			t.Errorf("%s", line)
		}
	}
	for _, l := range lines {
		t.Log(l)
	}
	incidents := len(dirs) - counts[fieldQuiet] - counts[fieldNoisy]
	t.Logf("field corpus: %d cases from %d sources; incidents %d: %d named, %d silent, %d wrong; controls %d: %d quiet, %d noisy",
		len(dirs), len(sources), incidents, counts[fieldNamed], counts[fieldSilent], counts[fieldWrong],
		counts[fieldQuiet]+counts[fieldNoisy], counts[fieldQuiet], counts[fieldNoisy])
}

// checkFieldWant checks that a want names its cause and only rules that
// exist.
func checkFieldWant(t *testing.T, name string, w fieldWant) {
	t.Helper()
	if w.Cause == "" || w.Family == "" {
		t.Errorf("%s: want.yaml needs cause and family", name)
	}
	switch w.Certainty {
	case analyzer.Proven, analyzer.Likely, analyzer.Unknown:
	default:
		t.Errorf("%s: want.yaml certainty %q is not proven, likely or unknown", name, w.Certainty)
	}
	for _, r := range append(slices.Clone(w.Rules), w.Wrong...) {
		if rules.Lookup(r) == nil {
			t.Errorf("%s: want.yaml names rule %q, which does not exist", name, r)
		}
	}
	if w.Control && len(w.Rules) > 0 {
		t.Errorf("%s: a control names no rule", name)
	}
}

// TestClassifyField holds the judgement of a case to its definition, so
// that the corpus totals mean what they say.
func TestClassifyField(t *testing.T) {
	f := func(rule string, sev analyzer.Severity, c analyzer.Certainty) analyzer.Finding {
		return analyzer.Finding{Rule: rule, Severity: sev, Certainty: c, Title: rule}
	}
	w := fieldWant{Rules: []string{"rp-filter-drop"}, Wrong: []string{"syn-unanswered"}, Certainty: analyzer.Likely}
	for _, tc := range []struct {
		name string
		w    fieldWant
		fs   []analyzer.Finding
		want fieldOutcome
	}{
		{"nothing", w, nil, fieldSilent},
		{"info only", w, []analyzer.Finding{f("rp-filter-drop", analyzer.Info, analyzer.Likely)}, fieldSilent},
		{"named", w, []analyzer.Finding{f("rp-filter-drop", analyzer.Warning, analyzer.Likely)}, fieldNamed},
		{"symptom beside", w, []analyzer.Finding{f("syn-unanswered", analyzer.Warning, analyzer.Unknown),
			f("rp-filter-drop", analyzer.Warning, analyzer.Likely)}, fieldNamed},
		{"wrong listed", w, []analyzer.Finding{f("syn-unanswered", analyzer.Warning, analyzer.Likely),
			f("rp-filter-drop", analyzer.Warning, analyzer.Likely)}, fieldWrong},
		{"wrong proven", w, []analyzer.Finding{f("stale-dnat", analyzer.Error, analyzer.Proven)}, fieldWrong},
		{"control quiet", fieldWant{Control: true}, []analyzer.Finding{f("stale-dnat", analyzer.Info, analyzer.Unknown)}, fieldQuiet},
		{"control noisy", fieldWant{Control: true}, []analyzer.Finding{f("stale-dnat", analyzer.Warning, analyzer.Unknown)}, fieldNoisy},
	} {
		if got, why := classifyField(tc.w, tc.fs); got != tc.want {
			t.Errorf("%s: got %s (%s), want %s", tc.name, got, why, tc.want)
		}
	}
}
