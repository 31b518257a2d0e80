// Package formatdoc renders what the input formats netmortem reads say of
// themselves (package parse's registry): the list `netmortem formats`
// prints, as a table, JSON, or the Markdown of docs/inputs.md.
package formatdoc

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

	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/parse"
)

// Format is what the formats command says of one format.
type Format struct {
	// Name is the format's name: "iptables-save".
	Name string `json:"name"`
	// Kind is the kind of evidence it carries: "netfilter".
	Kind string `json:"kind"`
	// Package is the package, from the module's root, that recognizes
	// the format: "parse/host".
	Package string `json:"package"`
	// Command is what produces it, in plain text.
	Command string `json:"command"`
	// Doc says what is read and how (Markdown; may be empty).
	Doc string `json:"doc"`
}

// domainOrder is the order the domain packages are listed in; formats keep
// the registry's order within their package.
var domainOrder = []string{"parse", "parse/netfilter", "parse/host", "parse/kube", "parse/logs", "parse/bundle"}

// Describe describes every format of parse.Formats, by domain package.
func Describe() []Format {
	var out []Format
	for _, f := range parse.Formats() {
		out = append(out, Format{f.Name, string(f.Kind), packageOf(f.Sniff), f.Command, f.Doc})
	}
	rank := func(pkg string) int {
		if i := slices.Index(domainOrder, pkg); i >= 0 {
			return i
		}
		return len(domainOrder)
	}
	slices.SortStableFunc(out, func(a, b Format) int { return rank(a.Package) - rank(b.Package) })
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

// WriteTable writes one row per format: its name, kind of evidence,
// package and command, in at most width columns, the cells wrapped to fit
// and the package left out when it does not (-o json gives it); narrower
// than a format's name, its kind and a command's 20 columns, the table is
// laid out as any other (fit.Table), names wrapped too. Without a width
// (0), a cell is wrapped to 72 columns.
func WriteTable(w io.Writer, width int) error {
	if width <= 0 {
		t := tablewriter.NewTable(w,
			tablewriter.WithHeaderAutoFormat(tw.Off),
			tablewriter.WithRowAutoWrap(tw.WrapNormal),
			tablewriter.WithRowMaxWidth(72))
		t.Header("FORMAT", "KIND", "PACKAGE", "COMMAND")
		for _, d := range Describe() {
			if err := t.Append(d.Name, d.Kind, d.Package, d.Command); err != nil {
				return err
			}
		}
		return t.Render()
	}
	header := []string{"FORMAT", "KIND", "PACKAGE", "COMMAND"}
	var rows, short [][]string
	for _, d := range Describe() {
		rows = append(rows, []string{d.Name, d.Kind, d.Package, d.Command})
		short = append(short, []string{d.Name, d.Kind, d.Command})
	}
	// A format's name, kind and package are kept whole.
	mins := []int{0, 0, 0, 30}
	for _, r := range append(rows, header) {
		for c := range 3 {
			mins[c] = max(mins[c], fit.Width(r[c]))
		}
	}
	if widths, ok := fit.ColumnWidths(header, rows, mins, width); ok {
		return fit.WriteBox(w, header, rows, widths)
	}
	header = []string{"FORMAT", "KIND", "COMMAND"}
	if widths, ok := fit.ColumnWidths(header, short, []int{mins[0], mins[1], 20}, width); ok {
		return fit.WriteBox(w, header, short, widths)
	}
	// Narrower still: laid out as any table, names wrapped too.
	return (&fit.Table{Header: header, Rows: short}).Render(w, width)
}

// WriteJSON writes Describe() as indented JSON.
func WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Describe())
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

// WriteMarkdown writes docs/inputs.md: what netmortem reads, with a row
// for every format.
func WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString(inputsHead)
	b.WriteString("| format | evidence | package | produced by | notes |\n|---|---|---|---|---|\n")
	for _, d := range Describe() {
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | %s |\n", d.Name, d.Kind, d.Package, mdText.Replace(d.Command), mdCell.Replace(d.Doc))
	}
	b.WriteString(inputsTail)
	_, err := io.WriteString(w, b.String())
	return err
}
