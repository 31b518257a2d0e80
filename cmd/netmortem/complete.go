package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/netmortem/netmortem/analyzer/rules"
)

// failOnValues are the severities --fail-on takes, for completion.
var failOnValues = []string{"info", "warning", "error", "never"}

// setupCompletionCmd fits cobra's completion command to netmortem: its
// summary, examples, exit codes, and a usage error without a shell.
func setupCompletionCmd(cmd *cobra.Command) {
	cmd.Short = "print the shell completion script for bash, zsh, fish or powershell"
	cmd.Example = "  netmortem completion bash > ~/.local/share/bash-completion/completions/netmortem\n" +
		"  netmortem completion zsh > \"${fpath[1]}/_netmortem\"\n" +
		"  netmortem completion fish > ~/.config/fish/completions/netmortem.fish\n" +
		"  netmortem completion powershell >> $PROFILE"
	cmd.Annotations = map[string]string{exitCodesKey: exitCodesInfo}
	for _, shell := range cmd.Commands() {
		shell.Short = "print the completion script for " + shell.Name()
	}
	cmd.RunE = func(*cobra.Command, []string) error {
		return &usageError{msg: "no shell given (bash, zsh, fish or powershell)", showUsage: true}
	}
}

// completeRules completes rule names, with their titles; a value that is
// a comma-separated list (--enable a,b) is completed at its last item.
func completeRules(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	done := ""
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		done, toComplete = toComplete[:i+1], toComplete[i+1:]
	}
	var out []cobra.Completion
	for _, r := range rules.All() {
		if strings.HasPrefix(r.Name, toComplete) {
			out = append(out, cobra.CompletionWithDesc(done+r.Name, r.Title()))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeValues completes a flag from a fixed list of values.
func completeValues(values ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFlags registers the completion of cmd's flags: name -> function.
// A flag that cmd lacks is a mistake in netmortem, so it panics.
func completeFlags(cmd *cobra.Command, funcs map[string]cobra.CompletionFunc) {
	for name, f := range funcs {
		if err := cmd.RegisterFlagCompletionFunc(name, f); err != nil {
			panic(err)
		}
	}
}
