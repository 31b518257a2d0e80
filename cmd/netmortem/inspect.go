package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/inspect"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

func newInspectCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect [flags] PATH...",
		Short: "list what was found in a bundle, file by file, and which rules can run",
		Long: "Lists what netmortem finds in each PATH, file by file: the format it recognized, the node,\n" +
			"how many records it read, the warnings, the files it skipped and why; then which rules\n" +
			"can run and which lack evidence. A PATH may be - (standard input, read as one file) or a\n" +
			"quoted glob ('**' matches any depth).",
		Example: "  netmortem inspect fixtures/incidents/ephemeral-nodeport\n" +
			"  netmortem inspect -o json fixtures/captures/handshakes.pcap",
		Annotations: map[string]string{exitCodesKey: exitCodesRead},
	}
	fs := cmd.Flags()
	output := fs.StringP("output", "o", "table", "output format: table, json")
	node := fs.String("node", "", "attribute inputs to this node when the bundle layout does not say")
	var ao anonymizeOptions
	addAnonymizeFlags(fs, &ao)
	completeFlags(cmd, map[string]cobra.CompletionFunc{"output": completeValues("table", "json"), "node": cobra.NoFileCompletions})
	c.runs(cmd, "PATH", func([]string) int { return runInspect(fs, c.stdout, c.stderr, output, node, &ao) })
	return cmd
}

func runInspect(fs *pflag.FlagSet, stdout, stderr io.Writer, output, node *string, ao *anonymizeOptions) int {
	if err := oneOf("output", *output, []string{"table", "json"}); err != nil {
		escape.Fprintln(stderr, "netmortem inspect:", err)
		return exitUsage
	}
	if err := ao.loadKey(); err != nil {
		escape.Fprintln(stderr, "netmortem inspect:", err)
		return exitUsage
	}
	objs := operand.NewObjects(0)
	defer objs.Close()
	operands, err := operand.Expand(context.Background(), fs.Args(), objs, nil)
	if err != nil {
		escape.Fprintln(stderr, "netmortem inspect:", err)
		return exitUsage
	}
	ctx, stop := signalContext()
	defer stop()
	opened := operand.Open(ctx, operands, &parse.Options{Node: *node, Summary: parse.Summary{Enabled: true}, Stdin: stdin})
	snap := opened.Snap
	in := inspect.Inspect(ctx, snap, opened.Warns, rules.All())
	// An interrupt once the listing is made cuts nothing of it short.
	interrupted := ctx.Err() != nil
	anonymizer := ao.anonymizer(snap)
	in = netmortem.Anonymize(anonymizer, in)
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(in)
	} else {
		err = in.WriteTable(stdout, outputWidth(stdout))
	}
	if err == nil {
		err = ao.writeMapping(anonymizer)
	}
	if err != nil {
		escape.Fprintln(stderr, "netmortem inspect:", err)
		return exitUnreadable
	}
	testHook("written")
	switch {
	case interrupted:
		fmt.Fprintln(stderr, "netmortem inspect: interrupted: the list covers what was read until then")
		return exitUnreadable
	case opened.Err != nil:
		escape.Fprintln(stderr, "netmortem inspect:", opened.Err)
		return exitUnreadable
	case len(in.Unreadable) > 0:
		escape.Fprintf(stderr, "netmortem inspect: %s could not be read: %s\n", count(len(in.Unreadable), "capture"),
			strings.Join(in.Unreadable, ", "))
		return exitUnreadable
	}
	return exitOK
}

// saySkipped writes on w, escaped, the summary of the inputs of snap
// that were skipped (inspect.SkippedParts), when there are any: fitted to
// w's width, then the inspect command that lists them whole on a line of
// its own, so that it can be pasted.
func saySkipped(w io.Writer, snap *model.Snapshot, paths []string) {
	line, cmd := inspect.SkippedParts(snap, paths)
	if line == "" {
		return
	}
	fprintfFitted(w, outputWidth(w), "%s; this lists what was read and skipped, file by file:\n", line)
	escape.Fprintf(w, "  %s\n", cmd)
}
