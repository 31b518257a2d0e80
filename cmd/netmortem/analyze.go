package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
	"github.com/netmortem/netmortem/timeline"
)

type analyzeOptions struct {
	outputs []string
	failOn  string
	config  string
	enable  []string
	disable []string
	node    string
	quiet   bool
	timeout time.Duration
	memory  int64

	baseline       string
	showSuppressed bool
	anon           anonymizeOptions
	color          string
}

// defaultTimeout is analyze's time budget, the same as batch's budget per
// bundle: netmortem reads about a gigabyte of capture a second.
const defaultTimeout = 10 * time.Minute

// maxRuleGrace is the most the rules are given, past the budget, to run on
// what was read when reading used it up.
const maxRuleGrace = time.Minute

func newAnalyzeCmd(c *cli) *cobra.Command {
	var o analyzeOptions
	cmd := &cobra.Command{
		Use:   "analyze [flags] PATH...",
		Short: "analyze evidence and report findings",
		Long: "Reads each PATH (a support bundle directory, a .tar/.tar.gz archive, or single files:\n" +
			"captures, command outputs, kubectl JSON/YAML, logs), runs every rule and prints the findings.\n" +
			"A PATH that is neither a regular file nor a directory (a named pipe, a device) is refused.\n" +
			"A PATH may be - (standard input, read as one file: a capture, a dump, an archive) or a quoted\n" +
			"glob ('**' matches any depth). All PATHs are analyzed as one bundle; to analyze many bundles\n" +
			"each on its own, use netmortem batch.\n\n" +
			"The configuration (--config, or .netmortem.yaml next to the first PATH) sets rule parameters\n" +
			"and suppresses findings; --baseline suppresses those of an earlier report (docs/config.md).",
		Example: "  netmortem analyze fixtures/incidents/ephemeral-nodeport\n" +
			"  netmortem analyze -o json --fail-on error fixtures/incidents/stale-dnat\n" +
			"  netmortem analyze --enable synack-reset fixtures/incidents/ephemeral-nodeport/capture.pcap\n" +
			"  netmortem analyze -q -o sarif fixtures/incidents/mtu-blackhole > findings.sarif\n" +
			"  netmortem analyze -o table -o json=report.json -o sarif=report.sarif fixtures/incidents/stale-dnat\n" +
			"  netmortem analyze -q -o html fixtures/incidents/lb-conflict > report.html\n" +
			"  netmortem analyze --show-suppressed -o text fixtures/incidents/stale-dnat",
		Annotations: map[string]string{exitCodesKey: exitCodesAnalyze},
	}
	fs := cmd.Flags()
	fs.StringArrayVarP(&o.outputs, "output", "o", []string{"table"}, outputUsage)
	fs.StringVar(&o.failOn, "fail-on", "warning", "exit 1 when a finding is at or above this severity: info, warning, error, or never")
	fs.StringVar(&o.config, "config", "", "YAML file that disables rules, overrides severities, sets thresholds and suppresses findings (docs/config.md); default: .netmortem.yaml next to the bundle")
	fs.StringSliceVar(&o.enable, "enable", nil, "run only these rules (comma separated)")
	fs.StringSliceVar(&o.disable, "disable", nil, "do not run these rules (comma separated)")
	fs.StringVar(&o.node, "node", "", "attribute inputs to this node when the bundle layout does not say")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "print no progress on stderr (the configuration used, the notes, the skipped files, the summary); warnings, rule errors and errors are still printed")
	fs.Int64Var(&o.memory, "max-bundle-memory", 0, "memory budget in bytes for what the inputs' parsed text keeps: files past it are read no further, with a warning (0: the default, 256 MiB)")
	fs.DurationVar(&o.timeout, "timeout", defaultTimeout, "time budget for reading and analyzing; past it, reading stops, the rules run on what was read, and the exit code is 3 (0: no limit)")
	fs.StringVar(&o.baseline, "baseline", "", "report of an earlier run (analyze -o json, or batch lines): its findings, by fingerprint, are suppressed")
	fs.BoolVar(&o.showSuppressed, "show-suppressed", false, "list the suppressed findings, with why, after the others")
	addAnonymizeFlags(fs, &o.anon)
	fs.StringVar(&o.color, "color", "auto", "colour severities in the table: auto (on a terminal, unless NO_COLOR is set), always, or never")
	completeFlags(cmd, map[string]cobra.CompletionFunc{"output": completeValues(report.Formats()...),
		"fail-on": completeValues(failOnValues...), "color": completeValues(colorModes...), "enable": completeRules, "disable": completeRules,
		"node": cobra.NoFileCompletions, "max-bundle-memory": cobra.NoFileCompletions, "timeout": cobra.NoFileCompletions})
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	_ = cmd.MarkFlagFilename("baseline", "json", "jsonl")
	c.runs(cmd, "PATH", func([]string) int { return runAnalyze(o, fs, c.stdout, c.stderr) })
	return cmd
}

func runAnalyze(o analyzeOptions, fs *pflag.FlagSet, stdout, stderr io.Writer) int {
	var foundConfig bool
	if o.memory < 0 {
		fmt.Fprintln(stderr, "netmortem analyze: --max-bundle-memory must not be negative")
		return exitUsage
	}
	if o.timeout < 0 {
		fmt.Fprintln(stderr, "netmortem analyze: --timeout must not be negative")
		return exitUsage
	}
	outputs, err := report.ParseOutputs(o.outputs)
	if err != nil {
		escape.Fprintln(stderr, "netmortem analyze: -o", err)
		return exitUsage
	}
	style, err := tableStyle(o.color, stdout)
	if err != nil {
		escape.Fprintln(stderr, "netmortem analyze:", err)
		return exitUsage
	}
	failOn, err := parseFailOn(o.failOn)
	if err != nil {
		fmt.Fprintln(stderr, "netmortem analyze: --fail-on:", err)
		return exitUsage
	}
	if err := o.anon.loadKey(); err != nil {
		escape.Fprintln(stderr, "netmortem analyze:", err)
		return exitUsage
	}
	o.config, foundConfig = findConfig(o.config, fs.Args())
	if !o.quiet {
		sayConfig(stderr, "analyze", o.config, foundConfig)
	}
	rules, cfg, err := selectRules(o)
	if err != nil {
		sayError(stderr, "analyze", err)
		return exitUsage
	}
	operands, err := expandWith(context.Background(), fs.Args(), newObjects(0))
	defer operands.close()
	if err != nil {
		escape.Fprintln(stderr, "netmortem analyze:", err)
		return exitUsage
	}
	var baseline map[string]bool
	if o.baseline != "" {
		if baseline, err = readBaseline(o.baseline); err != nil {
			escape.Fprintln(stderr, "netmortem analyze: --baseline:", err)
			return exitUsage
		}
	}

	ctx, stop := signalContext()
	defer stop()
	start := time.Now()
	readCtx, cancel := withBudget(ctx, o.timeout)
	defer cancel()
	popts := &parse.Options{Node: o.node, Summary: parse.Summary{Enabled: true}, Limits: parse.Limits{MaxMemory: o.memory}}
	if !o.quiet {
		noteMerged(readCtx, operands.paths, stderr)
	}
	in := openExpanded(readCtx, operands, popts)
	snap := in.snap
	readCut := readCtx.Err() != nil
	// The rules run on what was read, even when reading ran out of time:
	// they get what is left of the budget, and at least maxRuleGrace.
	ruleCtx, cancelRules := ruleContext(ctx, readCtx, o.timeout)
	defer cancelRules()
	res := analyzer.Run(ruleCtx, snap, rules, cfg)
	suppressed, expired := suppress(&res, cfg, baseline, o.baseline, time.Now())
	rep := report.New(snap, in.warns, res)
	rep.Warnings = append(rep.Warnings, expired...)
	rep.SetSuppressed(suppressed, o.showSuppressed)
	rep.NextEvidence = report.NextEvidenceFor(snap, enabledRules(rules, cfg), res)

	rep.Incomplete = incomplete(ctx, ruleCtx, readCut, o.timeout, start, in)
	addHTMLData(ruleCtx, outputs, snap, rep)
	anonymizer := o.anon.anonymizer(snap)
	rep = anonymizeReport(anonymizer, rep)

	// Warnings and rule errors are printed under -q too: it hides
	// progress only.
	for _, w := range rep.Warnings {
		escape.Fprintf(stderr, "warning: %s: %s\n", w.Position, w.Message)
	}
	for _, e := range rep.Errors {
		escape.Fprintf(stderr, "error: rule %s: %s\n", e.Rule, e.Err)
	}
	if !o.quiet {
		if ctx.Err() == nil && !readCut {
			sayUnmatched(stderr, cfg, suppressed, time.Now())
		}
		saySkipped(stderr, snap, fs.Args())
		unread := ""
		if n := len(unreadableCaptures(snap)); n > 0 {
			unread = fmt.Sprintf(", %d unreadable", n)
		}
		suppressed := ""
		if rep.SuppressedCount > 0 {
			suppressed = fmt.Sprintf(" (%d suppressed)", rep.SuppressedCount)
		}
		fmt.Fprintf(stderr, "read %s (%d skipped%s), %s; %s%s\n", count(countInputs(snap, false), "input"),
			countInputs(snap, true), unread, count(len(rep.Warnings), "warning"), count(len(rep.Findings), "finding"), suppressed)
	}
	if errs := writeOutputs(stdout, outputs, rep, style); len(errs) > 0 {
		for _, err := range errs {
			escape.Fprintln(stderr, "netmortem analyze:", err)
		}
		return exitUnreadable
	}
	if err := o.anon.writeMapping(anonymizer); err != nil {
		escape.Fprintln(stderr, "netmortem analyze:", err)
		return exitUnreadable
	}
	// Every reason for exit 3 is said, then the code is given.
	for _, why := range rep.Incomplete {
		escape.Fprintf(stderr, "netmortem analyze: %s\n", why)
	}
	switch {
	case len(rep.Incomplete) > 0, len(rep.Errors) > 0:
		return exitUnreadable
	case rep.Max() >= failOn:
		return exitFindings
	}
	return exitOK
}

// addHTMLData adds to rep the timelines and evidence quotes the HTML
// report draws, when one of outputs is html: the other formats do not
// show them, and pay nothing for them.
func addHTMLData(ctx context.Context, outputs []report.Output, snap *model.Snapshot, rep *report.Report) {
	if !slices.ContainsFunc(outputs, func(o report.Output) bool { return o.Format == "html" }) {
		return
	}
	rep.Timelines = timeline.Build(ctx, snap, rep.Rules(), rep.Findings)
	rep.Quotes = timeline.Quotes(ctx, rep.Findings, rep.Timelines)
}

// withBudget returns ctx with a deadline d from now; d = 0 means none.
func withBudget(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// ruleContext is the context the rules run under after reading under
// readCtx: what is left of the budget, but at least min(budget,
// maxRuleGrace), so that what was read is analyzed even when reading used
// up the budget. ctx is the run's own context (interrupts).
func ruleContext(ctx, readCtx context.Context, budget time.Duration) (context.Context, context.CancelFunc) {
	deadline, ok := readCtx.Deadline()
	grace := min(budget, maxRuleGrace)
	if !ok || time.Until(deadline) >= grace {
		return context.WithCancel(readCtx)
	}
	return context.WithTimeout(ctx, grace)
}

// withoutContextErrors returns err without the errors that only say a
// context ended (told apart, as an interrupt or the end of the budget).
func withoutContextErrors(err error) error {
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err // nil too
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var keep []error
		for _, e := range joined.Unwrap() {
			keep = append(keep, withoutContextErrors(e))
		}
		return errors.Join(keep...)
	}
	return nil
}

// budgetNote says what the end of the time budget cut short.
func budgetNote(readCut, rulesCut bool) string {
	switch {
	case readCut && !rulesCut:
		return "reading stopped there; the findings cover what was read"
	case readCut:
		return "reading stopped there, and the rules that had not run by the end of their grace period are listed as failed"
	}
	return "the rules that had not run are listed as failed"
}

// countInputs counts the inputs skipped, or those read (leaving out the
// captures whose header could not be read).
func countInputs(snap *model.Snapshot, skipped bool) int {
	n := 0
	for _, in := range snap.Inputs {
		if (in.Skipped != "") == skipped {
			n++
		}
	}
	if !skipped {
		n -= len(unreadableCaptures(snap))
	}
	return n
}

// selectRules applies --config, --enable and --disable to the default rules.
func selectRules(o analyzeOptions) ([]*analyzer.Rule, *analyzer.Config, error) {
	all := rules.All()
	cfg := &analyzer.Config{}
	if o.config != "" {
		var err error
		if cfg, err = loadConfig(o.config, all); err != nil {
			return nil, nil, err
		}
	}
	known := map[string]*analyzer.Rule{}
	for _, r := range all {
		known[r.Name] = r
	}
	for _, n := range append(append([]string{}, o.enable...), o.disable...) {
		if known[n] == nil {
			return nil, nil, unknownRule(n)
		}
	}
	rules := all
	if len(o.enable) > 0 {
		rules = nil
		for _, n := range o.enable {
			rules = append(rules, known[n])
		}
		cfg.Enable(o.enable...) // --enable wins over the configuration's disabled
	}
	cfg.Disable(o.disable...)
	return rules, cfg, nil
}

// enabledRules returns the rules of the list that cfg does not disable:
// those that ran.
func enabledRules(rules []*analyzer.Rule, cfg *analyzer.Config) []*analyzer.Rule {
	var out []*analyzer.Rule
	for _, r := range rules {
		if r != nil && (cfg == nil || !cfg.Rules[r.Name].Disabled) {
			out = append(out, r)
		}
	}
	return out
}

// count says n things: "1 input", "3 inputs".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
