package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/testutil"
)

// On the incidents whose cause a rule proves, the symptoms other rules
// report on the same frames and lines point at it, and are not proven.
func TestSymptomsPointAtTheirCause(t *testing.T) {
	for dir, want := range map[string]map[string]string{
		"fixtures/incidents/rp-filter-drop":         {"syn-unanswered": "rp-filter-drop"},
		"fixtures/incidents/snat-port-exhaustion":   {"conntrack-drops": "snat-port-exhaustion", "syn-unanswered": "snat-port-exhaustion"},
		"fixtures/incidents/network-policy-deny":    {"syn-unanswered": "network-policy-deny"},
		"fixtures/incidents/nat-reply-untranslated": {"synack-reset": "nat-reply-untranslated"},
		"fixtures/incidents/service-rule-shadowed":  {"connection-skew": "service-rule-shadowed"},
	} {
		_, _, res := analyze(t, filepath.Join(testutil.Root(), dir))
		for _, f := range res.Findings {
			cause, isSymptom := want[f.Rule]
			switch {
			case isSymptom && (f.Certainty == analyzer.Proven || !strings.HasPrefix(f.ExplainedBy, cause+": ")):
				t.Errorf("%s: %s (%s) explained by %q, want %s", dir, f.Rule, f.Certainty, f.ExplainedBy, cause)
			case !isSymptom && f.ExplainedBy != "":
				t.Errorf("%s: %s explained by %q, want nothing", dir, f.Rule, f.ExplainedBy)
			}
			delete(want, f.Rule)
		}
		if len(want) > 0 {
			t.Errorf("%s: no finding of %v", dir, want)
		}
	}
}
