package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/diff"
	"github.com/netmortem/netmortem/internal/escape"
)

func newDiffCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diff [flags] OLD NEW",
		Short: "compare two bundles of one cluster: findings, NAT backends, endpoints",
		Long: "Compares two bundles of the same cluster: the findings that appeared, resolved, changed (severity,\n" +
			"certainty or facts) or stayed the same, matched by fingerprint; the NAT backends of each\n" +
			"Service port on each node; and the Services' endpoints.\n\n" +
			"The configuration (--config, or .netmortem.yaml next to NEW) applies to both bundles: its rule\n" +
			"settings, and its ignore entries, whose findings are left out on either side and counted; so are\n" +
			"the findings of a --baseline report. --anonymize replaces the addresses and names of both bundles\n" +
			"with one mapping (docs/output.md).",
		Example: "  netmortem diff fixtures/incidents/stale-dnat-control fixtures/incidents/stale-dnat\n" +
			"  netmortem diff -o json fixtures/incidents/mtu-blackhole-control fixtures/incidents/mtu-blackhole\n" +
			"  netmortem diff --anonymize fixtures/incidents/stale-dnat-control fixtures/incidents/stale-dnat",
		Annotations: map[string]string{exitCodesKey: exitCodesDiff},
	}
	fs := cmd.Flags()
	output := fs.StringP("output", "o", "text", "output format: text, json")
	failOn := fs.String("fail-on", "warning", "exit 1 when a finding that appeared, or that changed for the worse (severity rose, certainty firmed), is at or above this severity (its severity in NEW): info, warning, error, or never")
	config := fs.String("config", "", "configuration file (docs/config.md); default: .netmortem.yaml next to NEW, if any")
	baseline := fs.String("baseline", "", "leave out, on both sides, the findings of this earlier report (analyze -o json, or batch lines)")
	var ao anonymizeOptions
	addAnonymizeFlags(fs, &ao)
	completeFlags(cmd, map[string]cobra.CompletionFunc{"output": completeValues("text", "json"), "fail-on": completeValues(failOnValues...)})
	c.runs(cmd, "OLD and NEW", func([]string) int {
		return runDiff(fs, c.stdout, c.stderr, output, failOn, diffOptions{config: *config, baseline: *baseline, anon: ao})
	})
	return cmd
}

// diffOptions are diff's configuration, baseline and anonymization.
type diffOptions struct {
	config, baseline string
	anon             anonymizeOptions
}

func runDiff(fs *pflag.FlagSet, stdout, stderr io.Writer, output, failOn *string, o diffOptions) int {
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, "netmortem diff: want exactly two bundles, OLD and NEW")
		return exitUsage
	}
	if err := oneOf("output", *output, []string{"text", "json"}); err != nil {
		escape.Fprintln(stderr, "netmortem diff:", err)
		return exitUsage
	}
	level, err := parseFailOn(*failOn)
	if err != nil {
		fmt.Fprintln(stderr, "netmortem diff: --fail-on:", err)
		return exitUsage
	}
	if err := o.anon.loadKey(); err != nil {
		escape.Fprintln(stderr, "netmortem diff:", err)
		return exitUsage
	}
	var found bool
	o.config, found = findConfig(o.config, fs.Args()[1:])
	sayConfig(stderr, "diff", o.config, found)
	rules, cfg, err := netmortem.SelectRules(nil, o.config, nil, nil)
	if err != nil {
		sayError(stderr, "diff", err)
		return exitUsage
	}
	var baseline map[string]bool
	if o.baseline != "" {
		if baseline, err = netmortem.ReadBaseline(o.baseline); err != nil {
			escape.Fprintln(stderr, "netmortem diff: --baseline:", err)
			return exitUsage
		}
	}
	ctx, stop := signalContext()
	defer stop()
	res, err := diff.Bundles(ctx, fs.Arg(0), fs.Arg(1), &diff.Options{Rules: rules, Config: cfg, Baseline: baseline, BaselineName: o.baseline})
	if err != nil {
		escape.Fprintln(stderr, "netmortem diff:", err)
		return exitUnreadable
	}
	// The same entries for both: warned about once.
	for _, w := range res.New.Expired {
		escape.Fprintf(stderr, "warning: %s: %s\n", w.Position, w.Message)
	}
	sayUnmatched(stderr, cfg, append(slices.Clone(res.Old.Suppressed), res.New.Suppressed...), res.Now)
	// One mapping for both bundles: an address or a name is the same
	// token in OLD and NEW.
	var anonymizer *netmortem.Anonymizer
	if o.anon.enabled() {
		anonymizer = netmortem.NewAnonymizer(o.anon.key, res.Old.Snapshot, res.New.Snapshot)
	}
	d := netmortem.Anonymize(anonymizer, res.Diff)
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // as analyze -o json: an arrow stays "->"
		if err := enc.Encode(d); err != nil {
			escape.Fprintln(stderr, "netmortem diff:", err)
			return exitUnreadable
		}
	} else {
		var b strings.Builder
		diff.WriteText(&b, d)
		if _, err := io.WriteString(stdout, fitText(b.String(), outputWidth(stdout))); err != nil {
			escape.Fprintln(stderr, "netmortem diff:", err)
			return exitUnreadable
		}
	}
	if err := o.anon.writeMapping(anonymizer); err != nil {
		escape.Fprintln(stderr, "netmortem diff:", err)
		return exitUnreadable
	}
	if bad := res.Unreadable(); len(bad) > 0 {
		escape.Fprintf(stderr, "netmortem diff: %s could not be read: %s\n", count(len(bad), "capture"), strings.Join(bad, ", "))
		return exitUnreadable
	}
	if diff.Failing(d.Findings, level) > 0 {
		return exitFindings
	}
	return exitOK
}
