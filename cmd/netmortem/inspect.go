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
	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// inspection is what `netmortem inspect -o json` prints.
type inspection struct {
	Inputs   []model.Input      `json:"inputs"`
	Warnings []report.Warning   `json:"warnings"`
	Skipped  []analyzer.Skipped `json:"skipped_rules"`
	Runnable []string           `json:"runnable_rules"`
	// Unreadable lists the captures recognized as such whose header
	// could not be read.
	Unreadable []string `json:"unreadable_captures"`
	// RecordNodes are the nodes each input's records carry
	// (recordNodes), for the inputs without a node of their own whose
	// sections name theirs; the table's NODE column shows them.
	RecordNodes map[string][]string `json:"record_nodes"`
	// NextEvidence are the commands that would bring the evidence the
	// bundle lacks (as analyze's next_evidence, without findings to
	// decide); ToCollect groups them by the node they are needed from.
	NextEvidence []report.NextEvidence `json:"next_evidence"`
	ToCollect    []nodeCollect         `json:"to_collect"`
}

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
	all := rules.All()
	// Which rules can run is decided by the evidence alone: run them on an
	// empty copy that keeps only the inputs.
	res := analyzer.Run(ctx, &model.Snapshot{Inputs: snap.Inputs}, all, nil)
	rep := report.New(snap, opened.Warns, res)
	in := inspection{Inputs: rep.Inputs, Warnings: rep.Warnings, Skipped: rep.Skipped, Runnable: []string{},
		Unreadable: operand.UnreadableCaptures(snap), RecordNodes: recordNodes(snap)}
	// Without findings, what the bundle lacks: the kinds the skipped
	// rules need, and those the others would join.
	in.NextEvidence = report.NextEvidenceFor(snap, all, res)
	in.ToCollect = perNode(in.NextEvidence)
	if in.Unreadable == nil {
		in.Unreadable = []string{}
	}
	skipped := map[string]bool{}
	for _, s := range res.Skipped {
		skipped[s.Rule] = true
	}
	for _, r := range all {
		if !skipped[r.Name] {
			in.Runnable = append(in.Runnable, r.Name)
		}
	}
	anonymizer := ao.anonymizer(snap)
	in = netmortem.Anonymize(anonymizer, in)
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(in)
	} else {
		err = writeInspectionFitted(stdout, in, outputWidth(stdout))
	}
	if err == nil {
		err = ao.writeMapping(anonymizer)
	}
	if err != nil {
		escape.Fprintln(stderr, "netmortem inspect:", err)
		return exitUnreadable
	}
	switch {
	case ctx.Err() != nil:
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
