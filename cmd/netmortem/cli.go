package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/buildinfo"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/suggest"
)

// cli is one run of the command line: where it writes, and the exit code
// its command gave. The whole command tree is built for each run (newRoot),
// so that runs share nothing.
type cli struct {
	stdout, stderr io.Writer
	code           int
	// width is --width: the columns the output is fitted to.
	width widthFlag
}

// The exit codes as each command's help states them.
const (
	exitCodesGeneral = "0 nothing at or above --fail-on, 1 findings at or above it, 2 usage error,\n" +
		"3 an input could not be read or was refused, the time budget ran out, the run was interrupted,\n" +
		"a rule failed, the output could not be written, or an internal error occurred. A crash of the Go runtime (out of memory)\n" +
		"aborts with SIGABRT."
	exitCodesAnalyze = "0 no finding at or above --fail-on, 1 findings at or above it (even when inputs\n" +
		"were cut short), 2 usage error (a PATH that does not exist among them),\n" +
		"3 an input could not be read or was refused, the time budget ran out, the run was\n" +
		"interrupted, a rule failed, the output could not be written, or an input was cut short and no\n" +
		"finding decides."
	exitCodesBatch = "0 no finding at or above --fail-on, 1 findings at or above it, 2 usage error,\n" +
		"3 a bundle was not analyzed (unreadable, refused, timed out, over budget, not given by its\n" +
		"store for now), the batch was interrupted, the results could not be written, or no finding\n" +
		"decides and a bundle is incomplete (cut short)."
	exitCodesRead = "0 done, 2 usage error, 3 a PATH or a capture in it could not be read, the output\n" +
		"could not be written, or the run was interrupted."
	exitCodesFlows = "0 done, 2 usage error, 3 a PATH or a capture in it could not be read, a capture changed\n" +
		"between the two reads of the table and JSON forms (without a temporary file), their temporary\n" +
		"file could not be read back (or, for standard input, written), the output could not be\n" +
		"written, or the run was interrupted."
	exitCodesTrace = "0 traced, 2 usage error, 3 a BUNDLE or a capture in it could not be read, it has no nat\n" +
		"table or IPVS virtual service for the destination, the output could not be written, or the run\n" +
		"was interrupted."
	exitCodesDiff = "0 no finding that appeared or got worse is at or above --fail-on, 1 some are, 2 usage error,\n" +
		"3 a bundle or a capture in it could not be read, the output could not be written, or the run\n" +
		"was interrupted."
	exitCodesList = "0 done, 2 usage error, 3 the output could not be written."
	exitCodesInfo = "0 done, 2 usage error."
)

// exitCodesKey is the annotation that holds a command's exit codes, which
// its help and usage end with (the root's for commands without their own).
const exitCodesKey = "exit-codes"

// usageError is a usage error found before a command runs: its message,
// and whether the command's usage is printed after it (else a line says
// where the usage is).
type usageError struct {
	msg       string
	showUsage bool
	// usageOf, when not nil, is the command whose usage the line points
	// to, instead of the one that failed.
	usageOf *cobra.Command
}

func (e *usageError) Error() string { return e.msg }

// newRoot builds the command tree of one run.
func newRoot(c *cli) *cobra.Command {
	root := &cobra.Command{
		Use:   "netmortem",
		Short: "offline analyzer for Kubernetes network incidents",
		Long: "netmortem: offline analyzer for Kubernetes network incidents\n\n" +
			"Reads the evidence of an incident (packet captures, iptables, nftables and IPVS state, socket\n" +
			"tables, sysctls, kubectl snapshots, logs, whole support bundles), offline, and says what went\n" +
			"wrong, pointing at the frame, line or object that proves it.",
		Example: "  netmortem analyze fixtures/incidents/ephemeral-nodeport\n" +
			"  netmortem explain " + rules.SynAckReset.Name + "\n" +
			"  netmortem completion bash > ~/.local/share/bash-completion/completions/netmortem",
		Version:       buildinfo.Get().String(),
		Annotations:   map[string]string{exitCodesKey: exitCodesGeneral},
		SilenceErrors: true,
		SilenceUsage:  true,
		// The root runs no command itself: an unknown one is a usage
		// error, with cobra's suggestions ("did you mean").
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			return &usageError{msg: fmt.Sprintf("unknown command %q%s", args[0], suggestCommand(cmd, args[0]))}
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return &usageError{msg: "no command given", showUsage: true}
		},
	}
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetVersionTemplate("{{.Version}}\n")
	c.setHelp(root)
	root.PersistentFlags().Var(&c.width, "width", widthUsage)
	_ = root.RegisterFlagCompletionFunc("width", cobra.NoFileCompletions)
	// The commands write to c.stdout and c.stderr when they run: sized
	// by --width when it is given.
	root.PersistentPreRun = func(*cobra.Command, []string) {
		c.stdout, c.stderr = c.width.sized(c.stdout), c.width.sized(c.stderr)
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.AddCommand(newAnalyzeCmd(c), newInspectCmd(c), newFlowsCmd(c), newTraceCmd(c), newDiffCmd(c),
		newBatchCmd(c), newQueryCmd(c), newRulesCmd(c), newFormatsCmd(c), newExplainCmd(c), newCollectScriptCmd(c), newVersionCmd(c))
	root.SetHelpCommand(newHelpCmd())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, cmd := range root.Commands() {
		if cmd.Name() == "completion" {
			setupCompletionCmd(cmd)
		}
	}
	return root
}

// newHelpCmd is the help command: cobra's, but a command that netmortem
// lacks is a usage error, with the names close to it.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]...",
		Short: "print the help of a command",
		Long: "Prints the help of COMMAND, as netmortem COMMAND --help does: what it does, its flags,\n" +
			"examples and exit codes. Without COMMAND, netmortem's own help, with the list of commands.\n" +
			"A command's own commands follow it (netmortem help completion bash).",
		Example: "  netmortem help analyze\n" +
			"  netmortem help completion bash",
		Annotations:       map[string]string{exitCodesKey: "0 help printed, 2 usage error (no such command)."},
		ValidArgsFunction: completeHelp,
		RunE: func(help *cobra.Command, args []string) error {
			cmd := help.Root()
			for i, name := range args {
				next := subcommand(cmd, name)
				if next == nil {
					msg := fmt.Sprintf("unknown command %q", name)
					if i > 0 {
						msg += fmt.Sprintf(" for %q", cmd.CommandPath())
					}
					return &usageError{msg: msg + suggestCommand(cmd, name), usageOf: cmd}
				}
				cmd = next
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}

// subcommand is cmd's command called name (or one of its aliases): one
// that the help lists, or help; nil if it has none.
func subcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, sub := range cmd.Commands() {
		if (sub.IsAvailableCommand() || sub.Name() == "help") && (sub.Name() == name || sub.HasAlias(name)) {
			return sub
		}
	}
	return nil
}

// suggestCommand says which of cmd's commands a mistyped name may have
// meant, as suggest.Closest finds them.
func suggestCommand(cmd *cobra.Command, name string) string {
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() || sub.Name() == "help" {
			names = append(names, sub.Name())
		}
	}
	s := suggest.Closest(name, names)
	if len(s) == 0 {
		return ""
	}
	return fmt.Sprintf("; did you mean %s?", suggest.QuoteList(s))
}

// runs makes cmd run body and keep its exit code. operand names what the
// command takes ("PATH"): when it is not empty, at least one must be given.
func (c *cli) runs(cmd *cobra.Command, operand string, body func(args []string) int) {
	if operand != "" {
		cmd.Args = func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{msg: "no " + operand + " given", showUsage: true}
			}
			return nil
		}
	}
	// A command that finds a usage error itself prints the usage this way.
	cmd.Flags().Usage = func() { fmt.Fprint(c.stderr, "\n"+cmd.UsageString()) }
	cmd.RunE = func(_ *cobra.Command, args []string) error {
		c.code = body(args)
		return nil
	}
}

// noArgs is the Args of the commands that take none.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return &usageError{msg: fmt.Sprintf("takes no arguments, got %q", args[0])}
	}
	return nil
}

// execute runs the command line args on root and returns the exit code: the
// command's own, 0 after --help or --version, 2 for a usage error (an
// unknown command or flag, a bad flag value, missing operands).
func execute(root *cobra.Command, c *cli, args []string) int {
	if len(args) == 0 {
		root.SetOut(c.stderr)
		_ = root.Help()
		return exitUsage
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return c.code
	}
	if cmd == nil {
		cmd = root
	}
	escape.Fprintf(c.stderr, "%s: %s\n", cmd.CommandPath(), err.Error())
	var ue *usageError
	isUsage := errors.As(err, &ue)
	switch {
	case isUsage && ue.showUsage:
		fmt.Fprint(c.stderr, "\n"+cmd.UsageString())
	case isUsage && ue.usageOf != nil:
		fmt.Fprintf(c.stderr, "Run '%s --help' for usage.\n", ue.usageOf.CommandPath())
	default:
		fmt.Fprintf(c.stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return exitUsage
}
