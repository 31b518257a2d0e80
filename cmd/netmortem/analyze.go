package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

type analyzeOptions struct {
	output  string
	failOn  string
	config  string
	enable  []string
	disable []string
	node    string
	quiet   bool
}

func runAnalyze(args []string, stdout, stderr io.Writer) int {
	var o analyzeOptions
	fs := pflag.NewFlagSet("analyze", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVarP(&o.output, "output", "o", "table", "output format: "+strings.Join(report.Formats(), ", "))
	fs.StringVar(&o.failOn, "fail-on", "warning", "exit 1 when a finding is at or above this severity: info, warning, error")
	fs.StringVar(&o.config, "config", "", "YAML file that disables rules, overrides severities and sets thresholds")
	fs.StringSliceVar(&o.enable, "enable", nil, "run only these rules (comma separated)")
	fs.StringSliceVar(&o.disable, "disable", nil, "do not run these rules (comma separated)")
	fs.StringVar(&o.node, "node", "", "attribute inputs to this node when the bundle layout does not say")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "do not print progress and warnings on stderr")
	if code, ok := parseArgs(fs, stderr, args,
		"Usage: netmortem analyze [flags] PATH...\n\n"+
			"Reads each PATH (a support bundle directory, a .tar/.tar.gz archive, or single files:\n"+
			"captures, command outputs, kubectl JSON/YAML, logs), runs every rule and prints the findings.\n\nFlags:\n", "PATH"); !ok {
		return code
	}
	if err := oneOf("output", o.output, report.Formats()); err != nil {
		fmt.Fprintln(stderr, "netmortem analyze:", err)
		return exitUsage
	}
	failOn, err := analyzer.ParseSeverity(o.failOn)
	if err != nil {
		fmt.Fprintln(stderr, "netmortem analyze: --fail-on:", err)
		return exitUsage
	}
	rules, cfg, err := selectRules(o)
	if err != nil {
		fmt.Fprintln(stderr, "netmortem analyze:", err)
		return exitUsage
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	popts := &parse.Options{Node: o.node, Summary: parse.Summary{Enabled: true}}
	if !o.quiet {
		popts.Progress = func(in model.Input) {
			if in.Skipped != "" {
				fmt.Fprintf(stderr, "skip %s: %s\n", in.Path, in.Skipped)
			}
		}
	}
	snap, warns, openErr := parse.OpenAll(ctx, fs.Args(), popts)
	res := analyzer.Run(ctx, snap, rules, cfg)
	rep := report.New(snap, warns, res)

	if !o.quiet {
		for _, w := range rep.Warnings {
			fmt.Fprintf(stderr, "warning: %s: %s\n", w.Position, w.Message)
		}
		for _, e := range rep.Errors {
			fmt.Fprintf(stderr, "error: rule %s: %s\n", e.Rule, e.Err)
		}
		fmt.Fprintf(stderr, "read %s (%d skipped), %s; %s\n", count(countInputs(snap, false), "input"),
			countInputs(snap, true), count(len(rep.Warnings), "warning"), count(len(rep.Findings), "finding"))
	}
	if err := report.Write(stdout, o.output, rep); err != nil {
		fmt.Fprintln(stderr, "netmortem analyze:", err)
		return exitUnreadable
	}
	switch {
	case openErr != nil:
		fmt.Fprintln(stderr, "netmortem analyze:", openErr)
		return exitUnreadable
	case countInputs(snap, false) == 0:
		fmt.Fprintln(stderr, "netmortem analyze: no input could be read")
		return exitUnreadable
	case len(rep.Errors) > 0:
		return exitUnreadable
	case rep.Max() >= failOn:
		return exitFindings
	}
	return exitOK
}

func countInputs(snap *model.Snapshot, skipped bool) int {
	n := 0
	for _, in := range snap.Inputs {
		if (in.Skipped != "") == skipped {
			n++
		}
	}
	return n
}

// selectRules applies --config, --enable and --disable to the default rules.
func selectRules(o analyzeOptions) ([]*analyzer.Rule, *analyzer.Config, error) {
	all := rules.All()
	cfg := &analyzer.Config{}
	if o.config != "" {
		f, err := os.Open(o.config)
		if err != nil {
			return nil, nil, fmt.Errorf("--config: %w", err)
		}
		defer f.Close()
		if cfg, err = analyzer.LoadConfig(f, o.config, all); err != nil {
			return nil, nil, fmt.Errorf("--config: %w", err)
		}
	}
	known := map[string]*analyzer.Rule{}
	for _, r := range all {
		known[r.Name] = r
	}
	for _, n := range append(append([]string{}, o.enable...), o.disable...) {
		if known[n] == nil {
			return nil, nil, fmt.Errorf("unknown rule %q (see netmortem rules)", n)
		}
	}
	rules := all
	if len(o.enable) > 0 {
		rules = nil
		for _, n := range o.enable {
			rules = append(rules, known[n])
		}
	}
	cfg.Disable(o.disable...)
	return rules, cfg, nil
}

// count says n things: "1 input", "3 inputs".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
