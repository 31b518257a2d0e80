package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/internal/testutil/browser"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/timeline"
)

// The browser test of the HTML report renders the report of every incident
// and seed fixture in headless Chromium at 1280 and 390 pixels wide.
//
// NETMORTEM_SCREENSHOTS=DIR (relative to the repository's root) writes the
// screenshots of one fixture, NETMORTEM_SCREENSHOT_INCIDENT (default
// incidents/ephemeral-nodeport), to DIR/report-1280.png and DIR/report-390.png for
// committing (make screenshots), each cut below the report's first
// timeline. No other page is photographed: nothing checks the picture.
const (
	envScreenshots        = "NETMORTEM_SCREENSHOTS"
	envScreenshotIncident = "NETMORTEM_SCREENSHOT_INCIDENT"
	defaultShotIncident   = "incidents/ephemeral-nodeport"
	// shotMargin is the room left under the first timeline in a committed
	// screenshot, for its legend.
	shotMargin = 80
)

// reportTimelines returns the fingerprints of the findings of the bundle at
// dir that have a timeline, built as analyze builds them for an html output
// (parse.Open with the summary on, every rule, timeline.Build), and true.
func reportTimelines(t *testing.T, dir string) ([]string, bool) {
	t.Helper()
	ctx := t.Context()
	snap, _, err := parse.Open(ctx, dir, &parse.Options{Summary: parse.Summary{Enabled: true}})
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	res := analyzer.Run(ctx, snap, rules.All(), nil)
	var fps []string
	for fp, tl := range timeline.Build(ctx, snap, res.Rules, res.Findings) {
		if tl != nil {
			fps = append(fps, fp)
		}
	}
	return fps, true
}

func TestHTMLReportInBrowser(t *testing.T) {
	t.Parallel()
	exe := browser.Require(t)
	b, err := browser.Start(t.Context(), exe, 20*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)

	shotDir, shotIncident := os.Getenv(envScreenshots), os.Getenv(envScreenshotIncident)
	if shotIncident == "" {
		shotIncident = defaultShotIncident
	}
	if shotDir != "" && !filepath.IsAbs(shotDir) {
		shotDir = filepath.Join(testutil.Root(), shotDir)
	}
	fixtures := incidentsAndSeeds(t)
	if shotDir != "" && !strings.Contains(strings.Join(fixtures, "\n")+"\n", shotIncident+"\n") {
		t.Fatalf("%s=%s is not an incident or seed fixture", envScreenshotIncident, shotIncident)
	}
	if shotDir == "" {
		fixtures = sampled(t, fixtures)
	}
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			// The browser loads two pages at once, in two tabs.
			t.Parallel()
			dir := fixture(name)
			out := t.TempDir()
			htmlPath, jsonPath := filepath.Join(out, "report.html"), filepath.Join(out, "report.json")
			// Run from the bundle's folder, as a user does, so the report
			// (and a committed screenshot) cites ephemeral-nodeport/sysctl.txt
			// and not where this checkout happens to be: in a process of
			// its own, as the folder is the process's.
			cmd := netmortemProcess("analyze", "-q", "--fail-on", "never", "-o", "html="+htmlPath, "-o", "json="+jsonPath, filepath.Base(dir))
			cmd.Dir = filepath.Dir(dir)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("analyze -o html: %v; stderr:\n%s", err, stderr.String())
			}
			want := wantInBrowser(t, jsonPath)
			want.Timelines, want.TimelinesKnown = reportTimelines(t, dir)
			var shot []browser.LoadOption
			if shotDir != "" && name == shotIncident {
				shot = append(shot, browser.WithScreenshot)
			}
			for _, vp := range []browser.Viewport{browser.Desktop, browser.Phone} {
				p, err := b.Load(t.Context(), htmlPath, vp, time.Minute, shot...)
				if err != nil {
					t.Fatal(err)
				}
				if probs := append(p.Problems(), p.CheckReport(want)...); len(probs) > 0 {
					t.Errorf("the HTML report at %dpx:\n  %s", vp.Width, strings.Join(probs, "\n  "))
				}
				if d := p.DataURIs(); len(d) > 0 {
					t.Logf("at %dpx the page uses %d data: URIs: %s", vp.Width, len(d), strings.Join(d, ", "))
				}
				if len(shot) == 0 {
					continue
				}
				// The committed screenshots show the page down to its first
				// timeline, not the whole of a long report.
				if len(p.Timelines) == 0 || p.TimelineSVGs == 0 {
					t.Fatalf("the report of %s has no timeline to show: choose another with %s", name, envScreenshotIncident)
				}
				png, err := p.Top(max(int(vp.Height), p.Timelines[0].Bottom+shotMargin))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(shotDir, 0o755); err != nil {
					t.Fatal(err)
				}
				file := filepath.Join(shotDir, "report-"+strconv.Itoa(int(vp.Width))+".png")
				if err := os.WriteFile(file, png, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s", file)
			}
		})
	}
}

// wantInBrowser reads what the HTML report must show from the JSON report
// of the same run: the findings' fingerprints, and a quoted appendix when
// any finding cites evidence.
func wantInBrowser(t *testing.T, jsonPath string) browser.Want {
	t.Helper()
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Findings []struct {
			Fingerprint string            `json:"fingerprint"`
			Evidence    []json.RawMessage `json:"evidence"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("%s: %v", jsonPath, err)
	}
	var w browser.Want
	for _, f := range rep.Findings {
		if f.Fingerprint == "" {
			t.Fatalf("%s: a finding without a fingerprint", jsonPath)
		}
		w.Fingerprints = append(w.Fingerprints, f.Fingerprint)
		if len(f.Evidence) > 0 {
			w.MinQuotes = 1
		}
	}
	return w
}
