package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem/analyzer/rules"
)

// failOnValues are the severities --fail-on takes, for completion.
var failOnValues = []string{"info", "warning", "error", "never"}

// setupCompletionCmd fits cobra's completion command to netmortem: its
// help, examples and exit codes, and those of the command of each shell,
// and a usage error without a shell.
func setupCompletionCmd(cmd *cobra.Command) {
	cmd.Short = "print the shell completion script for bash, zsh, fish or powershell"
	cmd.Long = "Prints the script that makes a shell complete netmortem's commands, flags, rule names (explain,\n" +
		"--enable, --disable), output formats and severities. Installed once, it serves every new shell:\n\n" +
		"bash (it needs the bash-completion package: apt install bash-completion, dnf install\n" +
		"bash-completion, brew install bash-completion@2; also to source the script):\n" +
		"  netmortem completion bash > ~/.local/share/bash-completion/completions/netmortem\n\n" +
		"zsh (it needs completion enabled: autoload -U compinit; compinit in ~/.zshrc):\n" +
		"  netmortem completion zsh > \"${fpath[1]}/_netmortem\"\n\n" +
		"fish:\n" +
		"  netmortem completion fish > ~/.config/fish/completions/netmortem.fish\n\n" +
		"powershell:\n" +
		"  netmortem completion powershell >> $PROFILE\n\n" +
		"To try it in the current shell only: source <(netmortem completion bash) (or zsh), or\n" +
		"netmortem completion fish | source. A shell started before the script was installed does not\n" +
		"complete netmortem until it is started again."
	cmd.Example = "  netmortem completion bash > ~/.local/share/bash-completion/completions/netmortem\n" +
		"  netmortem completion zsh > \"${fpath[1]}/_netmortem\"\n" +
		"  netmortem completion fish > ~/.config/fish/completions/netmortem.fish\n" +
		"  netmortem completion powershell >> $PROFILE"
	cmd.Annotations = map[string]string{exitCodesKey: exitCodesInfo}
	for _, shell := range cmd.Commands() {
		name := shell.Name()
		shell.Short = "print the completion script for " + name
		shell.Long = "Prints the completion script for " + name + " (see netmortem completion --help for the other shells).\n\n" +
			shellHelp[name]
		shell.Example = "  netmortem completion " + name + " " + shellExample[name]
		shell.Annotations = map[string]string{exitCodesKey: exitCodesInfo}
	}
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return &usageError{msg: fmt.Sprintf("unknown shell %q (bash, zsh, fish or powershell)%s", args[0], suggestCommand(cmd, args[0]))}
		}
		return nil
	}
	cmd.RunE = func(*cobra.Command, []string) error {
		return &usageError{msg: "no shell given (bash, zsh, fish or powershell)", showUsage: true}
	}
}

// shellHelp says, for each shell, how its completion script is installed.
var shellHelp = map[string]string{
	"bash": "The script needs the bash-completion package (apt install bash-completion, dnf install\n" +
		"bash-completion, brew install bash-completion@2 and its line in ~/.bash_profile), whether it\n" +
		"is installed for every new shell:\n\n" +
		"  netmortem completion bash > ~/.local/share/bash-completion/completions/netmortem\n\n" +
		"(or, for every user, in /usr/share/bash-completion/completions), or read into this one:\n\n" +
		"  source <(netmortem completion bash)",
	"zsh": "Completion must be enabled in zsh (once: echo 'autoload -U compinit; compinit' >> ~/.zshrc).\n" +
		"For every new shell:\n\n" +
		"  netmortem completion zsh > \"${fpath[1]}/_netmortem\"\n\n" +
		"(with Homebrew: > \"$(brew --prefix)/share/zsh/site-functions/_netmortem\"), or in this one:\n\n" +
		"  source <(netmortem completion zsh)",
	"fish": "For every new shell:\n\n" +
		"  netmortem completion fish > ~/.config/fish/completions/netmortem.fish\n\n" +
		"or in this one:\n\n" +
		"  netmortem completion fish | source",
	"powershell": "For every new shell, add the script to the profile:\n\n" +
		"  netmortem completion powershell >> $PROFILE\n\n" +
		"or in this one:\n\n" +
		"  netmortem completion powershell | Out-String | Invoke-Expression",
}

// shellExample is the rest of the example line of each shell's command.
var shellExample = map[string]string{
	"bash":       "> ~/.local/share/bash-completion/completions/netmortem",
	"zsh":        "> \"${fpath[1]}/_netmortem\"",
	"fish":       "> ~/.config/fish/completions/netmortem.fish",
	"powershell": ">> $PROFILE",
}

// completeRules completes rule names, with their titles; a value that is
// a comma-separated list (--enable a,b) is completed at its last item.
// A rule the list names already, or an earlier --enable or --disable, is
// not offered again.
func completeRules(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	done := ""
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		done, toComplete = toComplete[:i+1], toComplete[i+1:]
	}
	named := map[string]bool{}
	for _, name := range strings.Split(done, ",") {
		named[name] = true
	}
	for _, flag := range []string{"enable", "disable"} {
		if f := cmd.Flags().Lookup(flag); f != nil {
			if v, ok := f.Value.(pflag.SliceValue); ok {
				for _, name := range v.GetSlice() {
					named[name] = true
				}
			}
		}
	}
	var out []cobra.Completion
	for _, r := range rules.All() {
		if strings.HasPrefix(r.Name, toComplete) && !named[r.Name] {
			out = append(out, cobra.CompletionWithDesc(done+r.Name, r.Title()))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeHelp completes the commands that help takes: those of the
// command the arguments before name.
func completeHelp(help *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cmd := help.Root()
	for _, name := range args {
		if cmd = subcommand(cmd, name); cmd == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
	var out []cobra.Completion
	for _, sub := range cmd.Commands() {
		if (sub.IsAvailableCommand() || sub.Name() == "help") && strings.HasPrefix(sub.Name(), toComplete) {
			out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
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
