package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/analyzer"
)

// summaryWeaker are the incident bundles where the captures summarized,
// as analyze reads them, give weaker findings than every attempt kept, and
// why: their findings must then judge the same (rule, subject, severity,
// certainty), their evidence only may differ.
var summaryWeaker = map[string]string{
	"connection-skew":       "summary mode cites the established attempts it counted per backend, not their SYN frames",
	"service-rule-shadowed": "summary mode cites the connections it counted to the apiserver, not their SYN frames",
}

// Every incident bundle gives the same findings (rule, subject, severity,
// certainty, evidence) with its captures summarized, as analyze reads
// them, as with every attempt kept: what the rule scenarios are written
// for is what users get.
func TestIncidentsSummaryMode(t *testing.T) {
	bundles, err := filepath.Glob(fixture("incidents/*"))
	if err != nil || len(bundles) < 40 {
		t.Fatalf("%d incident bundles (%v)", len(bundles), err)
	}
	for _, b := range sampled(t, bundles) {
		name := filepath.Base(b)
		sum, err := netmortem.Analyze(context.Background(), netmortem.Paths(b), &netmortem.Options{NoTimelines: true})
		if err != nil {
			t.Fatal(err)
		}
		all, err := netmortem.Analyze(context.Background(), netmortem.Paths(b), &netmortem.Options{NoTimelines: true, KeepAttempts: true})
		if err != nil {
			t.Fatal(err)
		}
		s, a := judgements(sum.Findings, true), judgements(all.Findings, true)
		reason, listed := summaryWeaker[name]
		switch {
		case !listed && !slices.Equal(s, a):
			t.Errorf("%s: the findings with the captures summarized differ from those with every attempt kept:\n%s",
				name, difference(a, s))
		case listed && slices.Equal(s, a):
			t.Errorf("%s: the findings are the same in both modes, yet the bundle is listed (%s): remove it", name, reason)
		case listed:
			if s, a := judgements(sum.Findings, false), judgements(all.Findings, false); !slices.Equal(s, a) {
				t.Errorf("%s: with the captures summarized, the findings judge otherwise than with every attempt kept, "+
					"where only their evidence may differ (%s):\n%s", name, reason, difference(a, s))
			}
		}
	}
}

// difference names the first finding where sum differs from all.
func difference(all, sum []string) string {
	for i := range max(len(all), len(sum)) {
		switch {
		case i >= len(all):
			return "summarized only: " + sum[i]
		case i >= len(sum):
			return "every attempt kept only: " + all[i]
		case all[i] != sum[i]:
			return "every attempt kept: " + all[i] + "summarized:         " + sum[i]
		}
	}
	return ""
}

// judgements returns what the findings judge, one entry each: rule,
// subject, severity, certainty and, when evidence is set, evidence.
func judgements(fs []analyzer.Finding, evidence bool) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		s := fmt.Sprintf("%s %v %s %s", f.Rule, f.Subject, f.Severity, f.Certainty)
		for _, e := range f.Evidence {
			if !evidence {
				break
			}
			s += fmt.Sprintf("\n\t%s (%s)", e.Pos, e.Note)
		}
		out[i] = s + "\n"
	}
	return out
}
