package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/model"
)

// never is the --fail-on level no finding reaches.
const never = analyzer.Error + 1

// parseFailOn reads a --fail-on value: a severity, or never (exit 0
// whatever the findings, as long as everything was read).
func parseFailOn(s string) (analyzer.Severity, error) {
	if strings.EqualFold(strings.TrimSpace(s), "never") {
		return never, nil
	}
	sev, err := analyzer.ParseSeverity(s)
	if err != nil {
		return 0, fmt.Errorf("unknown level %q (want never, info, warning or error)", s)
	}
	return sev, nil
}

// findConfig returns the configuration to use: the one given, or the
// first .netmortem.yaml beside a bundle of paths, and whether it was found
// that way.
func findConfig(given string, paths []string) (string, bool) {
	if given != "" {
		return given, false
	}
	return netmortem.FindConfig(paths)
}

// flagError returns err of the library as the command line says it: an
// option's error after its flag, an unknown rule with the names close to
// it.
func flagError(err error) error {
	var unknown *netmortem.UnknownRuleError
	if errors.As(err, &unknown) {
		return unknownRule(unknown.Name)
	}
	var oe *netmortem.OptionError
	if errors.As(err, &oe) {
		return fmt.Errorf("--%s: %w", oe.Option, oe.Err)
	}
	return err
}

// sayUnmatched writes on stderr, one line each, the ignore entries of cfg
// that suppressed none of sup: not an error (the problem an entry was
// written for may be gone), but worth removing, or a selector is wrong.
func sayUnmatched(stderr io.Writer, cfg *analyzer.Config, sup []analyzer.Suppressed, now time.Time) {
	for _, w := range cfg.Unmatched(sup, now) {
		escape.Fprintf(stderr, "note: %s\n", w)
	}
}

// sayError writes err of command cmd on stderr: a configuration's errors
// after a line that names the command, each on its own line starting with
// file:line (as editors and CI annotations read them); any other error on
// one line "netmortem cmd: error".
func sayError(stderr io.Writer, cmd string, err error) {
	var ce *netmortem.ConfigError
	if !errors.As(err, &ce) {
		escape.Fprintln(stderr, "netmortem "+cmd+":", flagError(err))
		return
	}
	fmt.Fprintf(stderr, "netmortem %s: the configuration has %s:\n", cmd, count(len(ce.Errs), "error"))
	for _, e := range ce.Errs {
		escape.Fprintln(stderr, e.Error())
	}
}

// sayConfig tells which configuration a command uses.
func sayConfig(stderr io.Writer, cmd, path string, found bool) {
	if path == "" {
		return
	}
	how := "--config"
	if found {
		how = "found next to the bundle"
	}
	escape.Fprintf(stderr, "netmortem %s: configuration %s (%s)\n", cmd, path, how)
}

// signalContext returns a context canceled by the first SIGINT or SIGTERM
// (what Kubernetes sends a pod it stops). Once it is done, both have their
// default effect again, so that a second one ends a run that does not
// stop. It is a variable so that tests can interrupt a run at a point of
// their choosing.
var signalContext = func() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	return ctx, stop
}

// runTestHook, when set (by tests), is called at the points where a
// command's work reaches a stage, so that a test can interrupt it there:
// after flows' first read ("first read"; "kept" before it when a
// temporary file kept the attempts) and between its two reads ("between
// reads"); once flows, inspect or batch has written its output whole
// ("written"); after trace has read its inputs ("read").
var runTestHook func(point string)

func testHook(point string) {
	if runTestHook != nil {
		runTestHook(point)
	}
}

// printWarnings writes input warnings on stderr, escaped.
func printWarnings(stderr io.Writer, warns model.ErrorList) {
	for _, w := range warns {
		if w != nil {
			escape.Fprintf(stderr, "warning: %s\n", w)
		}
	}
}

// count says n things: "1 input", "3 inputs".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// stdin is what the operand "-" reads; a variable so that tests give their
// own reader.
var stdin io.Reader = os.Stdin

// sayRuleErrors prints the rules that failed, a line each, but for those
// an interruption or the time budget stopped or kept from running (the
// context's error), which a run cut short has for nearly every rule:
// those are one line, naming the first three, since the lines after it
// say why the run was cut short.
func sayRuleErrors(stderr io.Writer, errs []analyzer.RuleError) {
	var cut []string
	cutErr := ""
	for _, e := range errs {
		if e.Stopped() && (cutErr == "" || e.Err == cutErr) {
			cut, cutErr = append(cut, e.Rule), e.Err
			continue
		}
		escape.Fprintf(stderr, "error: rule %s: %s\n", e.Rule, e.Err)
	}
	switch n := len(cut); {
	case n == 1:
		escape.Fprintf(stderr, "error: rule %s: %s\n", cut[0], cutErr)
	case n > 1:
		escape.Fprintf(stderr, "error: %d rules did not run to the end (%s): %s\n", n, firstThree(cut), cutErr)
	}
}

// firstThree joins the first three of names and counts the others: "a,
// b, c and 2 more".
func firstThree(names []string) string {
	s := strings.Join(names[:min(len(names), 3)], ", ")
	if len(names) > 3 {
		s += fmt.Sprintf(" and %d more", len(names)-3)
	}
	return s
}
