package timeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// incident reads a fixture bundle as analyze does (summary mode) and runs
// every rule on it.
func incident(t *testing.T, rel string) (*model.Snapshot, []analyzer.Finding) {
	t.Helper()
	return load(t, filepath.Join(testutil.Root(), "fixtures", rel))
}

// load reads the bundle at path as analyze does and runs every rule on it.
func load(t *testing.T, path string) (*model.Snapshot, []analyzer.Finding) {
	t.Helper()
	snap, _, err := parse.Open(context.Background(), path, &parse.Options{Summary: parse.Summary{Enabled: true}})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	res := analyzer.Run(context.Background(), snap, rules.All(), nil)
	return snap, res.Findings
}

// incidentDirs lists the incident bundles and seeds, relative to fixtures/.
func incidentDirs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"incidents/*", "seeds/*"} {
		m, err := filepath.Glob(filepath.Join(testutil.Root(), "fixtures", pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range m {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				rel, _ := filepath.Rel(filepath.Join(testutil.Root(), "fixtures"), d)
				out = append(out, rel)
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d incident bundles found", len(out))
	}
	return out
}

// find returns the finding of rule in fs whose subject has the given
// key=value pairs, failing the test when there is none.
func find(t *testing.T, fs []analyzer.Finding, rule string, kv ...string) *analyzer.Finding {
	t.Helper()
	for i := range fs {
		f := &fs[i]
		if f.Rule != rule {
			continue
		}
		ok := true
		for j := 0; j+1 < len(kv); j += 2 {
			if f.Subject[kv[j]] != kv[j+1] {
				ok = false
			}
		}
		if ok {
			return f
		}
	}
	t.Fatalf("no %s finding with subject %v", rule, kv)
	return nil
}
