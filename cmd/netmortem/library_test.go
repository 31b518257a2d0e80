package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/report"
)

// libraryCase is one analysis run through the CLI and through the library.
type libraryCase struct {
	name string
	// args are analyze's flags before the operands, opts the same as
	// netmortem.Options.
	args     []string
	opts     netmortem.Options
	operands []string
	// always runs it under -short and -race too.
	always bool
	// suppressed and incomplete are the least the report must count
	// of either.
	suppressed, incomplete int
}

// libraryFormats are the formats compared.
var libraryFormats = []string{"json", "markdown", "html"}

// TestLibraryMatchesCLI checks that a program calling only netmortem.Analyze
// and report.Write renders, in every format compared, the bytes
// `netmortem analyze` writes: on every fixture bundle, with a
// configuration found beside the bundle and a baseline (suppression),
// with an anonymization key, and with a capture cut before its header and
// a missing operand (incompleteness).
func TestLibraryMatchesCLI(t *testing.T) {
	t.Parallel()
	cases := libraryCases(t)
	if testing.Short() || raceEnabled {
		// The cases of suppression and incompleteness, and one bundle
		// in raceSample.
		var some []libraryCase
		for i, tc := range cases {
			if i%raceSample == 0 || tc.always {
				some = append(some, tc)
			}
		}
		cases = some
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			md, html := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.html")
			args := append([]string{"analyze", "-q", "--fail-on", "never", "-o", "json", "-o", "markdown=" + md, "-o", "html=" + html}, tc.args...)
			code, out, stderr := runCLI(t, append(args, tc.operands...)...)
			if code != exitOK && code != exitUnreadable {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			cli := map[string][]byte{"json": []byte(out), "markdown": readFile(t, md), "html": readFile(t, html)}

			rep, err := netmortem.Analyze(context.Background(), netmortem.Paths(tc.operands...), &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if (code == exitUnreadable) != (len(rep.Incomplete) > 0 || len(rep.Errors) > 0) {
				t.Errorf("exit %d, but the library's report has %d reasons to be incomplete, %d rule errors", code, len(rep.Incomplete), len(rep.Errors))
			}
			if rep.SuppressedCount < tc.suppressed || len(rep.Incomplete) < tc.incomplete {
				t.Errorf("%d suppressed, incomplete %q; want at least %d and %d", rep.SuppressedCount, rep.Incomplete, tc.suppressed, tc.incomplete)
			}
			for _, format := range libraryFormats {
				var b bytes.Buffer
				if err := report.Write(&b, format, rep); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b.Bytes(), cli[format]) {
					t.Errorf("-o %s differs from the library's:\n%s", format, firstDifference(cli[format], b.Bytes()))
				}
			}
		})
	}
}

// libraryCases are the fixture bundles, and the cases of suppression and
// incompleteness.
func libraryCases(t *testing.T) []libraryCase {
	var cases []libraryCase
	for _, dir := range incidentsAndSeeds(t) {
		cases = append(cases, libraryCase{name: dir, operands: []string{fixture(dir)}})
	}
	for _, pattern := range []string{"field/*", "real/*", "real/local/*", "captures", "captures/rotated", "captures/text", "hostile/*", "tshark-truth/*/*"} {
		matches, err := filepath.Glob(fixture(pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			if ext := filepath.Ext(m); ext == ".md" || ext == ".sh" || ext == ".go" {
				continue // the fixtures' documentation and generators
			}
			rel, _ := filepath.Rel(fixture(""), m)
			cases = append(cases, libraryCase{name: rel, operands: []string{m}})
		}
	}

	// Suppression: a configuration beside the bundle that suppresses a
	// finding, and a baseline (the control's report) that suppresses
	// those the control has, listed with --show-suppressed.
	bundle := filepath.Join(t.TempDir(), "stale-dnat")
	copyBundle(t, fixture("incidents/stale-dnat"), bundle, plainCopy)
	config := "ignore:\n  - rule: syn-unanswered\n    reason: known\n"
	if err := os.WriteFile(filepath.Join(bundle, configFile), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	baseline := filepath.Join(t.TempDir(), "baseline.json")
	if code, out, stderr := runCLI(t, "analyze", "-q", "-o", "json", "--fail-on", "never", fixture("incidents/ephemeral-nodeport")); code != exitOK {
		t.Fatalf("baseline: exit %d: %s", code, stderr)
	} else if err := os.WriteFile(baseline, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	cases = append(cases,
		libraryCase{name: "suppressed/config", always: true, suppressed: 1, operands: []string{bundle}},
		libraryCase{name: "suppressed/config-shown", always: true, suppressed: 1, args: []string{"--show-suppressed"}, opts: netmortem.Options{ShowSuppressed: true}, operands: []string{bundle}},
		libraryCase{name: "suppressed/baseline", always: true, suppressed: 1, args: []string{"--baseline", baseline, "--show-suppressed"},
			opts: netmortem.Options{Baseline: baseline, ShowSuppressed: true}, operands: []string{fixture("incidents/ephemeral-nodeport")}},
	)

	// Anonymization with a key: the same tokens.
	cases = append(cases, libraryCase{name: "anonymized/stale-dnat", always: true, args: []string{"--anonymize-key", "k1"},
		opts: netmortem.Options{AnonymizeKey: "k1"}, operands: []string{fixture("incidents/stale-dnat")}})

	// Incompleteness: a capture cut inside its header beside a bundle's
	// evidence, and a pattern that matches nothing.
	cut := filepath.Join(t.TempDir(), "cut")
	copyBundle(t, fixture("incidents/ephemeral-nodeport"), cut, plainCopy)
	hdr := make([]byte, 12)
	binary.LittleEndian.PutUint32(hdr, 0xa1b2c3d4)
	if err := os.WriteFile(filepath.Join(cut, "cut.pcap"), hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, libraryCase{name: "incomplete/cut-capture", always: true, incomplete: 2, operands: []string{cut, filepath.Join(cut, "*.nomatch")}})
	return cases
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// firstDifference shows where a and b first differ.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-80)
	return "cli:     " + string(a[from:min(len(a), i+80)]) + "\nlibrary: " + string(b[from:min(len(b), i+80)])
}
