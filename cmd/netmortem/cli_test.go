package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/buildinfo"
	"github.com/netmortem/netmortem/internal/testutil"
)

// commandNames lists the commands the help lists.
func commandNames() []string {
	var names []string
	for _, cmd := range newRoot(&cli{}).Commands() {
		if cmd.IsAvailableCommand() || cmd.Name() == "help" {
			names = append(names, cmd.Name())
		}
	}
	return names
}

func TestCommandsListed(t *testing.T) {
	want := []string{"analyze", "batch", "collect-script", "completion", "diff", "explain", "flows", "formats", "help", "inspect", "query", "rules", "trace", "version"}
	if got := commandNames(); !slices.Equal(got, want) {
		t.Errorf("commands %v, want %v", got, want)
	}
}

// allCommands lists the path of every command the help lists, nested
// ones too ("completion bash"), after the root's (empty).
func allCommands() [][]string {
	out := [][]string{nil}
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				p := append(slices.Clip(path), sub.Name())
				out = append(out, p)
				walk(sub, p)
			}
		}
	}
	walk(newRoot(&cli{}), nil)
	return out
}

// Every command's --help goes to stdout with exit 0 and gives its own
// description (none of cobra's defaults), examples, flags and exit codes.
func TestHelpOfEveryCommand(t *testing.T) {
	commands := allCommands()
	if len(commands) != 24 { // the root, 14 commands, 4 shells, 5 queries
		t.Errorf("%d commands: %q", len(commands), commands)
	}
	for _, path := range commands {
		for _, args := range [][]string{append(slices.Clip(path), "--help"), append([]string{"help"}, path...), append(slices.Clip(path), "-h")} {
			code, stdout, stderr := runCLI(t, args...)
			if code != exitOK || stderr != "" {
				t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
			}
			for _, want := range []string{"Usage:\n  netmortem", "\nExit codes: 0 ", "\nFlags:\n", "\nExamples:\n  netmortem " + strings.Join(path, " ")} {
				if !strings.Contains(stdout, want) {
					t.Errorf("%q: help lacks %q:\n%s", args, want, stdout)
				}
			}
			for _, cobras := range []string{"Help provides help", "Generate the autocompletion script", "[=true|false]", "#### "} {
				if strings.Contains(stdout, cobras) {
					t.Errorf("%q: help has cobra's %q:\n%s", args, cobras, stdout)
				}
			}
			if len(path) > 0 && !strings.HasPrefix(stdout, "Prints ") && !strings.HasPrefix(stdout, "Reads ") &&
				!strings.HasPrefix(stdout, "Analyzes ") && !strings.HasPrefix(stdout, "Lists ") &&
				!strings.HasPrefix(stdout, "Compares ") && !strings.HasPrefix(stdout, "Walks ") {
				t.Errorf("%q: help does not start with what the command does:\n%.200s", args, stdout)
			}
		}
	}
	for _, args := range [][]string{{"completion", "--help"}, {"completion", "bash", "--help"}} {
		if _, stdout, _ := runCLI(t, args...); !strings.Contains(stdout, "needs the bash-completion package") {
			t.Errorf("%q: help does not say bash needs the bash-completion package:\n%s", args, stdout)
		}
	}
	_, stdout, _ := runCLI(t, "completion", "fish", "--help")
	if !strings.Contains(stdout, "\nExit codes: "+exitCodesInfo) {
		t.Errorf("completion fish: exit codes are not its own:\n%s", stdout)
	}
	_, stdout, _ = runCLI(t, "analyze", "--help")
	if !strings.Contains(strings.Join(strings.Fields(stdout), " "), "3 an input could not be read or was refused, the time budget ran out") {
		t.Errorf("analyze's help lacks its own exit codes:\n%s", stdout)
	}
}

// flagLine is the start of a flag's line in a usage, up to its text.
var flagLine = regexp.MustCompile(`^  (?:-\w, |    )--[\w-]+(?: \w+)?(?:\[="\w+"\])? +`)

// A boolean flag is listed by its name alone, and set by it; =false still
// works.
func TestBoolFlagsUsage(t *testing.T) {
	_, stdout, _ := runCLI(t, "analyze", "--help")
	for _, want := range []string{"\n  -h, --help ", "\n  -q, --quiet ", "\n      --show-suppressed "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("analyze --help lacks %q:\n%s", want, stdout)
		}
	}
	// The columns line up: the usage texts start where the longest flag
	// leaves room.
	col := -1
	for _, line := range strings.Split(stdout[strings.Index(stdout, "\nFlags:\n")+8:], "\n") {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		if col > 0 && len(line) > col && strings.TrimSpace(line[:col]) == "" {
			continue // a description wrapped under its start
		}
		m := flagLine.FindString(line)
		if m == "" {
			t.Errorf("not a flag's line: %q", line)
			continue
		}
		j := len(m)
		if col == -1 {
			col = j
		}
		if j != col {
			t.Errorf("flag usage at column %d, not %d: %q", j, col, line)
		}
	}
	_, _, stderr := runCLI(t, "analyze", "--quiet=false", "-o", "json", incident)
	if !strings.Contains(stderr, "read ") {
		t.Errorf("--quiet=false: no progress on stderr: %q", stderr)
	}
	_, _, stderr = runCLI(t, "analyze", "--quiet", "-o", "json", incident)
	if stderr != "" {
		t.Errorf("--quiet: %q on stderr", stderr)
	}
}

// Usage errors: exit 2, said on stderr, nothing on stdout.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "Usage:\n  netmortem [command]"},
		{[]string{"frobnicate"}, "netmortem: unknown command \"frobnicate\"\nRun 'netmortem --help' for usage.\n"},
		{[]string{"analyse", incident}, "netmortem: unknown command \"analyse\"; did you mean \"analyze\"?\n"},
		{[]string{"inspct"}, "did you mean \"inspect\"?"},
		{[]string{"\x1b[31m"}, `netmortem: unknown command "\x1b[31m"`},
		{[]string{"analyze"}, "netmortem analyze: no PATH given\n\nUsage:\n  netmortem analyze [flags] PATH...\n"},
		{[]string{"analyze", "--timeout"}, "netmortem analyze: flag needs an argument: --timeout\n"},
		{[]string{"analyze", "--timeout", "forever", incident}, "netmortem analyze: invalid argument \"forever\" for \"--timeout\" flag"},
		{[]string{"diff"}, "netmortem diff: no OLD and NEW given\n"},
		{[]string{"explain"}, "netmortem explain: no RULE given\n"},
		{[]string{"explain", "a", "b"}, "netmortem explain: want one RULE, got 2\n"},
		{[]string{"version", "x"}, "netmortem version: takes no arguments, got \"x\"\n"},
		{[]string{"completion"}, "netmortem completion: no shell given (bash, zsh, fish or powershell)\n"},
		{[]string{"completion", "tcsh"}, "netmortem completion: unknown shell \"tcsh\" (bash, zsh, fish or powershell)\n"},
		{[]string{"completion", "bsh"}, "netmortem completion: unknown shell \"bsh\" (bash, zsh, fish or powershell); did you mean \"bash\" or \"zsh\"?\n"},
		{[]string{"batch"}, "netmortem batch: no BUNDLE given\n\nUsage:\n  netmortem batch [flags] BUNDLE|GLOB...\n"},
		{[]string{"help", "nosuch"}, "netmortem help: unknown command \"nosuch\"\nRun 'netmortem --help' for usage.\n"},
		{[]string{"help", "analyse"}, "netmortem help: unknown command \"analyse\"; did you mean \"analyze\"?\n"},
		{[]string{"help", "completion", "bsh"}, "netmortem help: unknown command \"bsh\" for \"netmortem completion\"; did you mean \"bash\" or \"zsh\"?\n" +
			"Run 'netmortem completion --help' for usage.\n"},
		{[]string{"help", "analyze", "x"}, "netmortem help: unknown command \"x\" for \"netmortem analyze\"\n"},
		{[]string{"help", "__complete"}, "netmortem help: unknown command \"__complete\"\n"},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// A mistyped rule name, for explain, --enable and --disable, gets the
// names close to it.
func TestRuleSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		bad  string
	}{
		{[]string{"explain", "synack-rest"}, "synack-rest"},
		{[]string{"analyze", "--enable", "synack-rest", incident}, "synack-rest"},
		{[]string{"analyze", "--disable", "stale-dnat,synack-rest", incident}, "synack-rest"},
		{[]string{"analyze", "--enable", "Synack-Reset", incident}, "Synack-Reset"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		want := "unknown rule \"" + c.bad + "\" (see netmortem rules); did you mean \"synack-reset\"?\n"
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", c.args, code, stderr, want)
		}
	}
	_, _, stderr := runCLI(t, "explain", "zzzzzzzzzz")
	if stderr != "netmortem explain: unknown rule \"zzzzzzzzzz\" (see netmortem rules)\n" {
		t.Errorf("a name close to no rule: %q", stderr)
	}
}

// Runs share nothing: each builds its own command tree, so runs in
// parallel (as the tests and a library user's goroutines do) neither race
// (go test -race) nor see each other's flags.
func TestParallelRuns(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out, errOut bytes.Buffer
			args := [][]string{
				{"__complete", "analyze", "--enable", "synack-"},
				{"explain", "synack-reset"},
				{"rules", "-o", "json"},
				{"formats", "--no-such-flag"},
			}[i%4]
			code := run(args, &out, &errOut)
			switch {
			case i%4 == 0 && (code != exitOK || !strings.HasPrefix(out.String(), "synack-reset\t")),
				i%4 == 1 && (code != exitOK || !strings.HasPrefix(out.String(), "synack-reset: ")),
				i%4 == 2 && (code != exitOK || !strings.HasPrefix(out.String(), "[")),
				i%4 == 3 && (code != exitUsage || out.Len() != 0):
				errs <- fmt.Sprintf("%q: exit %d: %.80q %.80q", args, code, out.String(), errOut.String())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// complete asks cobra's hidden __complete command, as the shell scripts
// do, and returns the completions (without their descriptions) and the
// directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, append([]string{"__complete"}, args...)...)
	if code != exitOK {
		t.Fatalf("__complete %q: exit %d: %s", args, code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	var out []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		out = append(out, name)
	}
	return out, lines[len(lines)-1]
}

func TestCompletion(t *testing.T) {
	var all []string
	for _, r := range rules.All() {
		all = append(all, r.Name)
	}
	var sPrefixed []string
	for _, name := range all {
		if strings.HasPrefix(name, "s") {
			sPrefixed = append(sPrefixed, name)
		}
	}
	noFiles := ":4" // cobra.ShellCompDirectiveNoFileComp
	for _, c := range []struct {
		args []string
		want []string
		dir  string
	}{
		{[]string{"explain", ""}, all, noFiles},
		{[]string{"explain", "synack"}, []string{"synack-reset"}, noFiles},
		{[]string{"explain", "synack-reset", ""}, nil, noFiles},
		{[]string{"analyze", "--enable", "stale"}, []string{"stale-dnat", "stale-vtep-neighbor"}, noFiles},
		{[]string{"analyze", "--disable=synack-reset,eph"}, []string{"synack-reset,ephemeral-nodeport-overlap"}, noFiles},
		{[]string{"analyze", "--enable", "synack-reset,eph"}, []string{"synack-reset,ephemeral-nodeport-overlap"}, noFiles},
		{[]string{"analyze", "--disable", "synack-reset,"}, prefixed("synack-reset,", without(all, "synack-reset")), noFiles},
		{[]string{"analyze", "--disable=synack-reset,stale-dnat,"}, prefixed("synack-reset,stale-dnat,", without(all, "synack-reset", "stale-dnat")), noFiles},
		{[]string{"analyze", "--disable", "synack-reset,synack"}, nil, noFiles},
		{[]string{"analyze", "--enable", "stale-dnat", "--disable", ""}, without(all, "stale-dnat"), noFiles},
		{[]string{"analyze", "--disable", "stale-dnat", "--disable", "synack-reset,s"}, prefixed("synack-reset,", without(sPrefixed, "synack-reset", "stale-dnat")), noFiles},
		{[]string{"help", ""}, commandNames(), noFiles},
		{[]string{"help", "an"}, []string{"analyze"}, noFiles},
		{[]string{"help", "completion", ""}, []string{"bash", "fish", "powershell", "zsh"}, noFiles},
		{[]string{"help", "nosuch", ""}, nil, noFiles},
		{[]string{"analyze", "-o", ""}, []string{"table", "text", "json", "yaml", "markdown", "sarif", "html"}, noFiles},
		{[]string{"analyze", "--fail-on", ""}, []string{"info", "warning", "error", "never"}, noFiles},
		{[]string{"batch", "--fail-on", "w"}, []string{"warning"}, noFiles},
		{[]string{"flows", "-o", ""}, []string{"table", "json", "csv"}, noFiles},
		{[]string{"inspect", "-o", ""}, []string{"table", "json"}, noFiles},
		{[]string{"diff", "-o", ""}, []string{"text", "json"}, noFiles},
		{[]string{"rules", "-o", ""}, []string{"table", "json", "markdown", "config"}, noFiles},
		{[]string{"formats", "-o", ""}, []string{"table", "json", "markdown"}, noFiles},
		{[]string{"trace", "--proto", ""}, []string{"tcp", "udp", "sctp"}, noFiles},
		{[]string{"completion", ""}, []string{"bash", "fish", "powershell", "zsh"}, noFiles},
		{[]string{"ana"}, []string{"analyze"}, noFiles},
		{[]string{"analyze", "--fail"}, []string{"--fail-on"}, noFiles},
	} {
		got, dir := complete(t, c.args...)
		if c.args[0] == "explain" && len(c.args) == 2 && c.args[1] == "" || strings.HasSuffix(c.args[len(c.args)-1], ",") ||
			c.args[len(c.args)-1] == "" && c.args[len(c.args)-2] == "--disable" || strings.HasSuffix(c.args[len(c.args)-1], ",s") {
			// The shells filter by prefix; every rule is offered.
			slices.Sort(got)
			slices.Sort(c.want)
		}
		if c.args[0] == "analyze" && c.args[1] == "--enable" && c.args[2] == "stale" {
			got = slices.DeleteFunc(got, func(s string) bool { return !strings.HasPrefix(s, "stale") })
		}
		if !slices.Equal(got, c.want) || dir != c.dir {
			t.Errorf("__complete %q: %q %s, want %q %s", c.args, got, dir, c.want, c.dir)
		}
	}
	// Paths are completed as files: no directive that forbids them.
	if _, dir := complete(t, "analyze", ""); dir != ":0" {
		t.Errorf("analyze PATH completion directive %s, want :0 (files)", dir)
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := runCLI(t, "completion", shell)
		if code != exitOK || stderr != "" || !strings.Contains(stdout, "netmortem") || !strings.Contains(stdout, "__complete") {
			t.Errorf("completion %s: exit %d, stderr %q, %d bytes", shell, code, stderr, len(stdout))
		}
	}
}

// without returns names without the ones given, in their order.
func without(names []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(drop, n) })
}

// prefixed returns names, each after prefix.
func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// The examples in every command's help run as they are written, from the
// top of the source tree, with the output files they name put in a
// temporary directory.
func TestExamplesRun(t *testing.T) {
	tmp := t.TempDir()
	root := newRoot(&cli{})
	var cmds []string
	seen := 0
	for _, path := range allCommands() {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(cmd.Example, "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 || fields[0] != "netmortem" {
				t.Errorf("%s: example %q does not start with netmortem", cmd.Name(), line)
				continue
			}
			seen++
			var args []string
			for i := 1; i < len(fields); i++ {
				f := strings.Trim(fields[i], `'"`)
				switch {
				case f == ">" || f == ">>": // stdout redirected: dropped
					i++
					continue
				case i > 1 && fields[i-1] == "--out":
					f = filepath.Join(tmp, filepath.Base(f))
				case i > 1 && fields[i-1] == "-o" && strings.Contains(f, "="): // FORMAT=PATH
					format, path, _ := strings.Cut(f, "=")
					f = format + "=" + filepath.Join(tmp, filepath.Base(path))
				case strings.HasPrefix(f, "fixtures/"):
					f = filepath.Join(testutil.Root(), f)
					if matches, _ := filepath.Glob(f); len(matches) == 0 {
						t.Errorf("%s: example %q: %s does not exist", cmd.Name(), line, f)
					}
				}
				args = append(args, f)
			}
			cmds = append(cmds, strings.Join(args, " "))
			if raceEnabled && seen%4 != 1 {
				// One example in four under the race detector; make
				// test runs them all without it (WHOLE_PKGS).
				continue
			}
			code, stdout, stderr := runCLI(t, args...)
			if code == exitUsage || code == exitUnreadable || stdout == "" && !slices.Contains(args, "--out") {
				t.Errorf("%s: example %q: exit %d, %d bytes out; stderr:\n%s", cmd.Name(), line, code, len(stdout), stderr)
			}
		}
	}
	if seen < 20 {
		t.Errorf("only %d examples: %q", seen, cmds)
	}
}

// --version and version print buildinfo's line, and a release build's
// -ldflags -X set what it says.
func TestVersion(t *testing.T) {
	want := buildinfo.Get().String() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		code, stdout, stderr := runCLI(t, args...)
		if code != exitOK || stdout != want || stderr != "" {
			t.Errorf("%q: exit %d, %q %q, want %q", args, code, stdout, stderr, want)
		}
	}
	bin := filepath.Join(t.TempDir(), "netmortem")
	const pkg = "github.com/netmortem/netmortem/internal/buildinfo"
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin,
		"-ldflags", "-X "+pkg+".version=v9.9.9 -X "+pkg+".commit=0123456789abcdef", ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, arg := range []string{"--version", "version"} {
		out, err := exec.Command(bin, arg).CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "netmortem v9.9.9 (commit 0123456789ab, go1.") {
			t.Errorf("%s %s: %v: %q", bin, arg, err, out)
		}
	}
}
