package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/results"
	"github.com/netmortem/netmortem/results/query"
)

const exitCodesQuery = "0 done (an empty answer too), 2 usage error, 3 the results (a FILE or --db) could not be\n" +
	"read, or the output could not be written."

// queryExample is the JSON Lines file of a batch over fixtures/incidents
// that the examples read (make query-fixture writes it).
const queryExample = "fixtures/query/incidents.jsonl"

// queryOptions are the flags every query command takes.
type queryOptions struct {
	db, rule, since, until, output string
	// out are the JSON Lines files given with --out, as batch takes
	// them; the FILE operands are the same.
	out []string
}

func newQueryCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "query COMMAND [flags] [--out FILE.jsonl | --db DB | FILE.jsonl...]",
		Short: "count what a batch found: by rule, week, Kubernetes version, fingerprint",
		Long: "Reads the results of netmortem batch, with the flag batch wrote them with: its JSON Lines\n" +
			"files (--out FILE.jsonl, or FILE.jsonl as arguments, the shards' files together) or its database\n" +
			"(--db results.db or --db postgres://..., in the fleet build), and counts which rules fired\n" +
			"in how many bundles, week by week, by Kubernetes version, and which bundles share a finding.\n" +
			"Each bundle counts once, by its last line that is not canceled; a finding counts once per bundle.\n\n" +
			"--since and --until keep the bundles whose evidence was taken in [SINCE, UNTIL) (its time as the\n" +
			"line's bundle_time gives it; bundles without one are then left out): a date (2026-11-01, midnight\n" +
			"UTC), a time (RFC 3339: 2026-11-01T08:00:00Z), or an ISO week (2026-W44, its Monday at midnight\n" +
			"UTC). --rule counts one rule only.",
		Example: "  netmortem query rules " + queryExample + "\n" +
			"  netmortem query weeks --rule " + rules.SynUnanswered.Name + " " + queryExample + "\n" +
			"  netmortem query versions -o csv " + queryExample,
		Annotations: map[string]string{exitCodesKey: exitCodesQuery},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			return &usageError{msg: fmt.Sprintf("unknown command %q%s", args[0], suggestCommand(cmd, args[0])), usageOf: cmd}
		},
		RunE: func(*cobra.Command, []string) error {
			return &usageError{msg: "no command given (rules, weeks, versions, fingerprints or bundles)", showUsage: true}
		},
	}
	cmd.AddCommand(
		newQuerySubCmd(c, query.Rules, "", "count the bundles and findings of each rule",
			"Lists the rules that fired: for each, the bundles with a finding of it, its findings, their\n"+
				"highest severity, and the first and last bundle time; most bundles first.",
			"rules "+queryExample+"\n  netmortem query rules --since 2026-W44 -o json "+queryExample),
		newQuerySubCmd(c, query.Weeks, "", "count the bundles of each week, and those with findings",
			"Lists the weeks of the bundles (ISO weeks of their bundle time, \"unknown\" for bundles without\n"+
				"one last): for each, its bundles, those with a finding (of --rule, when given), and their findings.",
			"weeks "+queryExample+"\n  netmortem query weeks --rule "+rules.SynUnanswered.Name+" -o json "+queryExample),
		newQuerySubCmd(c, query.Versions, "", "count the bundles of each Kubernetes version, and those with findings",
			"Lists the Kubernetes minor versions of the bundles (as the bundle shows its cluster's version,\n"+
				"\"unknown\" last): for each, its bundles, those with a finding (of --rule, when given), and their\n"+
				"findings.",
			"versions "+queryExample+"\n  netmortem query versions -o csv "+queryExample),
		newQuerySubCmd(c, query.Fingerprints, "", "count the bundles that have each finding, by its fingerprint",
			"Lists the findings' fingerprints (a finding's identity: its rule and subject, the same in every\n"+
				"bundle) with their rule, title and the bundles that have them; most bundles first. netmortem\n"+
				"query bundles FINGERPRINT lists those bundles.",
			"fingerprints "+queryExample+"\n  netmortem query fingerprints --rule "+rules.SynAckReset.Name+" -o json "+queryExample),
		newQuerySubCmd(c, query.Bundles, "FINGERPRINT", "list the bundles that have a finding",
			"Lists the bundles that have the finding whose fingerprint is FINGERPRINT (see netmortem query\n"+
				"fingerprints), with its severity and title in each, the bundle's time and Kubernetes version.\n"+
				"A fingerprint no bundle has gives an empty list, and says so on stderr.",
			"bundles 90c2d346ce4cec5a "+queryExample+"\n  netmortem query bundles -o csv 90c2d346ce4cec5a "+queryExample),
	)
	return cmd
}

// newQuerySubCmd is one of query's commands. operand, when not empty, is
// the argument it takes before the files.
func newQuerySubCmd(c *cli, name, operand, short, long, example string) *cobra.Command {
	use := name + " [flags]"
	if operand != "" {
		use += " " + operand
	}
	sub := &cobra.Command{
		Use:         use + " [FILE.jsonl]...",
		Short:       short,
		Long:        long,
		Example:     "  netmortem query " + example,
		Annotations: map[string]string{exitCodesKey: exitCodesQuery},
	}
	var o queryOptions
	fs := sub.Flags()
	fs.StringArrayVar(&o.out, "out", nil, "read the results from this JSON Lines file, as batch --out wrote it (repeatable; FILE arguments are the same)")
	fs.StringVar(&o.db, "db", "", "read the results from a database, as batch --db wrote it: a SQLite file (results.db) or postgres://..., instead of FILEs")
	fs.StringVar(&o.rule, "rule", "", "count only the findings of this rule")
	fs.StringVar(&o.since, "since", "", "keep the bundles from this time on: 2026-11-01, 2026-11-01T08:00:00Z or 2026-W44")
	fs.StringVar(&o.until, "until", "", "keep the bundles before this time: 2026-11-01, 2026-11-01T08:00:00Z or 2026-W44")
	fs.StringVarP(&o.output, "output", "o", "table", "output format: table, json or csv")
	completeFlags(sub, map[string]cobra.CompletionFunc{"output": completeValues(query.Formats...),
		"rule": completeRuleArg, "since": cobra.NoFileCompletions, "until": cobra.NoFileCompletions})
	sub.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if operand != "" && len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return []cobra.Completion{"jsonl"}, cobra.ShellCompDirectiveFilterFileExt
	}
	if operand != "" {
		sub.Args = func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{msg: "no " + operand + " given", showUsage: true}
			}
			return nil
		}
	}
	c.runs(sub, "", func(args []string) int {
		var fp string
		if operand != "" {
			fp, args = args[0], args[1:]
		}
		return runQuery(context.Background(), c.stdout, c.stderr, name, fp, args, o)
	})
	return sub
}

func runQuery(ctx context.Context, stdout, stderr io.Writer, name, fp string, files []string, o queryOptions) int {
	prefix := "netmortem query " + name + ":"
	files = append(slices.Clip(o.out), files...)
	f, err := o.filter()
	if err == nil {
		err = oneOf("output", o.output, query.Formats)
	}
	switch {
	case err != nil:
	case o.db == "" && len(files) == 0:
		err = errors.New("no results to read: give the batch's --out FILE.jsonl (or FILE.jsonl), or its --db")
	case o.db != "" && len(files) > 0:
		err = fmt.Errorf("--db and FILEs (%s) given: read one or the other", files[0])
	}
	if err != nil {
		escape.Fprintln(stderr, prefix, err)
		return exitUsage
	}
	st, err := query.Open(ctx, o.db, files)
	if err != nil {
		escape.Fprintln(stderr, prefix, err)
		return exitUnreadable
	}
	defer st.Close()
	a, err := query.Ask(ctx, st, name, fp, f)
	if err != nil {
		escape.Fprintln(stderr, prefix, err)
		return exitUnreadable
	}
	if a.Len() == 0 {
		escape.Fprintln(stderr, prefix, query.Empty(name, fp, f))
	}
	if err := a.Write(stdout, o.output, outputWidth(stdout)); err != nil {
		escape.Fprintln(stderr, prefix, err)
		return exitUnreadable
	}
	return exitOK
}

// filter is the results.Filter of the flags.
func (o queryOptions) filter() (results.Filter, error) {
	var f results.Filter
	if o.rule != "" {
		if rules.Lookup(o.rule) == nil {
			return f, fmt.Errorf("--rule: %w", unknownRule(o.rule))
		}
		f.Rule = o.rule
	}
	var err error
	if f.Since, err = query.ParseTime(o.since); err != nil {
		return f, fmt.Errorf("--since: %w", err)
	}
	if f.Until, err = query.ParseTime(o.until); err != nil {
		return f, fmt.Errorf("--until: %w", err)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return f, fmt.Errorf("--since %s is not before --until %s: no bundle could be kept", o.since, o.until)
	}
	return f, nil
}
