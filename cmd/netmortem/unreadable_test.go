package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnreadableOperandInOutputs: an operand that cannot be read (a
// pattern matching nothing) is in every machine output: a warning at its
// path, a skipped input with why, the reasons the run exits 3; SARIF says
// the run was not successful; the table does not pass the run off as
// clean. A path that does not exist is mistyped: a usage error, said once,
// and nothing is analyzed.
func TestUnreadableOperandInOutputs(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.pcap")
	code, out, stderr := runCLI(t, "analyze", "-q", missing, incident)
	if want := "netmortem analyze: " + missing + ": no such file or directory\n"; code != exitUsage || out != "" || stderr != want {
		t.Errorf("a missing path: exit %d, stdout %q, stderr %q; want exit %d, nothing, and %q", code, out, stderr, exitUsage, want)
	}

	none := filepath.Join(t.TempDir(), "*.nomatch")
	code, out, stderr = runCLI(t, "analyze", "-q", "-o", "json", none, incident)
	if code != exitUnreadable {
		t.Fatalf("exit %d, want %d\n%s", code, exitUnreadable, stderr)
	}
	var rep struct {
		Warnings []struct {
			Position string `json:"position"`
			Pos      struct {
				File string `json:"file"`
			} `json:"pos"`
			Message string `json:"message"`
		} `json:"warnings"`
		Inputs []struct {
			Path    string `json:"path"`
			Skipped string `json:"skipped"`
		} `json:"inputs"`
		Findings   []json.RawMessage `json:"findings"`
		Incomplete []string          `json:"incomplete"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for path, why := range map[string]string{none: "no path matches this pattern"} {
		warned, listed := false, false
		for _, w := range rep.Warnings {
			warned = warned || (w.Position == path && w.Pos.File == path && w.Message == why)
		}
		for _, in := range rep.Inputs {
			listed = listed || (in.Path == path && in.Skipped == why)
		}
		if !warned || !listed {
			t.Errorf("%s: warning %v, skipped input %v; want both, with %q", path, warned, listed, why)
		}
		if !strings.Contains(strings.Join(rep.Incomplete, "\n"), path+": "+why) {
			t.Errorf("incomplete %q lacks %s", rep.Incomplete, path)
		}
	}
	if len(rep.Findings) == 0 {
		t.Errorf("the bundle beside them was not analyzed")
	}

	code, out, _ = runCLI(t, "analyze", "-q", "-o", "sarif", none, incident)
	if code != exitUnreadable || !strings.Contains(out, `"executionSuccessful": false`) || !strings.Contains(out, "incomplete: "+none) {
		t.Errorf("SARIF of a run that exits %d (want %d) says it was successful:\n%.2000s", code, exitUnreadable, out)
	}

	code, out, _ = runCLI(t, "analyze", "-q", none)
	if code != exitUnreadable || strings.Contains(out, "No findings (") || !strings.Contains(out, "incomplete") ||
		!strings.Contains(out, "no input could be read") {
		t.Errorf("table of a run that read nothing (exit %d):\n%s", code, out)
	}

	code, out, _ = runCLI(t, "inspect", "-o", "json", missing, incident)
	if code != exitUnreadable || !strings.Contains(out, `"skipped": "no such file or directory"`) {
		t.Errorf("inspect: exit %d, the missing path not among the inputs:\n%.1500s", code, out)
	}
}

// "--detail 1" reads the 1 as a path, which does not exist: the usage
// error says how to write it. A missing path of another shape gets no
// such hint.
func TestDetailWithSpaceHint(t *testing.T) {
	code, _, stderr := runCLI(t, "analyze", "-q", "--detail", "1", incident)
	if code != exitUsage || !strings.Contains(stderr, "write --detail=1") {
		t.Errorf("--detail 1: exit %d, stderr %q; want exit %d and the --detail=1 hint", code, stderr, exitUsage)
	}
	code, _, stderr = runCLI(t, "analyze", "-q", "--detail", "missing.pcap", incident)
	if code != exitUsage || strings.Contains(stderr, "write --detail=") {
		t.Errorf("--detail missing.pcap: exit %d, stderr %q; want exit %d and no hint", code, stderr, exitUsage)
	}
}

// TestBatchMissingSaidOnce: batch given a path that does not exist beside
// a bundle analyzes the bundle, writes a line of status unreadable for the
// path, exits 3, and says on stderr once that the path does not exist,
// naming it once.
func TestBatchMissingSaidOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	out := filepath.Join(t.TempDir(), "results.jsonl")
	code, _, stderr := runCLI(t, "batch", "--out", out, missing, incident)
	if code != exitUnreadable {
		t.Fatalf("exit %d, want %d\n%s", code, exitUnreadable, stderr)
	}
	status := map[string]string{}
	for _, l := range readJSONL(t, out) {
		status[l.Bundle] = l.Status
	}
	if status[missing] != "unreadable" || status[incident] != "ok" {
		t.Errorf("statuses %v; want the missing path unreadable and the bundle ok", status)
	}
	said := strings.Join(strings.Fields(stderr), " ")
	if strings.Count(said, "no such file or directory") != 1 || strings.Count(said, missing) != 1 ||
		!strings.Contains(said, missing+": unreadable: no such file or directory") {
		t.Errorf("stderr does not say once that %s does not exist:\n%s", missing, stderr)
	}
}
