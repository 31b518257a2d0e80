package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem/internal/fit"
)

// writeHelp writes cmd's help (its long description, then its usage) or,
// when long is false, its usage only, fitted to width: prose is reflowed
// and wrapped, the flags' descriptions wrapped beside them, and a line
// that is a command to paste (netmortem ..., $ ...) is kept whole.
func writeHelp(w io.Writer, cmd *cobra.Command, width int, long bool) error {
	var b strings.Builder
	if long {
		text := cmp.Or(cmd.Long, cmd.Short)
		if text != "" {
			b.WriteString(fitProse(strings.TrimRight(text, " \n"), width) + "\n\n")
		}
		if !cmd.Runnable() && !cmd.HasSubCommands() {
			_, err := io.WriteString(w, b.String())
			return err
		}
	}
	b.WriteString("Usage:\n")
	if cmd.Runnable() && !cmd.HasAvailableSubCommands() {
		b.WriteString(fitText("  "+cmd.UseLine(), width) + "\n")
	}
	if cmd.HasAvailableSubCommands() {
		b.WriteString("  " + cmd.CommandPath() + " [command]\n")
	}
	if len(cmd.Aliases) > 0 {
		b.WriteString("\nAliases:\n  " + cmd.NameAndAliases() + "\n")
	}
	if cmd.HasExample() {
		b.WriteString("\nExamples:\n" + fitProse(cmd.Example, width) + "\n")
	}
	if cmd.HasAvailableSubCommands() {
		b.WriteString("\nCommands:\n")
		pad := 0
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				pad = max(pad, len(sub.Name()))
			}
		}
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				prefix := "  " + sub.Name() + strings.Repeat(" ", pad-len(sub.Name())+1)
				b.WriteString(strings.Join(fit.Indent(prefix, sub.Short, width), "\n") + "\n")
			}
		}
	}
	if cmd.HasAvailableLocalFlags() {
		local, anon := splitFlags(cmd.LocalFlags())
		b.WriteString("\nFlags:\n" + flagUsages(local, width) + "\n")
		if anon.HasFlags() {
			b.WriteString("\nAnonymization flags:\n" + flagUsages(anon, width) + "\n")
		}
	}
	if cmd.HasAvailableInheritedFlags() {
		b.WriteString("\nGlobal Flags:\n" + flagUsages(cmd.InheritedFlags(), width) + "\n")
	}
	if cmd.HasAvailableSubCommands() {
		b.WriteString("\n" + fitText("Run '"+cmd.CommandPath()+" <command> --help' for a command's flags and examples.", width) + "\n")
	}
	codes := cmd.Annotations[exitCodesKey]
	if codes == "" {
		codes = cmd.Root().Annotations[exitCodesKey]
	}
	b.WriteString("\n" + fitProse("Exit codes: "+codes, width) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// fitProse reflows s to width: the lines of a paragraph (lines separated
// by blank ones) are joined and wrapped, but an indented line, or one
// that follows it, stays a line of its own (fitText wraps it, hanging);
// a command to paste is never wrapped. width <= 0 returns s as it is.
func fitProse(s string, width int) string {
	if width <= 0 {
		return s
	}
	var out, para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, fit.Wrap(strings.Join(para, " "), width)...)
			para = nil
		}
	}
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			flush()
			out = append(out, "")
		case isPasteLine(l):
			flush()
			out = append(out, l)
		case strings.HasPrefix(l, " "):
			flush()
			out = append(out, fitText(l, width))
		default:
			para = append(para, l)
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// isPasteLine reports whether l is a command meant to be pasted into a
// shell, indented on a line of its own (netmortem ..., $ ...): such a line
// is printed whole, however wide.
func isPasteLine(l string) bool {
	t := strings.TrimLeft(l, " ")
	return len(t) < len(l) && (strings.HasPrefix(t, "netmortem ") || strings.HasPrefix(t, "$ "))
}

// flagUsages lists flags as pflag's FlagUsagesWrapped does, wrapped to
// width (0: no limit), in the order of flagRank, and a boolean flag as
// --name, without the "[=true|false]" pflag adds to it since v1.1.0: such
// a flag is set by its name alone (--name=false is still accepted).
func flagUsages(flags *pflag.FlagSet, width int) string {
	var all []*pflag.Flag
	flags.VisitAll(func(f *pflag.Flag) { all = append(all, f) })
	slices.SortStableFunc(all, func(a, b *pflag.Flag) int {
		return cmp.Or(cmp.Compare(flagRank(a.Name), flagRank(b.Name)), strings.Compare(a.Name, b.Name))
	})
	shown := pflag.NewFlagSet("", pflag.ContinueOnError)
	shown.SortFlags = false
	for _, f := range all {
		g := *f
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			g.Value = plainValue{f.Value}
		}
		shown.AddFlag(&g)
	}
	return strings.TrimRight(shown.FlagUsagesWrapped(max(width, 0)), " \n")
}

// splitFlags splits flags into the anonymization's (--anonymize...),
// listed apart, and the others.
func splitFlags(flags *pflag.FlagSet) (others, anon *pflag.FlagSet) {
	others = pflag.NewFlagSet("", pflag.ContinueOnError)
	anon = pflag.NewFlagSet("", pflag.ContinueOnError)
	flags.VisitAll(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Name, "anonymize") {
			anon.AddFlag(f)
		} else {
			others.AddFlag(f)
		}
	})
	return others, anon
}

// commonFlags are the flags a command's help lists first, in this order:
// what it writes, what it looks at, what it fails on. The others follow
// by name, then --width and --help.
var commonFlags = []string{"output", "dst", "src", "proto", "from-node", "local", "fail-on",
	"quiet", "host", "port", "state", "since", "until", "rule", "out", "db", "jobs", "enable",
	"disable", "node", "config", "baseline"}

// flagRank is where the flag called name comes in a command's help.
func flagRank(name string) int {
	if i := slices.Index(commonFlags, name); i >= 0 {
		return i
	}
	switch {
	case name == "help":
		return len(commonFlags) + 2
	case name == "width":
		return len(commonFlags) + 1
	}
	return len(commonFlags)
}

// plainValue is a flag's value with only the methods of pflag.Value, so
// that its flag is not listed as a boolean one.
type plainValue struct{ pflag.Value }

// setHelp makes the commands of root print their help and usage with
// writeHelp, fitted to the width of where they go.
func (c *cli) setHelp(root *cobra.Command) {
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		w := cmd.OutOrStdout()
		_ = writeHelp(w, cmd, outputWidth(c.width.sized(c.target(w))), true)
	})
	root.SetUsageFunc(func(cmd *cobra.Command) error {
		w := cmd.OutOrStderr()
		return writeHelp(w, cmd, outputWidth(c.width.sized(c.target(w))), false)
	})
}

// target is where text written to w ends up: the help and usage cobra
// writes into a buffer (UsageString) go to stderr.
func (c *cli) target(w io.Writer) io.Writer {
	if w == c.stdout || w == c.stderr {
		return w
	}
	return c.stderr
}

// widthUsage is the description of --width.
var widthUsage = fmt.Sprintf("fit tables and text to `N` columns (0: no limit); default: the terminal's width, else $COLUMNS, else %d", defaultWidth)
