package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/fit"
)

// fitFixtures are the fixtures the terminal-width test runs on: every
// incident, every seed, the captures and the real-world files.
func fitFixtures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, name := range incidentsAndSeeds(t) {
		out = append(out, fixture(name))
	}
	return append(out, fixture("captures"), fixture("real"))
}

// incidentsAndSeeds are every incident and every seed fixture, by path
// relative to fixtures/ ("incidents/stale-dnat").
func incidentsAndSeeds(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{"incidents", "seeds"} {
		entries, err := os.ReadDir(fixture(dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				out = append(out, dir+"/"+e.Name())
			}
		}
	}
	if len(out) < 40 {
		t.Fatalf("found %d fixtures, want the incidents and seeds", len(out))
	}
	return out
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// widest is the width of the widest line of s, colour escapes left out.
func widest(s string) (int, string) {
	w, line := 0, ""
	for _, l := range strings.Split(ansi.ReplaceAllString(s, ""), "\n") {
		if lw := fit.Width(l); lw > w {
			w, line = lw, l
		}
	}
	return w, line
}

// roomFixtures are the fixtures on which the output at 200 columns is
// held to use the room: at 80 columns every fixture is run.
var roomFixtures = []string{"incidents/stale-dnat", "seeds/002-synack-reset", "captures"}

// Every command's output on every fixture fits 80 columns, and at 200 it
// uses the room. The width is given with --width, which sizes stdout and
// stderr as $COLUMNS does (TestEveryCommandFits holds $COLUMNS to the
// same widths), so that the test leaves the environment alone.
func TestOutputFitsTerminalWidth(t *testing.T) {
	t.Parallel()
	commands := [][]string{{"analyze", "--color=always", "--width=80"}, {"flows", "--width=80"}, {"inspect", "--width=80"}}
	lines := filepath.Join(t.TempDir(), "lines.jsonl")
	traced := 0
	all := fitFixtures(t)
	dirs := sampled(t, all)
	for _, dir := range dirs {
		name, _ := filepath.Rel(fixture(""), dir)
		for _, cmd := range commands {
			_, out, stderr := runCLI(t, append(append([]string{}, cmd...), dir)...)
			if strings.TrimSpace(out) == "" && cmd[0] != "flows" {
				t.Errorf("%s %s: no output; stderr:\n%s", cmd[0], name, stderr)
			}
			if cmd[0] == "analyze" {
				// A command is printed whole, however wide.
				out = withoutCommands(out, commandsOf(screenJSON(t, dir)))
			}
			for _, line := range tooWide(t, out, 80) {
				t.Errorf("%s %s at 80 columns: a line is %d wide: %q", cmd[0], name, fit.Width(line), line)
			}
		}
		// diff and trace print on stdout; batch its progress and summary
		// on stderr (its lines, JSON, are not fitted).
		for _, cmd := range traceAndDiff(t, dir) {
			if cmd[1] == "-ojson" {
				continue
			}
			traced += strings.Count(cmd[0], "trace")
			_, out, stderr := runCLI(t, withWidth(cmd, 80)...)
			if strings.TrimSpace(out) == "" {
				t.Errorf("%v: no output; stderr:\n%s", cmd, stderr)
			}
			for _, line := range tooWide(t, out, 80) {
				t.Errorf("%s %s at 80 columns: a line is %d wide: %q", cmd[0], name, fit.Width(line), line)
			}
		}
		_, _, stderr := runCLI(t, "batch", "--width=80", "--fail-on", "never", "--out", lines, dir)
		if !strings.Contains(stderr, " analyzed now, ") && !strings.Contains(stderr, "netmortem batch: ") {
			t.Errorf("batch %s: no progress nor summary on stderr:\n%s", name, stderr)
		}
		if w, line := widest(stderr); w > 80 {
			t.Errorf("batch %s at 80 columns: a line of stderr is %d wide: %q", name, w, line)
		}
	}
	if want := atLeast(10, len(dirs), len(all)); traced < want {
		t.Errorf("trace ran on %d fixtures only, want %d", traced, want)
	}
	var runs [][]string
	for _, name := range sampled(t, roomFixtures) {
		for _, cmd := range commands {
			runs = append(runs, append(cmd[:len(cmd)-1:len(cmd)-1], fixture(name)))
		}
	}
	for _, cmd := range traceAndDiff(t, fixture("incidents/stale-dnat")) {
		if cmd[1] != "-ojson" {
			runs = append(runs, cmd)
		}
	}
	for _, args := range runs {
		name, _ := filepath.Rel(fixture(""), args[len(args)-1])
		_, natural, _ := runCLI(t, withWidth(args, 0)...)
		naturalWidth, _ := widest(natural)
		_, out, _ := runCLI(t, withWidth(args, 200)...)
		w, line := widest(out)
		if w > 200 {
			t.Errorf("%s %s at 200 columns: a line is %d wide: %q", args[0], name, w, line)
		}
		if naturalWidth <= 120 || w <= 120 {
			t.Errorf("%s %s at 200 columns: widest line %d, %d unfitted: the room is not used", args[0], name, w, naturalWidth)
		}
	}
}

func TestColorFlag(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	t.Setenv("NO_COLOR", "")
	_, auto, _ := runCLI(t, "analyze", incident)
	_, always, _ := runCLI(t, "analyze", "--color=always", incident)
	_, never, _ := runCLI(t, "analyze", "--color=never", incident)
	if strings.Contains(auto, "\x1b[") || strings.Contains(never, "\x1b[") {
		t.Errorf("colour written to a pipe (auto) or with --color=never:\n%s", auto)
	}
	if !strings.Contains(always, "\x1b[1;31mERROR\x1b[0m") && !strings.Contains(always, "\x1b[33mWARNING\x1b[0m") {
		t.Errorf("--color=always does not colour the severities:\n%s", always)
	}
	if got := ansi.ReplaceAllString(always, ""); got != never {
		t.Errorf("colour changes more than the escapes:\n%s\nvs\n%s", got, never)
	}
	if code, _, stderr := runCLI(t, "analyze", "--color=sometimes", incident); code != exitUsage || !strings.Contains(stderr, "auto, always or never") {
		t.Errorf("--color=sometimes: exit %d, stderr %q", code, stderr)
	}
	t.Setenv("NO_COLOR", "1")
	if c, err := useColor("auto", os.Stdout); err != nil || c {
		t.Errorf("NO_COLOR set: useColor(auto) = %v, %v, want false", c, err)
	}
}

func TestSkippedSummary(t *testing.T) {
	_, _, stderr := runCLI(t, "analyze", fixture("real"))
	if n := strings.Count(stderr, "skipped "); n != 1 {
		t.Errorf("want one line for the skipped files, got %d:\n%s", n, stderr)
	}
	if !strings.Contains(stderr, "\n  netmortem inspect "+fixture("real")+"\n") {
		t.Errorf("the skipped summary does not give the inspect command on a line of its own:\n%s", stderr)
	}
	// Under -race (half a minute a run of this directory) the quiet run
	// is left to make test's run without it.
	if raceEnabled {
		return
	}
	if _, _, quiet := runCLI(t, "analyze", "-q", fixture("real")); strings.Contains(quiet, "skipped") {
		t.Errorf("-q prints the skipped summary:\n%s", quiet)
	}
}

func TestFittedPathsRelativeToBundle(t *testing.T) {
	t.Setenv("COLUMNS", "200")
	_, out, _ := runCLI(t, "analyze", incident)
	if !strings.Contains(out, "Bundle "+incident) || strings.Count(out, incident) != 1 {
		t.Errorf("want the bundle named once and paths relative to it:\n%s", out)
	}
	if !strings.Contains(out, "capture.pcap#frame=") {
		t.Errorf("evidence positions missing:\n%s", out)
	}
	t.Setenv("COLUMNS", "80")
	_, out, _ = runCLI(t, "inspect", incident)
	if !strings.Contains(out, "folder "+incident+"/") || !strings.Contains(out, "capture.pcap") {
		t.Errorf("inspect does not group by folder:\n%s", out)
	}
}

// fitText wraps the lines too wide, their other lines hanging after the
// marker or two columns in; it keeps every character but the spaces it
// breaks at, and leaves the text as it is without a width.
func TestFitText(t *testing.T) {
	s := "short line\n" +
		"  + error stale-dnat: kube-system/kube-dns:dns-tcp: 1 of 4 NAT targets are stale [d1bbd47a2c6cad9b]\n" +
		"    10.244.1.11:53           25.0%  DNAT at bundle/iptables-save.txt:29 via PREROUTING > KUBE-SERVICES\n"
	if got := fitText(s, 0); got != s {
		t.Errorf("width 0 changed the text:\n%s", got)
	}
	got := fitText(s, 50)
	want := "short line\n" +
		"  + error stale-dnat:\n" +
		"    kube-system/kube-dns:dns-tcp: 1 of 4 NAT\n" +
		"    targets are stale [d1bbd47a2c6cad9b]\n" +
		"    10.244.1.11:53 25.0% DNAT at\n" +
		"      bundle/iptables-save.txt:29 via PREROUTING >\n" +
		"      KUBE-SERVICES\n"
	if got != want {
		t.Errorf("fitted to 50:\n%s\nwant:\n%s", got, want)
	}
	if w, line := widest(fitText(s, 30)); w > 30 {
		t.Errorf("fitted to 30, a line is %d wide: %q", w, line)
	}
	// Words too long for the width are cut, none is lost.
	if a, b := strings.Join(strings.Fields(fitText(s, 30)), ""), strings.Join(strings.Fields(s), ""); a != b {
		t.Errorf("text changed: %q, want %q", a, b)
	}
}

// The count of skipped inputs agrees with the files the summary names: a
// bundle's Markdown documentation is in neither.
func TestSkippedCountLeavesDocumentationOut(t *testing.T) {
	_, _, stderr := runCLI(t, "analyze", fixture("incidents/conntrack-stale-udp"))
	if !strings.Contains(stderr, "skipped 1 file ") || !strings.Contains(stderr, "(1 skipped)") {
		t.Errorf("want one skipped file, named and counted alike:\n%s", stderr)
	}
}

// withWidth is the command line args (a command and its arguments) with
// --width=n after the command.
func withWidth(args []string, n int) []string {
	return append([]string{args[0], "--width=" + strconv.Itoa(n)}, args[1:]...)
}
