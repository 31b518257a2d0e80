package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/netmortem/netmortem/parse/formatdoc"
)

func newFormatsCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "formats [flags]",
		Short: "list the input formats netmortem reads, with their commands",
		Long: "Lists every input format netmortem recognizes, by domain, with the command that produces it;\n" +
			"-o markdown gives the reference documentation (docs/inputs.md).",
		Example: "  netmortem formats\n" +
			"  netmortem formats -o json",
		Annotations: map[string]string{exitCodesKey: exitCodesList},
	}
	output := cmd.Flags().StringP("output", "o", "table", "output format: table, json, markdown (docs/inputs.md)")
	completeFlags(cmd, map[string]cobra.CompletionFunc{"output": completeValues("table", "json", "markdown")})
	c.runs(cmd, "", func([]string) int { return runFormats(c.stdout, c.stderr, output) })
	return cmd
}

func runFormats(stdout, stderr io.Writer, output *string) int {
	if err := oneOf("output", *output, []string{"table", "json", "markdown"}); err != nil {
		fmt.Fprintln(stderr, "netmortem formats:", err)
		return exitUsage
	}
	var err error
	switch *output {
	case "table":
		err = formatdoc.WriteTable(stdout, outputWidth(stdout))
	case "json":
		err = formatdoc.WriteJSON(stdout)
	case "markdown":
		err = formatdoc.WriteMarkdown(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "netmortem formats:", err)
		return exitUnreadable
	}
	return exitOK
}
