package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/internal/testutil"
)

// tooWide returns the lines of out wider than width: all but a command
// printed alone on its line to be pasted ("$ CMD", "netmortem ..."),
// which must be a valid shell command (sh -n).
func tooWide(t *testing.T, out string, width int) []string {
	t.Helper()
	var bad []string
	for _, l := range strings.Split(ansi.ReplaceAllString(out, ""), "\n") {
		if fit.Width(l) <= width {
			continue
		}
		if isPasteLine(l) {
			cmd := strings.TrimPrefix(strings.TrimLeft(l, " "), "$ ")
			if err := exec.Command("sh", "-n", "-c", cmd).Run(); err == nil {
				continue
			}
		}
		// A code span of a fix alone on its line, with the punctuation
		// around it, is printed whole too.
		if t := strings.TrimSpace(l); strings.Count(t, "`") == 2 && strings.Index(t, "`") <= 1 && strings.LastIndex(t, "`") >= len(t)-3 {
			cmd := t[strings.Index(t, "`")+1 : strings.LastIndex(t, "`")]
			if err := exec.Command("sh", "-n", "-c", cmd).Run(); err == nil {
				continue
			}
		}
		bad = append(bad, l)
	}
	return bad
}

// atPipeWidth makes the output of the runs of t fitted to netmortem's
// width for a pipe (TestMain sets no limit).
func atPipeWidth(t *testing.T) {
	old := pipeWidth
	pipeWidth = defaultWidth
	t.Cleanup(func() { pipeWidth = old })
}

// The help of every command, rules and formats fit 80 columns: on a pipe
// without $COLUMNS, with COLUMNS=80 and with --width 80.
func TestEveryCommandFits(t *testing.T) {
	atPipeWidth(t)
	var runs [][]string
	for _, path := range allCommands() {
		runs = append(runs, append(slices.Clip(path), "--help"))
	}
	runs = append(runs, []string{"rules"}, []string{"formats"}, []string{"explain", "stale-dnat"},
		[]string{"inspect", incident}, []string{"flows", incident},
		[]string{"trace", "--dst", "10.96.0.10:53", fixture("incidents/stale-dnat")})
	for _, env := range []string{"", "80"} {
		t.Setenv("COLUMNS", env)
		for _, args := range runs {
			for _, a := range [][]string{args, append([]string{"--width", "80"}, args...)} {
				_, out, stderr := runCLI(t, a...)
				if strings.TrimSpace(out) == "" {
					t.Errorf("%q: no output; stderr:\n%s", a, stderr)
				}
				for _, l := range tooWide(t, out+stderr, 80) {
					t.Errorf("%q (COLUMNS=%q): a line is %d wide: %q", a, env, fit.Width(l), l)
				}
			}
		}
	}
}

// --width sets the width over $COLUMNS; 0 is no limit; a negative width
// is a usage error.
func TestWidthFlag(t *testing.T) {
	t.Setenv("COLUMNS", "120")
	for _, c := range []struct {
		args []string
		max  int
	}{{[]string{"rules"}, 120}, {[]string{"--width", "100", "rules"}, 100}, {[]string{"rules", "--width=60"}, 60},
		{[]string{"formats", "--width", "70"}, 70}, {[]string{"analyze", "--help", "--width", "50"}, 50}} {
		_, out, _ := runCLI(t, c.args...)
		if bad := tooWide(t, out, c.max); len(bad) > 0 {
			t.Errorf("%q: %d lines over %d: %q", c.args, len(bad), c.max, bad[0])
		}
		if w, _ := widest(out); w < c.max*3/4 {
			t.Errorf("%q: widest line %d, the room of %d is not used", c.args, w, c.max)
		}
	}
	_, out, _ := runCLI(t, "rules", "--width", "0")
	if w, _ := widest(out); w < 200 {
		t.Errorf("rules --width 0: widest line %d, want the table at its natural width", w)
	}
	for _, cols := range []string{"abc", "-3"} {
		if code, _, stderr := runCLI(t, "rules", "--width", cols); code != exitUsage || !strings.Contains(stderr, "number of columns") {
			t.Errorf("--width %s: exit %d, stderr %q", cols, code, stderr)
		}
	}
}

// The flags a command's help lists first are its common ones; the
// anonymization's come last, in a section of their own.
func TestHelpFlagOrder(t *testing.T) {
	for _, path := range allCommands() {
		_, out, _ := runCLI(t, append(slices.Clip(path), "--help")...)
		flags, _, _ := strings.Cut(out[strings.Index(out, "\nFlags:\n")+1:], "\n\n")
		if strings.Contains(flags, "--anonymize") {
			t.Errorf("%q: --anonymize flags among the others:\n%s", path, flags)
		}
		if i := strings.Index(out, "\nAnonymization flags:\n"); i >= 0 {
			if j := strings.Index(out, "\n      --anonymize "); j < i || strings.Count(out[i:], "--anonymize") < 4 {
				t.Errorf("%q: the four --anonymize flags are not listed last:\n%s", path, out)
			}
		}
		first := strings.Fields(strings.Split(flags, "\n")[1])
		if strings.Contains(flags, "--output") && !slices.Contains(first, "--output") {
			t.Errorf("%q: --output is not the first flag: %q", path, first)
		}
	}
	_, out, _ := runCLI(t, "trace", "--help")
	if strings.Index(out, "--dst") > strings.Index(out, "--node") {
		t.Errorf("trace --help: --dst after --node:\n%s", out)
	}
}

// The trace walks a node's nat table once, however many dumps of it the
// bundle has, names the bundle once with the paths relative to it, and
// marks the DNAT target the Service's Endpoints no longer list.
func TestTraceOnceAndStale(t *testing.T) {
	atPipeWidth(t)
	dir := fixture("incidents/stale-dnat")
	_, out, stderr := runCLI(t, "trace", "--dst", "10.96.0.10:53", dir)
	if n := strings.Count(out, "destinations:"); n != 1 {
		t.Errorf("%d walks, want one for the node's two dumps of its nat table:\n%s%s", n, out, stderr)
	}
	if !strings.Contains(out, "iptables-nat-nvL.txt holds the same table") {
		t.Errorf("the other dump is not named:\n%s", out)
	}
	if strings.Count(out, dir) != 1 || !strings.HasPrefix(out, "Bundle "+dir+" ") {
		t.Errorf("want the bundle named once, the paths relative to it:\n%s", out)
	}
	// Each destination, from its line to the next one's, is marked stale
	// or not.
	_, dests, _ := strings.Cut(out, "destinations:\n")
	for _, d := range strings.Split(dests, "\n    10.")[1:] {
		stale := strings.Contains(d, "stale: not among the ready endpoints of kube-system/kube-dns:dns-tcp")
		if stale != strings.HasPrefix(d, "244.2.7:53 ") {
			t.Errorf("destination 10.%s: marked stale %v, want only 10.244.2.7:53 marked", d, stale)
		}
	}
	if !strings.Contains(out, "endpoints-kube-dns.json") {
		t.Errorf("the Endpoints are not cited:\n%s", out)
	}
	// Without a width, the paths are whole, and the marks still there.
	_, out, _ = runCLI(t, "trace", "--width", "0", "--dst", "10.96.0.10:53", dir)
	if strings.Contains(out, "Bundle ") || !strings.Contains(out, dir+"/iptables-save.txt:14") || !strings.Contains(out, "stale: ") {
		t.Errorf("--width 0:\n%s", out)
	}
}

// inspect does not ask for the static pod manifests a bundle holds, and
// keeps a file's name whole beside a note it wraps.
func TestInspectHoldsManifests(t *testing.T) {
	_, out, _ := runCLI(t, "inspect", "-o", "json", incident)
	var in struct {
		NextEvidence []struct {
			Shell string `json:"shell"`
		} `json:"next_evidence"`
	}
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatal(err)
	}
	for _, e := range in.NextEvidence {
		if strings.Contains(e.Shell, "/etc/kubernetes/manifests") {
			t.Errorf("asks for the manifests kube-apiserver.yaml gives: %q", e.Shell)
		}
	}
	t.Setenv("COLUMNS", "80")
	_, out, _ = runCLI(t, "inspect", incident)
	if !strings.Contains(out, "│ kube-apiserver.yaml │") || !strings.Contains(out, " documentation ") {
		t.Errorf("a file's name or a note's word is cut:\n%s", out)
	}
	// Every command to collect is printed whole on its line, however
	// wide, as the JSON gives it.
	dir := fixture("incidents/stale-dnat")
	_, js, _ := runCLI(t, "inspect", "-o", "json", dir)
	if err := json.Unmarshal([]byte(js), &in); err != nil || len(in.NextEvidence) < 5 {
		t.Fatalf("inspect -o json: %v, %d commands", err, len(in.NextEvidence))
	}
	_, out, _ = runCLI(t, "inspect", dir)
	for _, e := range in.NextEvidence {
		if !strings.Contains(out, "\n    $ "+e.Shell+"\n") {
			t.Errorf("command %q not printed whole:\n%s", e.Shell, out)
		}
	}
}

// A capture whose header cannot be read is named once in its warning, and
// the reasons the analysis is incomplete say it once.
func TestUnreadableCaptureSaidOnce(t *testing.T) {
	atPipeWidth(t)
	path := filepath.Join(t.TempDir(), "hdr.pcap")
	if err := os.WriteFile(path, []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "analyze", path)
	if code != exitUnreadable || !strings.Contains(stderr, "warning: "+path+": pcap header: ") || strings.Contains(stderr, path+": "+path) {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(out, "1 capture could not be read: hdr.pcap") || strings.Contains(out, "no input could be read") {
		t.Errorf("want the capture said unreadable once:\n%s", out)
	}
}

// flows says that a file of another format is not a capture, not that its
// content is unrecognized.
func TestFlowsNotCapture(t *testing.T) {
	_, _, stderr := runCLI(t, "flows", fixture("incidents/stale-dnat/iptables-save.txt"))
	if strings.Contains(stderr, "unrecognized") || !strings.Contains(stderr, "iptables-save output (netfilter evidence), not a capture") {
		t.Errorf("stderr:\n%s", stderr)
	}
	junk := filepath.Join(t.TempDir(), "junk.bin")
	if err := os.WriteFile(junk, []byte("\x00\x01\x02 not anything"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, stderr := runCLI(t, "flows", junk); !strings.Contains(stderr, "unrecognized content") {
		t.Errorf("a file no format reads: stderr:\n%s", stderr)
	}
}

// make demo starts with netmortem's output, fits 80 columns, and ends by
// saying the exit code once, without make's or go's own words.
func TestMakeDemo(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	// bin/netmortem is this test binary running netmortem's main; the
	// build step is made a no-op.
	bin := filepath.Join(t.TempDir(), "netmortem")
	script := "#!/bin/sh\n" + processEnv + "=main exec " + os.Args[0] + " \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "--no-print-directory", "demo", "GO=true", "BIN="+bin)
	cmd.Dir = testutil.Root()
	cmd.Env = append(os.Environ(), "COLUMNS=80", "MAKEFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.HasPrefix(s, "read ") || strings.Contains(s, "exit status") || strings.Contains(s, "go build") ||
		!strings.HasSuffix(s, "\nnetmortem exited with 1 (1: findings at or above --fail-on, as expected)\n") {
		t.Errorf("make demo:\n%s", s)
	}
	// The commands of the fix are printed whole on lines of their own.
	for _, l := range tooWide(t, withoutCommands(s, commandsOf(screenJSON(t, incident))), 80) {
		t.Errorf("make demo: a line is %d wide: %q", fit.Width(l), l)
	}
}

// Fitted to 80 columns, the trace's steps give the line in the file its
// heading names, and a step too wide goes on under its chain.
func TestTraceStepsFit(t *testing.T) {
	atPipeWidth(t)
	_, out, _ := runCLI(t, "trace", "--dst", "10.96.0.10:53", fixture("incidents/stale-dnat"))
	for _, want := range []string{
		"\n    100.0%  line 29  KUBE-SERVICES: jump to KUBE-SVC-ERIFXISQEP7F7OF4\n",
		"\n      25.0%   line 31  KUBE-SVC-ERIFXISQEP7F7OF4: statistic 0.25: jump to\n                       KUBE-SEP-IT2ZTR26TO4XFPTO\n",
		"DNAT at line 26 via ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	_, wide, _ := runCLI(t, "--width", "0", "trace", "--dst", "10.96.0.10:53", fixture("incidents/stale-dnat"))
	if strings.Contains(wide, "line 29") || !strings.Contains(wide, "iptables-save.txt:29  KUBE-SERVICES") {
		t.Errorf("at no limit, the positions are not the files':\n%s", wide)
	}
}
