package sqlstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
	"github.com/netmortem/netmortem/results"
)

// written is one Write of a batch to its sinks: a line, or, for a JSON
// Lines file only, text that a database never holds (a cut last line).
type written struct {
	line *results.Line
	text string // written to the JSON Lines file as it is, when line is nil
}

var realLines struct {
	once  sync.Once
	lines []results.Line
	err   error
}

// analyzed is the line of each incident of fixtures/incidents and each
// seed of fixtures/seeds, analyzed in process as a batch does.
func analyzed(t *testing.T) []results.Line {
	t.Helper()
	realLines.once.Do(func() {
		root := testutil.Root()
		var dirs []string
		for _, parent := range []string{"incidents", "seeds"} {
			entries, err := os.ReadDir(filepath.Join(root, "fixtures", parent))
			if err != nil {
				realLines.err = err
				return
			}
			for _, e := range entries {
				if e.IsDir() {
					dirs = append(dirs, filepath.Join("fixtures", parent, e.Name()))
				}
			}
		}
		ctx := context.Background()
		now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
		for _, d := range dirs {
			snap, warns, err := parse.Open(ctx, filepath.Join(root, d), nil)
			if err != nil {
				realLines.err = fmt.Errorf("%s: %w", d, err)
				return
			}
			rep := report.New(snap, warns, analyzer.Run(ctx, snap, rules.All(), nil))
			l := results.Line{Bundle: d, Status: results.StatusOK, Started: now, Findings: rep.Findings,
				KubernetesVersion: results.KubernetesVersion(snap), InputList: snap.Inputs}
			l.BundleTime, l.BundleTimeSource = results.BundleTime(snap, time.Time{}, now)
			if m := rep.Max(); m > 0 {
				l.MaxSev = m.String()
			}
			realLines.lines = append(realLines.lines, l)
		}
	})
	if realLines.err != nil {
		t.Fatal(realLines.err)
	}
	return realLines.lines
}

// variations are the real lines written as many bundles of a batch over
// weeks and Kubernetes versions: each line again under other names, with
// times on both sides of week boundaries (to the microsecond) and unknown,
// and versions of several minors, none and a wrong one; then some bundles
// rewritten with fewer findings, a canceled line, a bundle written twice
// alike, and a cut last line.
func variations(t *testing.T) []written {
	real := analyzed(t)
	base := time.Date(2026, 10, 25, 23, 59, 59, 999999000, time.UTC) // a Sunday: week 43's last microsecond
	versions := []string{"v1.31.2", "v1.30.0+k3s1", "v1.9.11", "", "v1.31.0-gke.1", "not-a-version"}
	var out []written
	add := func(l results.Line) { out = append(out, written{line: &l}) }
	for i, l := range real {
		for j := range 4 {
			v := l
			v.Bundle = fmt.Sprintf("s3://tickets/%02d/%d/%s", j, i, filepath.Base(l.Bundle))
			switch (i + j) % 5 {
			case 0:
				v.BundleTime = time.Time{}
			case 1:
				v.BundleTime = base // W43
			case 2:
				v.BundleTime = base.Add(time.Microsecond) // W44, Monday 00:00
			default:
				v.BundleTime = base.Add(time.Duration(i*j+1) * 37 * time.Hour).Truncate(time.Microsecond)
			}
			if j > 0 {
				v.KubernetesVersion = versions[(i+j)%len(versions)]
			}
			add(v)
		}
	}
	// Rewritten with fewer findings: the later line counts.
	for i, l := range real {
		if len(l.Findings) == 0 || i%2 == 1 {
			continue
		}
		v := l
		v.Bundle = fmt.Sprintf("s3://tickets/00/%d/%s", i, filepath.Base(l.Bundle))
		v.BundleTime = base.Add(time.Microsecond)
		if i%4 == 0 {
			v.KubernetesVersion = versions[0]
		}
		v.Findings = l.Findings[:len(l.Findings)/2]
		add(v)
	}
	// A bundle whose batch was interrupted: its earlier line counts, and
	// a bundle only canceled is not held.
	c := real[1]
	c.Bundle, c.Status, c.Error, c.Findings = fmt.Sprintf("s3://tickets/01/1/%s", filepath.Base(real[1].Bundle)), results.StatusCanceled, "interrupted", nil
	add(c)
	c.Bundle = "s3://tickets/canceled-only"
	add(c)
	// Written twice alike (a retried shard).
	out = append(out, out[3])
	// A bundle that was not analyzed.
	add(results.Line{Bundle: "s3://tickets/unreadable.tar.gz", Status: results.StatusUnreadable, Error: "no input could be read",
		Started: base, KubernetesVersion: "v1.31.2"})
	// Cut short by a kill: in the JSON Lines file only.
	out = append(out, written{text: `{"schema_version":"1","bundle":"s3://tickets/cut","status":"ok","findings":[{"rule":"synack-reset"`})
	return out
}
