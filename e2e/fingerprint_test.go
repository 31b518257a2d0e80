package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer/rules"
)

// Every finding of every rule on every committed bundle says what it is
// about, with the keys its rule declares, and no two findings of a bundle
// share a Subject (so none needs a suffix to tell its fingerprint apart).
func TestFingerprintsDistinct(t *testing.T) {
	dirs := committedBundles(t)
	findings := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		_, _, res := analyzeShared(t, dir, nil)
		seen := map[string]string{}
		for _, f := range res.Findings {
			findings++
			switch {
			case len(f.Subject) == 0:
				t.Errorf("%s: %s %q has no subject", dir, f.Rule, f.Title)
			case strings.Contains(f.Fingerprint, "-"):
				t.Errorf("%s: %s %q has the subject %v of %q", dir, f.Rule, f.Title, f.Subject, seen[strings.Split(f.Fingerprint, "-")[0]])
			}
			seen[f.Fingerprint] = f.Title
			r := rules.Lookup(f.Rule)
			for k := range f.Subject {
				if r == nil || !slices.Contains(r.SubjectKeys, k) {
					t.Errorf("%s: %s %q has the subject key %q its rule does not declare", dir, f.Rule, f.Title, k)
				}
			}
		}
	}
	if findings < 20 {
		t.Errorf("only %d findings over %d bundles: the fixtures were not read", findings, len(dirs))
	}
}
