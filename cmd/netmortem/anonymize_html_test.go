package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/anon"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// htmlReport reads dir as analyze does and returns its report with what
// an html output adds (the timelines and quotes).
func htmlReport(t *testing.T, dir string) *report.Report {
	t.Helper()
	rep, err := netmortem.Analyze(context.Background(), netmortem.Paths(dir), &netmortem.Options{NoConfigDiscovery: true})
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return rep
}

// htmlData is the text of what only the html output shows.
func htmlData(t *testing.T, rep *report.Report) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Timelines map[string]*report.Timeline
		Quotes    []report.Quote
	}{rep.Timelines, rep.Quotes})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The timelines and quotes are built only for an html output.
func TestHTMLDataOnlyForHTML(t *testing.T) {
	dir := fixture("incidents/stale-dnat")
	rep := htmlReport(t, dir)
	if len(rep.Timelines) == 0 || len(rep.Quotes) == 0 {
		t.Fatalf("html output: %d timelines, %d quotes", len(rep.Timelines), len(rep.Quotes))
	}
	for fp := range rep.Timelines {
		if findingOf(rep, fp) == nil {
			t.Errorf("timeline %s of no finding", fp)
		}
	}
	plain, err := netmortem.Analyze(context.Background(), netmortem.Paths(dir), &netmortem.Options{NoConfigDiscovery: true, NoTimelines: true})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Timelines != nil || plain.Quotes != nil {
		t.Errorf("without html: %d timelines, %d quotes", len(plain.Timelines), len(plain.Quotes))
	}
}

func findingOf(rep *report.Report, fp string) *analyzer.Finding {
	for i := range rep.Findings {
		if rep.Findings[i].Fingerprint == fp {
			return &rep.Findings[i]
		}
	}
	return nil
}

// No address or name of any fixture survives --anonymize in the timelines
// and quotes (what the html output shows beyond the other formats): not
// those of the plain report, of its timelines and quotes, nor what the
// mapping lists. Quotes keep their count and timelines their fingerprints.
func TestAnonymizeHTMLData(t *testing.T) {
	if testing.Short() {
		t.Skip("analyzes every fixture")
	}
	for _, dir := range sampled(t, anonFixtures(t)) {
		name, _ := filepath.Rel(testutil.Root(), dir)
		t.Run(name, func(t *testing.T) {
			rep := htmlReport(t, dir)
			plainJSON, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			plain := htmlData(t, rep)
			snap, _, _ := parse.Open(context.Background(), dir, &parse.Options{Summary: parse.Summary{Enabled: true}})
			a := anon.New("test-key")
			a.Learn(snap)
			arep := netmortem.Anonymize(a, rep)
			got := htmlData(t, arep)

			originals := map[string]bool{}
			for addr := range originalAddrs(plain + string(plainJSON)) {
				originals[addr] = true
			}
			for _, f := range rep.Findings {
				if _, nsName, ok := strings.Cut(f.Subject["object"], " "); ok {
					for _, n := range strings.Split(nsName, "/") {
						if !systemLike(n) {
							originals[n] = true
						}
					}
				}
			}
			for _, in := range rep.Inputs {
				if in.Node != "" && !systemLike(in.Node) {
					originals[in.Node] = true
				}
			}
			for _, m := range a.Mappings() {
				originals[m.Original] = true
			}
			for o := range originals {
				if containsWord(got, o) {
					t.Errorf("%q survives in the timelines or quotes", o)
				}
			}
			if len(arep.Quotes) != len(rep.Quotes) || len(arep.Timelines) != len(rep.Timelines) {
				t.Errorf("anonymized: %d quotes, %d timelines; plain: %d, %d", len(arep.Quotes), len(arep.Timelines),
					len(rep.Quotes), len(rep.Timelines))
			}
			for fp := range rep.Timelines {
				if arep.Timelines[fp] == nil {
					t.Errorf("timeline %s lost its fingerprint", fp)
				}
			}
		})
	}
}
