package sqlstore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/testutil/servers"
	"github.com/netmortem/netmortem/results"
)

// jsonlStore writes ws to a JSON Lines file, as a batch does, and opens it.
func jsonlStore(t *testing.T, ws []written) results.Store {
	t.Helper()
	var b strings.Builder
	for _, w := range ws {
		if w.line == nil {
			b.WriteString(w.text)
			continue
		}
		l := *w.line
		if l.Findings == nil {
			l.Findings = []analyzer.Finding{}
		}
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "results.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := results.OpenJSONL(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// allStores holds ws in a JSON Lines file, a SQLite database and a
// PostgreSQL database, and returns their Stores by name. A database is
// written the lines a batch writes to it: not the canceled ones, nor a
// cut line.
func allStores(t *testing.T, ws []written) map[string]results.Store {
	t.Helper()
	var lines []*results.Line
	for _, w := range ws {
		if w.line != nil && w.line.Status != results.StatusCanceled {
			lines = append(lines, w.line)
		}
	}
	return map[string]results.Store{
		"jsonl":    jsonlStore(t, ws),
		"sqlite":   dbStore(t, filepath.Join(t.TempDir(), "results.db"), lines),
		"postgres": dbStore(t, servers.Postgres(t).Database(t), lines),
	}
}

// answers asks st every question under f: the answers by method.
func answers(t *testing.T, st results.Store, f results.Filter, fps []string) map[string]any {
	t.Helper()
	ctx := context.Background()
	out := map[string]any{}
	check := func(name string, v any, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = v
	}
	r, err := st.Rules(ctx, f)
	check("Rules", r, err)
	w, err := st.Weeks(ctx, f)
	check("Weeks", w, err)
	v, err := st.Versions(ctx, f)
	check("Versions", v, err)
	fp, err := st.Fingerprints(ctx, f)
	check("Fingerprints", fp, err)
	for _, p := range fps {
		b, err := st.Bundles(ctx, p, f)
		check("Bundles "+p, b, err)
	}
	return out
}

// The same lines in a JSON Lines file, a SQLite and a PostgreSQL database
// give the same answers, under every filter.
func TestStoresAgree(t *testing.T) {
	ws := variations(t)
	stores := allStores(t, ws)
	fps, err := stores["jsonl"].Fingerprints(context.Background(), results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fps) < 20 {
		t.Fatalf("only %d fingerprints in the lines", len(fps))
	}
	asked := []string{fps[0].Fingerprint, fps[len(fps)/2].Fingerprint, fps[len(fps)-1].Fingerprint, "0000000000000000"}
	w44 := time.Date(2026, 10, 26, 0, 0, 0, 0, time.UTC)
	filters := []results.Filter{
		{},
		{Rule: fps[0].Rule},
		{Rule: "synack-reset"},
		{Rule: "no-such-rule"},
		{Since: w44},
		{Until: w44},
		{Since: w44.Add(-time.Microsecond)},
		{Until: w44.Add(time.Microsecond)},
		{Since: w44, Until: w44.Add(7 * 24 * time.Hour), Rule: fps[0].Rule},
		{Since: w44.Add(-500 * time.Millisecond), Until: w44.Add(1500 * time.Millisecond)},
		{Since: time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	nonEmpty := 0
	for _, f := range filters {
		want := answers(t, stores["jsonl"], f, asked)
		for name, st := range stores {
			got := answers(t, st, f, asked)
			for q := range want {
				if !reflect.DeepEqual(got[q], want[q]) {
					t.Errorf("%s %s under %+v:\n got %+v\nwant %+v (jsonl)", name, q, f, got[q], want[q])
				}
			}
		}
		if rules := want["Rules"].([]results.RuleCount); len(rules) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < len(filters)-3 {
		t.Errorf("only %d of %d filters count findings: the lines do not test them", nonEmpty, len(filters))
	}
}

// hand is a small batch whose answers are counted by hand: six bundles
// over weeks 43 to 46 and versions 1.9 to 1.31, one of them written again
// with fewer findings, one canceled after its line, one only canceled, a
// finding twice in a bundle, and a cut last line.
func hand() []written {
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	f := func(rule, fp string, sev analyzer.Severity, title string) analyzer.Finding {
		return analyzer.Finding{Rule: rule, Fingerprint: fp, Severity: sev, Title: title}
	}
	ls := []results.Line{
		{Bundle: "a", Status: results.StatusOK, BundleTime: at("2026-11-01T23:59:59.5Z"), KubernetesVersion: "v1.31.2", Findings: []analyzer.Finding{
			f("synack-reset", "fp1", analyzer.Warning, "t1"), f("dns-x", "fp2", analyzer.Error, "t2")}},
		{Bundle: "b", Status: results.StatusOK, BundleTime: at("2026-11-02T00:00:00Z"), KubernetesVersion: "v1.31.0+k3s1", Findings: []analyzer.Finding{
			f("synack-reset", "fp1", analyzer.Error, "t1b")}},
		{Bundle: "c", Status: results.StatusIncomplete, Error: "c.tar: cut after frame 9", Findings: []analyzer.Finding{f("dns-x", "fp3", analyzer.Info, "t3"), f("dns-x", "fp3", analyzer.Warning, "t3c")}},
		{Bundle: "d", Status: results.StatusUnreadable, Error: "no input could be read", BundleTime: at("2026-11-10T12:00:00Z"), KubernetesVersion: "v1.9.3"},
		{Bundle: "e", Status: results.StatusOK, BundleTime: at("2026-11-03T00:00:00Z"), KubernetesVersion: "v1.30.1", Findings: []analyzer.Finding{
			f("synack-reset", "fp1", analyzer.Warning, "t1e"), f("old-rule", "fp4", analyzer.Error, "t4")}},
		{Bundle: "f", Status: results.StatusOK, BundleTime: at("2026-10-20T08:00:00Z"), KubernetesVersion: "v1.30.0", Findings: []analyzer.Finding{
			f("dns-x", "fp2", analyzer.Warning, "t2f")}},
		{Bundle: "e", Status: results.StatusOK, BundleTime: at("2026-11-03T00:00:00Z"), KubernetesVersion: "v1.30.1", Findings: []analyzer.Finding{
			f("synack-reset", "fp1", analyzer.Warning, "t1e")}},
		{Bundle: "f", Status: results.StatusCanceled, Error: "interrupted"},
		{Bundle: "g", Status: results.StatusCanceled, Error: "interrupted"},
	}
	var ws []written
	for i := range ls {
		ws = append(ws, written{line: &ls[i]})
	}
	return append(ws, written{text: `{"bundle":"h","status":"ok","findings":[{"rule":"dns-x","fingerprint":"fp2"`})
}

// incomplete is g's row with n incomplete bundles.
func incomplete(r results.GroupCount, n int) results.GroupCount {
	r.Incomplete = n
	return r
}

// g is a row of Weeks or Versions.
func g(group string, bundles, matching, findings int) results.GroupCount {
	return results.GroupCount{Group: group, Bundles: bundles, Matching: matching, Findings: findings}
}

func TestStoresCountByHand(t *testing.T) {
	at := func(s string) time.Time {
		t, _ := time.Parse(time.RFC3339Nano, s)
		return t
	}
	w45 := at("2026-11-02T00:00:00Z")
	for name, st := range allStores(t, hand()) {
		for _, tc := range []struct {
			f    results.Filter
			want map[string]any
		}{
			{results.Filter{}, map[string]any{
				"Rules": []results.RuleCount{
					{Rule: "dns-x", Bundles: 3, Findings: 3, MaxSeverity: "error", First: at("2026-10-20T08:00:00Z"), Last: at("2026-11-01T23:59:59.5Z")},
					{Rule: "synack-reset", Bundles: 3, Findings: 3, MaxSeverity: "error", First: at("2026-11-01T23:59:59.5Z"), Last: at("2026-11-03T00:00:00Z")},
				},
				"Weeks":    []results.GroupCount{g("2026-W43", 1, 1, 1), g("2026-W44", 1, 1, 2), g("2026-W45", 2, 2, 2), g("2026-W46", 1, 0, 0), incomplete(g("unknown", 1, 1, 1), 1)},
				"Versions": []results.GroupCount{g("1.9", 1, 0, 0), g("1.30", 2, 2, 2), g("1.31", 2, 2, 3), incomplete(g("unknown", 1, 1, 1), 1)},
				"Fingerprints": []results.FingerprintCount{
					{Fingerprint: "fp1", Rule: "synack-reset", Title: "t1", Bundles: 3},
					{Fingerprint: "fp2", Rule: "dns-x", Title: "t2", Bundles: 2},
					{Fingerprint: "fp3", Rule: "dns-x", Title: "t3c", Bundles: 1}, // the later of c's two findings
				},
				"Bundles fp1": []results.BundleRef{
					{Bundle: "a", Rule: "synack-reset", Severity: "warning", Title: "t1", BundleTime: at("2026-11-01T23:59:59.5Z"), KubernetesVersion: "v1.31.2"},
					{Bundle: "b", Rule: "synack-reset", Severity: "error", Title: "t1b", BundleTime: w45, KubernetesVersion: "v1.31.0+k3s1"},
					{Bundle: "e", Rule: "synack-reset", Severity: "warning", Title: "t1e", BundleTime: at("2026-11-03T00:00:00Z"), KubernetesVersion: "v1.30.1"},
				},
				"Bundles fp4": []results.BundleRef{},
			}},
			{results.Filter{Rule: "synack-reset"}, map[string]any{
				"Weeks":        []results.GroupCount{g("2026-W43", 1, 0, 0), g("2026-W44", 1, 1, 1), g("2026-W45", 2, 2, 2), g("2026-W46", 1, 0, 0), incomplete(g("unknown", 1, 0, 0), 1)},
				"Versions":     []results.GroupCount{g("1.9", 1, 0, 0), g("1.30", 2, 1, 1), g("1.31", 2, 2, 2), incomplete(g("unknown", 1, 0, 0), 1)},
				"Fingerprints": []results.FingerprintCount{{Fingerprint: "fp1", Rule: "synack-reset", Title: "t1", Bundles: 3}},
				"Bundles fp2":  []results.BundleRef{},
			}},
			{results.Filter{Since: w45}, map[string]any{
				"Rules": []results.RuleCount{{Rule: "synack-reset", Bundles: 2, Findings: 2, MaxSeverity: "error", First: w45, Last: at("2026-11-03T00:00:00Z")}},
				"Weeks": []results.GroupCount{g("2026-W45", 2, 2, 2), g("2026-W46", 1, 0, 0)},
			}},
			{results.Filter{Until: w45}, map[string]any{
				"Rules": []results.RuleCount{
					{Rule: "dns-x", Bundles: 2, Findings: 2, MaxSeverity: "error", First: at("2026-10-20T08:00:00Z"), Last: at("2026-11-01T23:59:59.5Z")},
					{Rule: "synack-reset", Bundles: 1, Findings: 1, MaxSeverity: "warning", First: at("2026-11-01T23:59:59.5Z"), Last: at("2026-11-01T23:59:59.5Z")},
				},
				"Versions": []results.GroupCount{g("1.30", 1, 1, 1), g("1.31", 1, 1, 2)},
				"Bundles fp1": []results.BundleRef{
					{Bundle: "a", Rule: "synack-reset", Severity: "warning", Title: "t1", BundleTime: at("2026-11-01T23:59:59.5Z"), KubernetesVersion: "v1.31.2"},
				},
			}},
			{results.Filter{Since: at("2026-11-01T23:59:59.6Z"), Until: at("2026-11-02T00:00:00.000001Z")}, map[string]any{
				"Fingerprints": []results.FingerprintCount{{Fingerprint: "fp1", Rule: "synack-reset", Title: "t1b", Bundles: 1}},
			}},
			{results.Filter{Since: at("2027-01-01T00:00:00Z")}, map[string]any{
				"Rules": []results.RuleCount{}, "Weeks": []results.GroupCount{}, "Versions": []results.GroupCount{},
				"Fingerprints": []results.FingerprintCount{}, "Bundles fp1": []results.BundleRef{},
			}},
		} {
			got := answers(t, st, tc.f, []string{"fp1", "fp2", "fp4"})
			for q, want := range tc.want {
				if !reflect.DeepEqual(got[q], want) {
					t.Errorf("%s: %s under %+v:\n got %+v\nwant %+v", name, q, tc.f, got[q], want)
				}
			}
		}
		if err := st.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
	}
}
