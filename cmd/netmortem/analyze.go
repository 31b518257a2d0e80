package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/report"
	"github.com/netmortem/netmortem/source"
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
	detail         string
}

// defaultTimeout is analyze's time budget, the same as batch's budget per
// bundle: netmortem reads about a gigabyte of capture a second.
const defaultTimeout = 10 * time.Minute

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
	fs.StringVar(&o.detail, "detail", "", "print the full account of the findings in the table: --detail for every one, --detail=`N` for finding N alone, or the start of its fingerprint")
	fs.Lookup("detail").NoOptDefVal = "all"
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
	style.Detail = o.detail
	failOn, err := parseFailOn(o.failOn)
	if err != nil {
		fmt.Fprintln(stderr, "netmortem analyze: --fail-on:", err)
		return exitUsage
	}
	if err := o.anon.loadKey(); err != nil {
		escape.Fprintln(stderr, "netmortem analyze:", err)
		return exitUsage
	}
	for _, p := range fs.Args() {
		// A PATH that does not exist is mistyped: said once, as a usage
		// error, before anything is read. A glob that matches nothing is
		// said by the analysis.
		if p == "-" || strings.ContainsAny(p, "*?[") || source.IsURL(p) {
			continue
		}
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			escape.Fprintf(stderr, "netmortem analyze: %s: no such file or directory\n", p)
			if o.detail == "all" && detailLike(p) {
				// "--detail 1": pflag reads the 1 as a path.
				escape.Fprintf(stderr, "netmortem analyze: for one finding's account, write --detail=%s\n", p)
			}
			return exitUsage
		}
	}
	o.config, foundConfig = findConfig(o.config, fs.Args())
	if !o.quiet {
		sayConfig(stderr, "analyze", o.config, foundConfig)
	}
	operands := netmortem.Paths(fs.Args()...)
	plan, err := netmortem.Prepare(context.Background(), operands, &netmortem.Options{
		Enable: o.enable, Disable: o.disable, Config: o.config, NoConfigDiscovery: true,
		Baseline: o.baseline, ShowSuppressed: o.showSuppressed,
		Anonymize: o.anon.enabled(), AnonymizeKey: o.anon.key,
		Timeout: o.timeout, MaxBundleMemory: o.memory, Node: o.node, Stdin: stdin,
		NoTimelines: !slices.ContainsFunc(outputs, func(o report.Output) bool { return o.Format == "html" }),
	})
	if err != nil {
		sayError(stderr, "analyze", err)
		return exitUsage
	}
	defer plan.Close()

	if !o.quiet {
		plan.BeforeRead = func(ctx context.Context) { noteMerged(ctx, plan.Paths, stderr) }
	}
	ctx, stop := signalContext()
	defer stop()
	a := plan.Run(ctx)
	rep, snap := a.Report, a.Snapshot

	if err := report.CheckDetail(rep, o.detail); err != nil {
		escape.Fprintln(stderr, "netmortem analyze: --detail:", err)
		return exitUsage
	}
	// Warnings and rule errors are printed under -q too: it hides
	// progress only.
	for _, w := range rep.Warnings {
		escape.Fprintf(stderr, "warning: %s: %s\n", w.Position, w.Message)
	}
	sayRuleErrors(stderr, rep.Errors)
	if !o.quiet {
		if !a.Cut {
			sayUnmatched(stderr, plan.Config, a.Suppressed, time.Now())
		}
		saySkipped(stderr, snap, fs.Args())
		unread := ""
		if n := len(snap.UnreadableCaptures()); n > 0 {
			unread = fmt.Sprintf(", %d unreadable", n)
		}
		suppressed := ""
		if rep.SuppressedCount > 0 {
			suppressed = fmt.Sprintf(" (%d suppressed)", rep.SuppressedCount)
		}
		fmt.Fprintf(stderr, "read %s (%d skipped%s), %s; %s%s\n", count(operand.CountInputs(snap, false), "input"),
			operand.CountInputs(snap, true), unread, count(len(rep.Warnings), "warning"), count(len(rep.Findings), "finding"), suppressed)
	}
	if errs := writeOutputs(stdout, outputs, rep, style); len(errs) > 0 {
		for _, err := range errs {
			escape.Fprintln(stderr, "netmortem analyze:", err)
		}
		return exitUnreadable
	}
	if err := o.anon.writeMappings(a.Mappings()); err != nil {
		escape.Fprintln(stderr, "netmortem analyze:", err)
		return exitUnreadable
	}
	// Every reason for exit 3 is said, then the code is given.
	for _, why := range rep.Incomplete {
		escape.Fprintf(stderr, "netmortem analyze: %s\n", why)
	}
	return exitCode(rep, a.OnlyCutInputs, failOn)
}

// exitCode is analyze's exit code for rep: 3 when a rule failed or an
// input was not read at all (unreadable, refused, the time budget, an
// interrupt); when the analysis is incomplete only because inputs were
// cut short (onlyCuts), 1 when a finding is at or above failOn, which
// decides (what was read is enough to fail), else 3 (what was cut off
// could have failed it); 1 or 0 by the findings when it is complete.
func exitCode(rep *report.Report, onlyCuts bool, failOn analyzer.Severity) int {
	switch {
	case len(rep.Errors) > 0, len(rep.Incomplete) > 0 && !onlyCuts:
		return exitUnreadable
	case rep.Max() >= failOn:
		return exitFindings
	case len(rep.Incomplete) > 0:
		return exitUnreadable
	}
	return exitOK
}

// detailLike reports whether a missing operand looks like the value of
// --detail written after a space: a finding's number or the start of its
// fingerprint (hexadecimal), with no path separator or extension.
func detailLike(p string) bool {
	if p == "" || len(p) > 64 {
		return false
	}
	for _, r := range p {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
