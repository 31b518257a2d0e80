package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/netmortem/netmortem/analyzer/ruledoc"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/internal/suggest"
)

func newRulesCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules [flags]",
		Short: "list the rules with their documentation",
		Long: "Lists every rule: its name, default severity, the evidence it needs and uses, the derived\n" +
			"facts it requires, and its title; -o markdown gives the reference documentation (docs/rules.md).",
		Example: "  netmortem rules\n" +
			"  netmortem rules -o json\n" +
			"  netmortem rules -o config > config.md\n" +
			"  netmortem rules -o markdown > rules.md",
		Annotations: map[string]string{exitCodesKey: exitCodesList},
	}
	fs := cmd.Flags()
	output := fs.StringP("output", "o", "table", "output format: table, json, markdown, or config (the configuration reference, docs/config.md)")
	dir := fs.String("dir", "", "with -o markdown: write one file per rule, DIR/<rule>.md, instead of one document")
	completeFlags(cmd, map[string]cobra.CompletionFunc{"output": completeValues("table", "json", "markdown", "config")})
	_ = cmd.MarkFlagDirname("dir")
	c.runs(cmd, "", func([]string) int { return runRules(c.stdout, c.stderr, output, dir) })
	return cmd
}

func runRules(stdout, stderr io.Writer, output, dir *string) int {
	if err := oneOf("output", *output, []string{"table", "json", "markdown", "config"}); err != nil {
		fmt.Fprintln(stderr, "netmortem rules:", err)
		return exitUsage
	}
	var err error
	switch all := rules.All(); *output {
	case "table":
		err = ruledoc.WriteTable(stdout, all, outputWidth(stdout))
	case "json":
		err = ruledoc.WriteJSON(stdout, all)
	case "config":
		err = ruledoc.WriteConfig(stdout, all)
	case "markdown":
		if *dir != "" {
			err = ruledoc.WriteMarkdownDir(*dir, all)
		} else {
			err = ruledoc.WriteMarkdown(stdout, all)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "netmortem rules:", err)
		return exitUnreadable
	}
	return exitOK
}

func newExplainCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain RULE",
		Short: "print the full documentation of a rule",
		Long: "Prints a rule's full documentation: its title, default severity, the evidence it needs,\n" +
			"what it means, how it grades severity, the causes and their fixes.",
		Example: "  netmortem explain " + rules.SynAckReset.Name + "\n" +
			"  netmortem explain " + rules.StaleDNAT.Name,
		Annotations:       map[string]string{exitCodesKey: exitCodesInfo},
		ValidArgsFunction: completeRuleArg,
		Args: func(_ *cobra.Command, args []string) error {
			switch len(args) {
			case 0:
				return &usageError{msg: "no RULE given", showUsage: true}
			case 1:
				return nil
			}
			return &usageError{msg: fmt.Sprintf("want one RULE, got %d", len(args)), showUsage: true}
		},
	}
	c.runs(cmd, "", func(args []string) int { return runExplain(args, c.stdout, c.stderr) })
	return cmd
}

// completeRuleArg completes explain's RULE.
func completeRuleArg(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeRules(cmd, args, toComplete)
}

func runExplain(args []string, stdout, stderr io.Writer) int {
	r := rules.Lookup(args[0])
	if r == nil {
		escape.Fprintln(stderr, "netmortem explain:", unknownRule(args[0]))
		return exitUsage
	}
	var b strings.Builder
	_ = ruledoc.WriteExplanation(&b, r)
	// Each line wrapped at word boundaries, as a paragraph.
	io.WriteString(stdout, strings.Join(fit.Wrap(strings.TrimSuffix(b.String(), "\n"), outputWidth(stdout)), "\n")+"\n")
	return exitOK
}

// unknownRule is the error for a rule name that no rule has, with the
// names close to it.
func unknownRule(name string) error { return suggest.UnknownRule(name, rules.All()) }
