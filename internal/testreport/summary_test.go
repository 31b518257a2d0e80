package main

import (
	"os"
	"strings"
	"testing"
)

// The streams in testdata are go test -json's own, of a package whose
// tests pass, fail and skip for two reasons, one of them in a subtest.
func TestSkips(t *testing.T) {
	s, out := readStream(t, "testdata/skips.jsonl")
	s.write(out)
	want := "ok  \tgithub.com/netmortem/netmortem/p\t"
	if got := out.String(); !strings.HasPrefix(got, want) {
		t.Errorf("output starts %q, want %q", got, want)
	}
	wantLines(t, out,
		"skipped: 3 tests, for 2 reasons:\n",
		"  2: MinIO is not installed (make test-servers) (p.TestB, p.TestD/x)\n",
		"  1: the shared corpus is absent: ../shared/corpus (p.TestC)\n",
	)
	if strings.Contains(out.String(), "=== RUN") || strings.Contains(out.String(), "--- SKIP") {
		t.Errorf("output is verbose:\n%s", out.String())
	}
	if s.failed != 0 {
		t.Errorf("failed = %d, want 0", s.failed)
	}
}

func TestFailure(t *testing.T) {
	s, out := readStream(t, "testdata/fail.jsonl")
	if s.failed == 0 {
		t.Error("a failed test is not counted")
	}
	wantLines(t, out, "--- FAIL: TestA", "boom", "FAIL\tgithub.com/netmortem/netmortem/p")
}

func TestNotJSON(t *testing.T) {
	var out strings.Builder
	_, err := read(strings.NewReader("# pkg\n{oops\n"), &out)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v, want one at line 2", err)
	}
	if out.String() != "# pkg\n" {
		t.Errorf("text lines are not passed on: %q", out.String())
	}
}

// A package that times out ends without the events of its running tests;
// the panic that says so, with the tests it names, is printed all the same.
func TestTimeout(t *testing.T) {
	s, out := readStream(t, "testdata/timeout.jsonl")
	if s.failed != 1 {
		t.Errorf("failed = %d, want 1 (the package)", s.failed)
	}
	wantLines(t, out, "--- UNFINISHED: TestSlowA\n", "reading every fixture", "--- UNFINISHED: TestSlowB\n",
		"panic: test timed out after 2s\n", "\t\tTestSlowA (2s)\n", "FAIL\tgithub.com/netmortem/netmortem/p")
	if strings.Contains(out.String(), "TestQuick") {
		t.Errorf("a test that passed is printed:\n%s", out.String())
	}
}

// readStream reads the go test -json stream in the file name as main
// does, and returns its summary and what was printed, summary lines aside.
func readStream(t *testing.T, name string) (*summary, *strings.Builder) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := &strings.Builder{}
	s, err := read(f, out)
	if err != nil {
		t.Fatal(err)
	}
	return s, out
}

// wantLines checks that out holds each of lines.
func wantLines(t *testing.T, out *strings.Builder, lines ...string) {
	t.Helper()
	for _, line := range lines {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
}
