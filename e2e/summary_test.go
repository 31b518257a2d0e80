package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// Reading captures in summary mode, even keeping a single failed attempt
// per server, gives the findings that reading every attempt gives: the
// rules count what was folded. Only the frames cited and the count of
// attempts kept may differ.
func TestSummaryKeepsFindings(t *testing.T) {
	dirs := committedBundles(t)
	ctx := context.Background()
	run := func(t *testing.T, dir string, opts *parse.Options) (*model.Snapshot, []analyzer.Finding) {
		snap, _, err := parse.Open(ctx, dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		res := analyzer.Run(ctx, snap, rules.All(), nil)
		return snap, res.Findings
	}
	compared := 0
	hostCounted := false
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			_, _, res := analyzeShared(t, dir, nil)
			full := res.Findings
			snap, sum := run(t, dir, &parse.Options{Summary: parse.Summary{Enabled: true, FailedSample: 1}})
			for _, st := range snap.EndpointStats {
				hostCounted = hostCounted || st.Server.Port() == 0 && len(st.Ports) > 0
			}
			if len(full) != len(sum) {
				t.Fatalf("%d findings in summary mode, %d from every attempt:\n%s\n%s", len(sum), len(full), titles(sum), titles(full))
			}
			for i := range full {
				f, s := full[i], sum[i]
				ff, sf := maps.Clone(f.Facts), maps.Clone(s.Facts)
				delete(ff, "attempts_kept")
				delete(sf, "attempts_kept")
				if f.Rule != s.Rule || f.Severity != s.Severity || f.Title != s.Title || f.Summary != s.Summary || !reflect.DeepEqual(ff, sf) {
					t.Errorf("finding %d differs:\nsummary mode: %s %s %q %v\nevery attempt: %s %s %q %v", i, s.Rule, s.Severity, s.Title, sf,
						f.Rule, f.Severity, f.Title, ff)
				}
				if _, ok := s.Facts["attempts_kept"]; ok {
					compared++
				}
			}
		})
	}
	if compared == 0 {
		t.Error("no finding counted attempts it did not keep: the bundles do not exercise summary mode")
	}
	if !hostCounted {
		t.Error("no scan was counted per host: fixtures/captures/portscan.pcap should be, with a sample of one")
	}
}

func titles(fs []analyzer.Finding) string {
	s := ""
	for _, f := range fs {
		s += fmt.Sprintf("  %s: %s\n", f.Rule, f.Title)
	}
	return s
}

// committedBundles lists the committed bundles: the incident and seed
// bundles and the directory of captures.
func committedBundles(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, pat := range []string{"../fixtures/incidents/*", "../fixtures/seeds/*", "../fixtures/captures"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, m...)
	}
	return dirs
}
