package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
)

// -q hides progress only: the warnings, the rule errors, the reasons a
// report is incomplete and the errors are printed with it as without it.
func TestQuietHidesProgressOnly(t *testing.T) {
	seed := fixture("seeds/003-lb-controller-conflict")
	_, _, loud := runCLI(t, "analyze", "-o", "json", seed)
	_, _, quiet := runCLI(t, "analyze", "-q", "-o", "json", seed)
	if !hasLineStarting(loud, "read ") || hasLineStarting(quiet, "read ") {
		t.Errorf("the progress line is not shown without -q, or shown with it:\n%s\n--- -q:\n%s", loud, quiet)
	}
	warning := "warning: " + seed + "/nginx-error.log:1:"
	if !strings.Contains(loud, warning) || !strings.Contains(quiet, warning) {
		t.Errorf("-q hides the warning %q:\n%s", warning, quiet)
	}

	code, _, stderr := runCLI(t, "analyze", "-q", "-o", "json", "--timeout", "1ns", incident)
	if code != exitUnreadable {
		t.Errorf("--timeout 1ns: exit %d, want %d", code, exitUnreadable)
	}
	for _, want := range []string{"rules did not run to the end (synack-reset, ", "the 1ns time budget (--timeout) ran out after"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("-q hides %q:\n%s", want, stderr)
		}
	}
	if hasLineStarting(stderr, "read ") {
		t.Errorf("-q prints the progress line:\n%s", stderr)
	}

	_, _, stderr = runCLI(t, "flows", "-q", "-o", "csv", fixture("captures"))
	if !strings.Contains(stderr, "warning: "+fixture("captures/text/handshakes.tcpdump-q.txt")+":1: ") {
		t.Errorf("flows -q hides the warnings:\n%s", stderr)
	}
}

// hasLineStarting reports whether a line of s starts with prefix.
func hasLineStarting(s, prefix string) bool {
	return strings.HasPrefix(s, prefix) || strings.Contains(s, "\n"+prefix)
}

// batch -q prints no progress, but a bundle that does not exist is an
// error: said once, naming it, and the exit code says so. One that was
// read is not mentioned.
func TestBatchQuietSaysMissing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "tickets", "4711.tar.gz")
	code, _, stderr := runCLI(t, "batch", "-q", "--out", filepath.Join(dir, "r.jsonl"), missing, incident)
	if code != exitUnreadable {
		t.Errorf("exit %d, want %d", code, exitUnreadable)
	}
	want := "netmortem batch: " + missing + ": unreadable: no such file or directory\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
	// A pattern matching nothing too.
	pattern := filepath.Join(dir, "*.tar.gz")
	code, _, stderr = runCLI(t, "batch", "-q", "--out", filepath.Join(dir, "p.jsonl"), pattern)
	if code != exitUnreadable || strings.Count(stderr, pattern) != 1 {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// The rules a run cut short stopped or kept from running are one line,
// whatever their number; a rule that failed on its own is a line of its
// own, before it.
func TestSayRuleErrors(t *testing.T) {
	cut := func(rule string) analyzer.RuleError {
		return analyzer.RuleError{Rule: rule, Err: context.DeadlineExceeded.Error()}
	}
	for _, tc := range []struct {
		errs []analyzer.RuleError
		want string
	}{
		{nil, ""},
		{[]analyzer.RuleError{cut("a")}, "error: rule a: context deadline exceeded\n"},
		{[]analyzer.RuleError{cut("a"), {Rule: "b", Err: "index out of range"}, cut("c"), cut("d"), cut("e"), cut("f")},
			"error: rule b: index out of range\nerror: 5 rules did not run to the end (a, c, d and 2 more): context deadline exceeded\n"},
		{[]analyzer.RuleError{cut("a"), cut("b")}, "error: 2 rules did not run to the end (a, b): context deadline exceeded\n"},
	} {
		var out strings.Builder
		sayRuleErrors(&out, tc.errs)
		if out.String() != tc.want {
			t.Errorf("%v:\n%s\nwant:\n%s", tc.errs, out.String(), tc.want)
		}
	}
}
