package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// cutPercents are where TestCutEvidence cuts every archive and capture.
var cutPercents = []int{10, 30, 50, 70, 90}

// A cutCase is one piece of cut evidence: a bundle (a tar, a tar.gz, or a
// directory with one file cut) and the intact bundle it was cut from.
type cutCase struct {
	name   string // what was cut, and where
	path   string // the cut bundle
	intact string // the intact bundle of the same form
}

// cutReport is what TestCutEvidence reads of a JSON report.
type cutReport struct {
	Incomplete []string `json:"incomplete"`
	Findings   []struct {
		Rule        string         `json:"rule"`
		Fingerprint string         `json:"fingerprint"`
		Severity    string         `json:"severity"`
		Title       string         `json:"title"`
		Facts       map[string]any `json:"facts"`
	} `json:"findings"`
}

// TestCutEvidence: evidence cut short is never taken for whole. Every
// incident bundle is made a tar and a tar.gz, cut at 10/30/50/70/90% of
// its bytes and (the tar, and the tar piped through gzip) at every member
// boundary; its capture is cut at the same percentages and each of its
// end-marked text files (iptables-save tables, JSON documents) before its
// end marker. Each cut must be marked incomplete (the JSON report's
// incomplete, the table's first line), must not exit 0, and must not give
// a finding at warning or above that the intact bundle has not unless the
// finding names the cut it rests on (facts.incomplete). One cut of each
// bundle is checked in every format.
func TestCutEvidence(t *testing.T) {
	t.Parallel()
	start := time.Now()
	dirs, err := filepath.Glob(fixture("incidents/*"))
	if err != nil {
		t.Fatal(err)
	}
	all := len(dirs)
	dirs = sampled(t, dirs)
	tmp := t.TempDir()
	refs := map[string]cutReport{}
	var cases, everyFormat []cutCase
	for _, dir := range dirs {
		name := filepath.Base(dir)
		files := readTree(t, dir)
		tarb, bounds := tarOf(t, name, files)
		intactTar := writeFile(t, filepath.Join(tmp, name+".tar"), tarb)
		intactGz := writeFile(t, filepath.Join(tmp, name+".tar.gz"), gzipOf(t, tarb))
		gz := gzipOf(t, tarb)
		for _, pct := range cutPercents {
			p := filepath.Join(tmp, fmt.Sprintf("%s-%d.tar", name, pct))
			cases = append(cases, cutCase{fmt.Sprintf("%s.tar at %d%%", name, pct), writeFile(t, p, tarb[:len(tarb)*pct/100]), intactTar})
			p = filepath.Join(tmp, fmt.Sprintf("%s-%d.tar.gz", name, pct))
			cases = append(cases, cutCase{fmt.Sprintf("%s.tar.gz at %d%%", name, pct), writeFile(t, p, gz[:len(gz)*pct/100]), intactGz})
			if pct == 50 {
				everyFormat = append(everyFormat, cases[len(cases)-1])
			}
		}
		for i, b := range bounds {
			p := filepath.Join(tmp, fmt.Sprintf("%s-m%d.tar", name, i))
			cases = append(cases, cutCase{fmt.Sprintf("%s.tar after member %d", name, i), writeFile(t, p, tarb[:b]), intactTar})
			p = filepath.Join(tmp, fmt.Sprintf("%s-m%d.tar.gz", name, i))
			cases = append(cases, cutCase{fmt.Sprintf("%s.tar.gz after member %d", name, i), writeFile(t, p, gzipOf(t, tarb[:b])), intactGz})
		}
		// One file of the directory cut, the others whole.
		for _, rel := range slices.Sorted(mapKeys(files)) {
			b := files[rel]
			var cuts map[string][]byte
			switch {
			case strings.HasSuffix(rel, ".pcap") || strings.HasSuffix(rel, ".pcapng"):
				cuts = map[string][]byte{}
				for _, pct := range cutPercents {
					cuts[fmt.Sprintf("%d%%", pct)] = b[:len(b)*pct/100]
				}
			case bytes.Contains(b, []byte("\nCOMMIT")):
				i := bytes.LastIndex(b, []byte("\nCOMMIT"))
				cuts = map[string][]byte{"before its last COMMIT": b[:i+1]}
			case strings.HasSuffix(rel, ".json"):
				end := bytes.TrimRight(b, " \t\r\n")
				i := bytes.LastIndexByte(end, '\n')
				if i < 0 {
					continue
				}
				cuts = map[string][]byte{"before its closing line": b[:i+1]}
			}
			for where, cb := range cuts {
				d := filepath.Join(tmp, fmt.Sprintf("%s-%s-%s", name, strings.ReplaceAll(rel, "/", "_"), strings.Trim(where, "% ")))
				d = strings.ReplaceAll(d, " ", "-")
				for r, fb := range files {
					if r == rel {
						fb = cb
					}
					writeFile(t, filepath.Join(d, r), fb)
				}
				cases = append(cases, cutCase{fmt.Sprintf("%s/%s cut %s", name, rel, where), d, dir})
			}
		}
	}

	var failed, incomplete, exit1, excused int
	excusedBy := map[string]int{} // rule: findings that name the cut they rest on
	for _, c := range cases {
		ref, ok := refs[c.intact]
		if !ok {
			ref = analyzeCut(t, c.intact, nil)
			refs[c.intact] = ref
		}
		var table bytes.Buffer
		got := analyzeCut(t, c.path, &table)
		bad := func(format string, args ...any) {
			t.Helper()
			failed++
			t.Errorf("%s: %s", c.name, fmt.Sprintf(format, args...))
		}
		if len(got.Incomplete) == 0 {
			bad("not marked incomplete in -o json")
			continue
		}
		incomplete++
		first, _, _ := strings.Cut(table.String(), "\n")
		if !strings.HasPrefix(first, "Incomplete: ") && !strings.HasPrefix(first, "No findings in what could be read") {
			bad("the table's first line %q does not say the analysis is incomplete", first)
		}
		had := map[string]bool{}
		for _, f := range ref.Findings {
			if f.Severity != "info" {
				had[f.Fingerprint] = true
			}
		}
		for _, f := range got.Findings {
			if f.Severity == "info" || had[f.Fingerprint] {
				continue
			}
			if _, named := f.Facts["incomplete"]; named {
				excused++
				excusedBy[f.Rule]++
				t.Logf("%s: %s %s, named incomplete-derived: %s", c.name, f.Severity, f.Rule, f.Title)
				continue
			}
			bad("a %s finding the intact bundle has not: %s: %s", f.Severity, f.Rule, f.Title)
		}
		if len(got.Findings) > 0 {
			exit1++
		}
	}
	for _, c := range everyFormat {
		checkEveryFormat(t, c)
	}
	t.Logf("%d cuts of %d bundles (%d of %d sampled): %d marked incomplete, %d with findings, %d findings named incomplete-derived %v, %d failures, in %s",
		len(cases), len(dirs), len(dirs), all, incomplete, exit1, excused, excusedBy, failed, time.Since(start).Round(time.Millisecond))
}

// analyzeCut runs analyze on a bundle, writing its JSON report to a file
// and its table to table (when not nil), and returns the report. An exit
// 0 fails t when the report is incomplete.
func analyzeCut(t *testing.T, bundle string, table *bytes.Buffer) cutReport {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.json")
	args := []string{"analyze", "-q", "-o", "json=" + out}
	if table != nil {
		args = append(args, "-o", "table")
	}
	code, stdout, stderr := runCLI(t, append(args, bundle)...)
	if table != nil {
		table.WriteString(stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("analyze %s: exit %d, no report: %v\n%s", bundle, code, err, stderr)
	}
	var r cutReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Incomplete) > 0 && code == exitOK {
		t.Errorf("analyze %s: exit 0 with the report incomplete: %q", bundle, r.Incomplete)
	}
	return r
}

// checkEveryFormat checks that every format says the analysis of a cut
// bundle is incomplete.
func checkEveryFormat(t *testing.T, c cutCase) {
	t.Helper()
	dir := t.TempDir()
	want := map[string]func(string) bool{
		"yaml":  func(s string) bool { return strings.Contains(s, "\nincomplete:\n  - ") },
		"sarif": func(s string) bool { return strings.Contains(s, `"executionSuccessful": false`) },
		"markdown": func(s string) bool {
			return strings.HasPrefix(s, "## netmortem findings\n\n**The analysis is incomplete**")
		},
		"text": func(s string) bool { return strings.HasPrefix(s, "-:0:0: incomplete: ") },
		"html": func(s string) bool { return strings.Contains(s, `<div class="incomplete" role="alert">`) },
	}
	args := []string{"analyze", "-q"}
	for f := range want {
		args = append(args, "-o", f+"="+filepath.Join(dir, f))
	}
	runCLI(t, append(args, c.path)...)
	for f, ok := range want {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("%s: -o %s: %v", c.name, f, err)
			continue
		}
		if !ok(string(b)) {
			t.Errorf("%s: -o %s does not say the analysis is incomplete:\n%.600s", c.name, f, b)
		}
	}
}

// readTree reads the regular files under dir, by their path relative to
// it.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// tarOf makes a tar of files under the directory name, in the order of
// their names, and returns it with the offsets where each member but the
// last ends (the boundaries a cut can stop at without tar's end blocks).
func tarOf(t *testing.T, name string, files map[string][]byte) ([]byte, []int) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var bounds []int
	mod := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, rel := range slices.Sorted(mapKeys(files)) {
		if i > 0 {
			if err := tw.Flush(); err != nil {
				t.Fatal(err)
			}
			bounds = append(bounds, buf.Len())
		}
		b := files[rel]
		if err := tw.WriteHeader(&tar.Header{Name: name + "/" + rel, Mode: 0o644, Size: int64(len(b)), ModTime: mod, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), bounds
}

func gzipOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeFile writes b to p, making its directory, and returns p.
func writeFile(t *testing.T, p string, b []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// A batch of cut bundles gives each the status incomplete, naming its cut,
// counts them in its summary, and exits 3 when no finding decides.
func TestBatchCutBundles(t *testing.T) {
	dir := t.TempDir()
	var bundles []string
	for _, name := range []string{"ephemeral-nodeport-control", "stale-dnat-control", "lb-conflict-control"} {
		tarb, _ := tarOf(t, name, readTree(t, fixture("incidents/"+name)))
		gz := gzipOf(t, tarb)
		bundles = append(bundles, writeFile(t, filepath.Join(dir, name+".tar.gz"), gz[:len(gz)/2]))
	}
	out := filepath.Join(dir, "results.jsonl")
	code, _, stderr := runCLI(t, append([]string{"batch", "--fail-on", "never", "--out", out}, bundles...)...)
	if code != exitUnreadable {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUnreadable, stderr)
	}
	lines := readJSONL(t, out)
	if len(lines) != len(bundles) {
		t.Fatalf("%d lines, want %d", len(lines), len(bundles))
	}
	for _, l := range lines {
		if l.Status != "incomplete" || !strings.Contains(l.Error, filepath.Base(l.Bundle)+": archive not read to its end") {
			t.Errorf("%s: status %q, error %q", l.Bundle, l.Status, l.Error)
		}
	}
	if !strings.Contains(stderr, "0 unreadable, refused or over budget, 3 incomplete") {
		t.Errorf("summary does not count the incomplete bundles:\n%s", stderr)
	}
}
