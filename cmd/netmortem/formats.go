package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/netmortem/netmortem/parse"
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
		err = formatsTable(stdout)
	case "json":
		err = formatsJSON(stdout)
	case "markdown":
		err = formatsMarkdown(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "netmortem formats:", err)
		return exitUnreadable
	}
	return exitOK
}

// formatDoc is what the formats command says of one format.
type formatDoc struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Package string `json:"package"`
	Command string `json:"command"`
	Doc     string `json:"doc"`
}

// domainOrder is the order the domain packages are listed in; formats keep
// the registry's order within their package.
var domainOrder = []string{"parse", "parse/netfilter", "parse/host", "parse/kube", "parse/logs", "parse/bundle"}

// formatDocs describes every registered format, by domain package.
func formatDocs() []formatDoc {
	var out []formatDoc
	for _, f := range parse.Formats() {
		out = append(out, formatDoc{f.Name, string(f.Kind), packageOf(f.Sniff), f.Command, f.Doc})
	}
	rank := func(pkg string) int {
		if i := slices.Index(domainOrder, pkg); i >= 0 {
			return i
		}
		return len(domainOrder)
	}
	slices.SortStableFunc(out, func(a, b formatDoc) int { return rank(a.Package) - rank(b.Package) })
	return out
}

// packageOf names the package, from the module's root, whose code fn is:
// "parse/host" for a sniffer of package host.
func packageOf(fn any) string {
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	name = strings.TrimPrefix(name, "github.com/netmortem/netmortem/")
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		name = name[:slash+1+dot]
	}
	return name
}

func formatsTable(w io.Writer) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNormal),
		tablewriter.WithRowMaxWidth(72))
	t.Header("FORMAT", "KIND", "PACKAGE", "COMMAND")
	for _, d := range formatDocs() {
		if err := t.Append(d.Name, d.Kind, d.Package, d.Command); err != nil {
			return err
		}
	}
	return t.Render()
}

func formatsJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(formatDocs())
}

// The text of docs/inputs.md before and after the table.
var (
	//go:embed inputs_head.md
	inputsHead string
	//go:embed inputs_tail.md
	inputsTail string
)

// mdText escapes plain text for a Markdown table cell.
var mdText = strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", "`", "\\`")

// mdCell makes Markdown fit in a table cell.
var mdCell = strings.NewReplacer("|", `\|`, "\n", " ")

func formatsMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString(inputsHead)
	b.WriteString("| format | evidence | package | produced by | notes |\n|---|---|---|---|---|\n")
	for _, d := range formatDocs() {
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | %s |\n", d.Name, d.Kind, d.Package, mdText.Replace(d.Command), mdCell.Replace(d.Doc))
	}
	b.WriteString(inputsTail)
	_, err := io.WriteString(w, b.String())
	return err
}
