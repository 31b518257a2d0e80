package query

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/results"
)

// lines writes two bundles in two weeks that share a finding, and one
// without a time or a finding, as a batch's JSON Lines.
func lines(t *testing.T) string {
	t.Helper()
	mon := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	for _, l := range []results.Line{
		{Bundle: "a.tar.gz", Status: results.StatusOK, BundleTime: mon.Add(-time.Second), KubernetesVersion: "v1.31.2",
			Findings: []analyzer.Finding{
				{Rule: "r1", Fingerprint: "fp1", Severity: analyzer.Error, Title: "one, a"},
				{Rule: "r2", Fingerprint: "fp2", Severity: analyzer.Warning, Title: "two"}}},
		{Bundle: "b.tar.gz", Status: results.StatusOK, BundleTime: mon, KubernetesVersion: "v1.30.0",
			Findings: []analyzer.Finding{{Rule: "r1", Fingerprint: "fp1", Severity: analyzer.Warning, Title: "one, b"}}},
		{Bundle: "c.tar.gz", Status: results.StatusUnreadable, Error: "no input could be read", Findings: []analyzer.Finding{}},
	} {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(j, '\n'))
	}
	p := filepath.Join(t.TempDir(), "results.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAsk(t *testing.T) {
	ctx := context.Background()
	file := lines(t)
	st, err := Open(ctx, "", []string{file})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []struct {
		name, fp string
		f        results.Filter
		format   string
		want     string
	}{
		{Rules, "", results.Filter{}, "csv", "rule,bundles,findings,max_severity,first,last\n" +
			"r1,2,2,error,2026-11-01T23:59:59Z,2026-11-02T00:00:00Z\nr2,1,1,warning,2026-11-01T23:59:59Z,2026-11-01T23:59:59Z\n"},
		{Weeks, "", results.Filter{Rule: "r2"}, "csv", "group,bundles,matching,findings\n2026-W44,1,1,1\n2026-W45,1,0,0\nunknown,1,0,0\n"},
		{Versions, "", results.Filter{}, "table", "WITH FINDINGS"},
		{Fingerprints, "", results.Filter{}, "table", "│ fp1 "},
		{Bundles, "fp1", results.Filter{Since: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}, "csv",
			"bundle,rule,severity,title,bundle_time,kubernetes_version\nb.tar.gz,r1,warning,\"one, b\",2026-11-02T00:00:00Z,v1.30.0\n"},
		{Bundles, "feedfeedfeedfeed", results.Filter{}, "json", "[]\n"},
		{Bundles, "feedfeedfeedfeed", results.Filter{}, "table", ""},
	} {
		a, err := Ask(ctx, st, c.name, c.fp, c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var b bytes.Buffer
		if err := a.Write(&b, c.format, 0); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); c.format == "table" && c.want != "" && !strings.Contains(got, c.want) || c.format != "table" && got != c.want ||
			c.want == "" && got != "" {
			t.Errorf("%s %s -o %s:\n%s\nwant %q", c.name, c.fp, c.format, got, c.want)
		}
	}
	if _, err := Ask(ctx, st, "nope", "", results.Filter{}); err == nil {
		t.Error("an unknown query: no error")
	}
	// A JSON Lines file given as a database is named as such.
	if _, err := Open(ctx, file, nil); err == nil || !strings.Contains(err.Error(), "holds JSON Lines, not a database") {
		t.Errorf("Open(--db %s): %v", file, err)
	}
}

func TestEmpty(t *testing.T) {
	since := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, fp string
		f        results.Filter
		want     string
	}{
		{Bundles, "fp9", results.Filter{}, "no bundle has the finding fp9 in these results"},
		{Rules, "", results.Filter{Rule: "r1", Since: since}, "no finding of rule r1, from 2030-01-01T00:00:00Z in these results"},
		{Weeks, "", results.Filter{Rule: "r1", Until: since}, "no bundle before 2030-01-01T00:00:00Z in these results"},
	} {
		if got := Empty(c.name, c.fp, c.f); got != c.want {
			t.Errorf("Empty(%s) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"":                          {},
		"2026-11-01":                time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		"2026-11-01T08:00:00+01:00": time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC),
		"2026-W44":                  time.Date(2026, 10, 26, 0, 0, 0, 0, time.UTC),
		"2026-W01":                  time.Date(2025, 12, 29, 0, 0, 0, 0, time.UTC),
		"2026-W53":                  time.Date(2026, 12, 28, 0, 0, 0, 0, time.UTC),
		"2027-W01":                  time.Date(2027, 1, 4, 0, 0, 0, 0, time.UTC),
	} {
		got, err := ParseTime(in)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC && !got.IsZero() {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"2026-13-01", "2026-W00", "2027-W53", "2026-W4", "W44", "yesterday", "2026-11-01 08:00"} {
		if got, err := ParseTime(in); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", in, got)
		}
	}
}
