package results_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/results"
)

func finding(rule, fp string, sev analyzer.Severity, title string) analyzer.Finding {
	return analyzer.Finding{Rule: rule, Fingerprint: fp, Severity: sev, Title: title}
}

func jsonLine(t testing.TB, l results.Line) string {
	t.Helper()
	if l.Findings == nil {
		l.Findings = []analyzer.Finding{}
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The last line of a bundle counts, unless it is canceled; a cut last line
// and blank lines are ignored; a fingerprint counts once per bundle, as
// its last finding; the shards' files are read as one.
func TestJSONLStoreLines(t *testing.T) {
	day := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	shard0 := jsonLine(t, results.Line{Bundle: "a", Status: results.StatusOK, BundleTime: day, KubernetesVersion: "v1.31.2",
		Findings: []analyzer.Finding{finding("synack-reset", "fp1", analyzer.Warning, "t1"), finding("dns-drop", "fp2", analyzer.Error, "t2")}}) +
		// a rewritten with fewer findings
		jsonLine(t, results.Line{Bundle: "a", Status: results.StatusOK, BundleTime: day, KubernetesVersion: "v1.31.2",
			Findings: []analyzer.Finding{finding("synack-reset", "fp1", analyzer.Warning, "t1")}}) +
		"\n" +
		// b, then canceled: b's first line counts
		jsonLine(t, results.Line{Bundle: "b", Status: results.StatusOK,
			Findings: []analyzer.Finding{finding("synack-reset", "fp1", analyzer.Error, "t1b"), finding("synack-reset", "fp1", analyzer.Info, "dup")}}) +
		jsonLine(t, results.Line{Bundle: "b", Status: results.StatusCanceled}) +
		// c only canceled: not held
		jsonLine(t, results.Line{Bundle: "c", Status: results.StatusCanceled})
	cut := jsonLine(t, results.Line{Bundle: "d", Status: results.StatusOK,
		Findings: []analyzer.Finding{finding("dns-drop", "fp2", analyzer.Error, "t2")}})
	shard1 := jsonLine(t, results.Line{Bundle: "e", Status: results.StatusUnreadable, Error: "no input could be read", BundleTime: day.Add(-48 * time.Hour)}) +
		strings.TrimSuffix(cut, "\n")
	st, err := results.OpenJSONL(writeFile(t, "shard-0.jsonl", shard0), writeFile(t, "shard-1.jsonl", shard1))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	rules, err := st.Rules(ctx, results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	wantRules := []results.RuleCount{{Rule: "synack-reset", Bundles: 2, Findings: 2, MaxSeverity: "warning", First: day, Last: day}}
	if !reflect.DeepEqual(rules, wantRules) {
		t.Errorf("Rules:\n got %+v\nwant %+v", rules, wantRules)
	}
	weeks, err := st.Weeks(ctx, results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	wantWeeks := []results.GroupCount{{Group: "2026-W44", Bundles: 1}, {Group: "2026-W45", Bundles: 1, Matching: 1, Findings: 1},
		{Group: results.UnknownWeek, Bundles: 1, Matching: 1, Findings: 1}}
	if !reflect.DeepEqual(weeks, wantWeeks) {
		t.Errorf("Weeks:\n got %+v\nwant %+v", weeks, wantWeeks)
	}
	refs, err := st.Bundles(ctx, "fp1", results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	wantRefs := []results.BundleRef{
		{Bundle: "a", Rule: "synack-reset", Severity: "warning", Title: "t1", BundleTime: day, KubernetesVersion: "v1.31.2"},
		{Bundle: "b", Rule: "synack-reset", Severity: "info", Title: "dup"}, // its later finding of fp1
	}
	if !reflect.DeepEqual(refs, wantRefs) {
		t.Errorf("Bundles:\n got %+v\nwant %+v", refs, wantRefs)
	}
	if refs, err := st.Bundles(ctx, "fp2", results.Filter{}); err != nil || len(refs) != 0 || refs == nil {
		t.Errorf("Bundles(fp2) = %#v, %v; want an empty list: a's line with it was rewritten, d's cut", refs, err)
	}
}

// A line that is not a batch line is an error that says where it is.
func TestJSONLStoreBadLine(t *testing.T) {
	good := jsonLine(t, results.Line{Bundle: "a", Status: results.StatusOK})
	for _, tc := range []struct{ text, want string }{
		{good + "{\"bundle\": \n" + good, "bad.jsonl:2: not a line of netmortem batch: "},
		{good + good + "[1, 2]\n", "bad.jsonl:3: not a line of netmortem batch: "},
		{"{\"status\": \"ok\"}\n", `bad.jsonl:1: not a line of netmortem batch: no "bundle"`},
		{good + "{\"bundle\": \"x\", \"bundle_time\": \"yesterday\"}\n", "bad.jsonl:2: not a line of netmortem batch: "},
	} {
		_, err := results.OpenJSONL(writeFile(t, "bad.jsonl", tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
	if _, err := results.OpenJSONL(filepath.Join(t.TempDir(), "missing.jsonl")); err == nil || !os.IsNotExist(err) {
		t.Errorf("a missing file: error %v, want a not-exist error", err)
	}
}

// lineSource writes n batch lines, each padded with warnings to about
// pad bytes, over bundles distinct bundles: a batch's output as a reader,
// never whole in memory.
func lineSource(t *testing.T, n, bundles, pad int) io.Reader {
	r, w := io.Pipe()
	go func() {
		warn := strings.Repeat("x", pad)
		var err error
		for i := 0; i < n && err == nil; i++ {
			_, err = fmt.Fprintf(w, `{"bundle":"tickets/%05d.tar.gz","status":"ok","bundle_time":"2026-11-%02dT10:00:00Z",`+
				`"kubernetes_version":"v1.%d.0","warnings":[{"message":%q}],"findings":[{"rule":"synack-reset","fingerprint":"fp%d",`+
				`"severity":"warning","title":"t"}]}`+"\n", i%bundles, 1+i%28, 28+i%4, warn, i%7)
		}
		w.CloseWithError(err)
	}()
	return r
}

// 100,000 lines are read a line at a time: what the store keeps after
// reading them is its summaries, a small part of the lines.
func TestJSONLStoreStreams(t *testing.T) {
	const n, bundles, pad = 100_000, 1000, 600
	st, err := results.ReadJSONL(lineSource(t, n, bundles, pad), "big.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if limit := uint64(n * pad / 10); m.HeapAlloc > limit {
		t.Errorf("heap %d bytes after reading %d lines of %d bytes, want under %d", m.HeapAlloc, n, pad, limit)
	}
	rules, err := st.Rules(context.Background(), results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Bundles != bundles || rules[0].Findings != bundles {
		t.Errorf("Rules = %+v, want synack-reset in %d bundles (the last line of each)", rules, bundles)
	}
	runtime.KeepAlive(st)
}
