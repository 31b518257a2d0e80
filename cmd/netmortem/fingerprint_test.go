package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/diff"
	"github.com/netmortem/netmortem/internal/testutil"
)

// copyBundle copies the bundle dir to dst, writing each capture through
// cut instead of as it is.
func copyBundle(t *testing.T, dir, dst string, cut func(t testing.TB, in, out string)) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case filepath.Ext(p) == ".pcap":
			cut(t, p, target)
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// analyzeJSON runs analyze -o json and returns its findings.
func analyzeJSON(t *testing.T, args ...string) []analyzer.Finding {
	t.Helper()
	code, out, stderr := runCLI(t, append([]string{"analyze", "-q", "-o", "json"}, args...)...)
	if code != exitOK && code != exitFindings {
		t.Fatalf("analyze %v: exit %d: %s", args, code, stderr)
	}
	var rep struct {
		Findings []analyzer.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep.Findings
}

func fingerprints(fs []analyzer.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Fingerprint)
	}
	slices.Sort(out)
	return out
}

// The same problems seen in a shorter capture keep their fingerprints:
// analyzed twice, a bundle gives the same ones; with its capture cut at
// both ends, the problems found in both are matched, and diff calls them
// changed (their counts are smaller), not appeared and resolved.
func TestFingerprintsSurviveCutCapture(t *testing.T) {
	bundle := fixture("incidents/stale-dnat")
	first, second := analyzeJSON(t, bundle), analyzeJSON(t, bundle)
	if len(first) == 0 || !slices.Equal(fingerprints(first), fingerprints(second)) {
		t.Fatalf("two runs: %v and %v", fingerprints(first), fingerprints(second))
	}
	cut := filepath.Join(t.TempDir(), "stale-dnat-cut")
	copyBundle(t, bundle, cut, testutil.CutPcap)
	short := analyzeJSON(t, cut)
	var both []string
	byFP := map[string]analyzer.Finding{}
	for _, f := range first {
		byFP[f.Fingerprint] = f
	}
	for _, f := range short {
		if _, ok := byFP[f.Fingerprint]; ok {
			both = append(both, f.Fingerprint)
		}
	}
	// Every rule's finding is seen again in the shorter capture, with
	// the same fingerprint.
	if len(both) != len(first) || len(short) != len(first) {
		t.Fatalf("the full capture's findings %v, the cut one's %v: %d in both", fingerprints(first), fingerprints(short), len(both))
	}
	code, out, stderr := runCLI(t, "diff", "-o", "json", "--fail-on", "never", bundle, cut)
	if code != exitOK {
		t.Fatalf("diff --fail-on never: exit %d: %s", code, stderr)
	}
	var d diff.Diff
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Findings.Appeared) != 0 || len(d.Findings.Resolved) != 0 {
		t.Errorf("appeared %v, resolved %v: the cut capture shows the same problems", d.Findings.Appeared, d.Findings.Resolved)
	}
	if len(d.Findings.Changed) == 0 {
		t.Fatalf("no finding changed, though the cut capture holds fewer attempts: %+v", d.Findings)
	}
	for _, c := range d.Findings.Changed {
		if _, ok := byFP[c.Fingerprint]; !ok || len(c.Changes) == 0 {
			t.Errorf("changed %+v", c)
		}
	}
	if len(d.Findings.Changed)+len(d.Findings.Unchanged) != len(first) {
		t.Errorf("%d changed and %d unchanged of %d", len(d.Findings.Changed), len(d.Findings.Unchanged), len(first))
	}
	// The change is said: the attempts the syn-unanswered finding counts.
	found := false
	for _, c := range d.Findings.Changed {
		for _, ch := range c.Changes {
			found = found || (c.Rule == "syn-unanswered" && ch.Field == "facts.attempts")
		}
	}
	if !found {
		t.Errorf("diff does not say syn-unanswered's attempts changed: %+v", d.Findings.Changed)
	}
}
