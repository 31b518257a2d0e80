package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// withStdin makes r what "-" reads for the rest of the test.
func withStdin(t *testing.T, r io.Reader) {
	t.Helper()
	old := stdin
	stdin = r
	t.Cleanup(func() { stdin = old })
}

type jsonReport struct {
	Findings []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
		Evidence []struct {
			File string `json:"file"`
		} `json:"evidence"`
	} `json:"findings"`
	Inputs []struct {
		Path    string `json:"path"`
		Format  string `json:"format"`
		Records int    `json:"records"`
		Skipped string `json:"skipped"`
	} `json:"inputs"`
}

func decodeReport(t *testing.T, out string) jsonReport {
	t.Helper()
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return rep
}

func (r jsonReport) rules() []string {
	var rules []string
	for _, f := range r.Findings {
		rules = append(rules, f.Rule+"/"+f.Severity)
	}
	slices.Sort(rules)
	return rules
}

// TestAnalyzeStdinArchive pipes the incident as a tar.gz into analyze -:
// the same findings as the directory gives, their evidence in
// <stdin>!member.
func TestAnalyzeStdinArchive(t *testing.T) {
	code, out, stderr := runCLI(t, "analyze", "-o", "json", incident)
	if code != exitFindings {
		t.Fatalf("directory: exit %d\n%s", code, stderr)
	}
	want := decodeReport(t, out).rules()
	withStdin(t, bytes.NewReader(testutil.TarGzDir(t, incident)))
	code, out, stderr = runCLI(t, "analyze", "-o", "json", "-")
	if code != exitFindings {
		t.Fatalf("stdin: exit %d, want %d\n%s", code, exitFindings, stderr)
	}
	rep := decodeReport(t, out)
	if got := rep.rules(); len(got) == 0 || !slices.Equal(got, want) {
		t.Errorf("stdin findings %v, the directory's %v", got, want)
	}
	prefix := "<stdin>!" + filepath.Base(incident) + "/"
	for _, f := range rep.Findings {
		for _, e := range f.Evidence {
			if !strings.HasPrefix(e.File, prefix) {
				t.Errorf("%s: evidence in %q, want under %s", f.Rule, e.File, prefix)
			}
		}
	}
}

// TestInspectStdinFiles pipes single files: kubectl JSON as it is and a
// gzip'd capture, sniffed like any file and named <stdin>; a file given
// beside "-" is read too.
func TestInspectStdinFiles(t *testing.T) {
	for _, tc := range []struct{ file, format string }{
		{filepath.Join(incident, "services.json"), "kubectl"},
		{fixture("captures/handshakes.pcap.gz"), "pcap"},
	} {
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		withStdin(t, bytes.NewReader(b))
		sysctl := filepath.Join(incident, "sysctl.txt")
		code, out, stderr := runCLI(t, "inspect", "-o", "json", "-", sysctl)
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s", tc.file, code, stderr)
		}
		rep := decodeReport(t, out)
		var paths []string
		for _, in := range rep.Inputs {
			paths = append(paths, in.Path)
			if in.Path == "<stdin>" && (in.Format != tc.format || in.Records == 0) {
				t.Errorf("%s on stdin: %+v, want %s with records", tc.file, in, tc.format)
			}
		}
		if !slices.Contains(paths, "<stdin>") || !slices.Contains(paths, sysctl) {
			t.Errorf("%s: inputs %q, want <stdin> and %s", tc.file, paths, sysctl)
		}
	}
}

func TestStdinRefused(t *testing.T) {
	withStdin(t, strings.NewReader("net.core.somaxconn = 4096\n"))
	if code, _, stderr := runCLI(t, "analyze", "-", "-"); code != exitUsage || !strings.Contains(stderr, "given twice") {
		t.Errorf("analyze - -: exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, stderr := runCLI(t, "batch", "--out", out, incident, "-")
	if code != exitUsage || !strings.Contains(stderr, "cannot be a batch bundle") {
		t.Errorf("batch -: exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	if b, _ := os.ReadFile(out); len(b) != 0 {
		t.Errorf("batch - wrote lines: %s", b)
	}
}

// globTree writes sysctl dumps at several depths, one under a hidden
// directory, and returns the root.
func globTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range []string{"a/one.txt", "a/b/two.txt", "a/b/c/d/three.txt", "a/.hidden/four.txt", "a/b/notes.md"} {
		p = filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("net.core.somaxconn = 4096\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestGlobs expands ** over nested directories in inspect and batch, and
// says when a pattern matches nothing.
func TestGlobs(t *testing.T) {
	root := globTree(t)
	code, out, stderr := runCLI(t, "inspect", "-o", "json", filepath.Join(root, "**", "*.txt"))
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var got []string
	for _, in := range decodeReport(t, out).Inputs {
		got = append(got, strings.TrimPrefix(filepath.ToSlash(in.Path), filepath.ToSlash(root)+"/"))
	}
	slices.Sort(got)
	if want := []string{"a/b/c/d/three.txt", "a/b/two.txt", "a/one.txt"}; !slices.Equal(got, want) {
		t.Errorf("inspect '**/*.txt' read %q, want %q (not the hidden directory, not notes.md)", got, want)
	}

	// Two patterns matching the same file read it once.
	code, out, _ = runCLI(t, "inspect", "-o", "json", filepath.Join(root, "a", "**", "two.txt"), filepath.Join(root, "a", "b", "*.txt"))
	if n := len(decodeReport(t, out).Inputs); code != exitOK || n != 1 {
		t.Errorf("overlapping patterns: exit %d, %d inputs, want 1", code, n)
	}

	none := filepath.Join(root, "**", "*.pcap")
	for _, cmd := range []string{"analyze", "inspect"} {
		code, _, stderr := runCLI(t, cmd, none, filepath.Join(root, "a", "one.txt"))
		if code != exitUnreadable || !strings.Contains(stderr, none+": no path matches this pattern") {
			t.Errorf("%s with a pattern matching nothing: exit %d, want %d\n%s", cmd, code, exitUnreadable, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "analyze", filepath.Join(root, "[")); code != exitUsage || !strings.Contains(stderr, "syntax error in pattern") {
		t.Errorf("malformed pattern: exit %d, want %d\n%s", code, exitUsage, stderr)
	}

	res := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, stderr = runCLI(t, "batch", "-q", "--out", res, filepath.Join(root, "**", "*.txt"), none)
	if code != exitUnreadable {
		t.Errorf("batch: exit %d, want %d (a pattern matched nothing)\n%s", code, exitUnreadable, stderr)
	}
	status := map[string]string{}
	for _, l := range readJSONL(t, res) {
		status[strings.TrimPrefix(filepath.ToSlash(l.Bundle), filepath.ToSlash(root)+"/")] = l.Status + " " + l.Error
	}
	want := map[string]string{"a/one.txt": "ok ", "a/b/two.txt": "ok ", "a/b/c/d/three.txt": "ok ",
		"**/*.pcap": "unreadable no path matches this pattern"}
	if len(status) != len(want) {
		t.Errorf("batch lines %q, want %q", status, want)
	}
	for k, v := range want {
		if status[k] != v {
			t.Errorf("batch %s: %q, want %q", k, status[k], v)
		}
	}
}

// TestGlobLiteral: an operand naming an existing file is that file, even
// when its name holds glob characters.
func TestGlobLiteral(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "sysctl[1].txt")
	if err := os.WriteFile(odd, []byte("net.core.somaxconn = 4096\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "inspect", "-o", "json", odd)
	if rep := decodeReport(t, out); code != exitOK || len(rep.Inputs) != 1 || rep.Inputs[0].Path != odd {
		t.Errorf("exit %d, inputs %+v\n%s", code, rep.Inputs, stderr)
	}
}
