package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/internal/testutil"
)

// docs/collect.md is what netmortem collect-script --doc writes.
func TestCollectDocCurrent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "docs", "collect.md"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "collect-script", "--doc")
	if code != exitOK || stderr != "" {
		t.Fatalf("collect-script --doc: exit %d, %s", code, stderr)
	}
	if stdout != string(b) {
		t.Error("docs/collect.md is stale: run make docs")
	}
}

// collect-script prints the script its flags ask for, and refuses bad
// values as usage errors.
func TestCollectScriptFlags(t *testing.T) {
	code, stdout, stderr := runCLI(t, "collect-script", "--capture-seconds", "7", "--capture-size", "3", "--filter", "not port 22",
		"--kubectl", "--conntrack-max", "99")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	for _, want := range []string{"timeout 7 tcpdump", "-C 3 -W 1", `'\''not port 22'\''`, "head -n 99", "nm_run 'kubectl-objects'",
		"script version " + collect.ScriptVersion} {
		if !strings.Contains(stdout, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	_, plain, _ := runCLI(t, "collect-script")
	if strings.Contains(plain, "nm_run 'kubectl-") {
		t.Error("without --kubectl the script runs kubectl")
	}
	for _, args := range [][]string{
		{"collect-script", "--capture-seconds", "-1"},
		{"collect-script", "--capture-size", "0"},
		{"collect-script", "--conntrack-max", "x"},
		{"collect-script", "extra"},
	} {
		if code, _, stderr := runCLI(t, args...); code != exitUsage || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want a usage error", args, code, stderr)
		}
	}
}
