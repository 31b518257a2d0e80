package inspect

import (
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/model"
)

// inspectGroup is the files of one node in one folder.
type inspectGroup struct {
	node, dir string
	inputs    []model.Input
}

// groupInputs groups the inputs by node (their own, or the ones their
// records carry) and folder, the groups in the order of node then folder
// (the files without a node first), the files in the order read.
func groupInputs(in Inspection) []*inspectGroup {
	var groups []*inspectGroup
	index := map[[2]string]*inspectGroup{}
	for _, i := range in.Inputs {
		key := [2]string{nodeCell(i, in.RecordNodes), inputDir(i.Path)}
		g := index[key]
		if g == nil {
			g = &inspectGroup{node: key[0], dir: key[1]}
			index[key] = g
			groups = append(groups, g)
		}
		g.inputs = append(g.inputs, i)
	}
	sort.SliceStable(groups, func(a, b int) bool {
		if groups[a].node != groups[b].node {
			return groups[a].node < groups[b].node
		}
		return groups[a].dir < groups[b].dir
	})
	return groups
}

// WriteTable writes in as tables fitted to width columns (no limit if 0):
// the files grouped by node and folder, each group under a heading that
// names them, its files by their names in the folder; then the counts, the
// warnings, the rules, and what to collect, wrapped.
func (in Inspection) WriteTable(w io.Writer, width int) error {
	var b strings.Builder
	lines := func(prefix, s string) {
		for _, l := range fit.Indent(prefix, s, width) {
			b.WriteString(l + "\n")
		}
	}
	flush := func() error {
		_, err := io.WriteString(w, b.String())
		b.Reset()
		return err
	}
	read, skipped := 0, 0
	dropped := false
	for gi, g := range groupInputs(in) {
		if gi > 0 {
			b.WriteString("\n")
		}
		node := "no node"
		if g.node != "" {
			node = "node " + g.node
		}
		prefix := strings.TrimSuffix(g.dir, "/") + "/" // the root is "/", not "//"
		lines("", escape.String(node+", folder "+prefix))
		t := &fit.Table{Header: []string{"FILE", "FORMAT", "EVIDENCE", "RECORDS", "WARNINGS", "NOTE"}}
		for _, i := range g.inputs {
			note, ok := inputNote(i, in.Unreadable)
			switch {
			case ok:
				read++
			case i.Skipped != "":
				skipped++
			}
			t.Rows = append(t.Rows, []string{escape.String(strings.TrimPrefix(i.Path, prefix)), escape.String(i.Format),
				escape.String(string(i.Kind)), strconv.Itoa(i.Records), strconv.Itoa(i.Warnings), escape.String(note)})
		}
		if fitColumns(t, width) {
			dropped = true
		}
		if err := flush(); err != nil {
			return err
		}
		if err := t.Render(w, width); err != nil {
			return err
		}
	}
	if dropped {
		lines("", "EVIDENCE, the kind of each format, is not shown at this width (--width 0 or -o json show it).")
	}
	b.WriteString("\n")
	lines("", fmt.Sprintf("%s read, %d skipped, %s.", count(read, "file"), skipped, count(len(in.Warnings), "warning")))
	for _, wn := range in.Warnings {
		lines("  warning: ", escape.String(wn.Position+": "+wn.Message))
	}
	b.WriteString("\n")
	if len(in.Runnable) == 0 {
		lines("Rules that can run: ", "none")
	} else {
		lines("Rules that can run: ", strings.Join(in.Runnable, ", "))
	}
	if len(in.Skipped) > 0 {
		lines("", "Rules that lack evidence:")
		for _, s := range in.Skipped {
			lines("  "+s.Rule+": ", "needs "+strings.Join(missingEvidence(s.Missing, s.AnyOf), ", "))
		}
	}
	if len(in.ToCollect) > 0 {
		b.WriteString("\nTo collect:\n")
		for _, g := range in.ToCollect {
			lines("  ", escape.String(collectHeading(g)))
			for _, c := range g.Commands {
				// A command is printed whole, however wide, to be
				// pasted.
				b.WriteString("    $ " + escape.String(c.Shell) + "\n")
				if why := collectWhy(c); why != "" {
					lines("        ", escape.String(why))
				}
			}
			for _, c := range g.Collected {
				lines("    ", escape.String(collectedLine(c)))
			}
		}
	}
	return flush()
}

// minWidths are the narrowest the columns of inspect's table may be made,
// for rows: a file's name, its format and the words of a note whole while
// the table can fit width so (a name in a third of it, a word of a note
// in a quarter), else the format and then the note wrapped too.
// evidenceColumn is the column of inspect's table that fitColumns leaves
// out first.
const evidenceColumn = 2

// fitColumns sets the minimum widths of t, inspect's table of one group,
// for width (minWidths). When the names of its files and formats cannot be
// kept whole with every column, but can without EVIDENCE (which the format
// implies), that column is left out, and fitColumns reports it.
func fitColumns(t *fit.Table, width int) bool {
	names := func(rows [][]string) [][]string {
		out := make([][]string, len(rows))
		for i, r := range rows {
			out[i] = slices.Clone(r)
			for c := range out[i] {
				if c != 0 && c != 1 && c != len(r)-1 {
					out[i][c] = "" // numbers and kinds: their headers are wider
				}
			}
		}
		return out
	}
	t.MinWidth = minWidths(names(t.Rows), width)
	whole := minWidths(names(t.Rows), 0)
	whole[0] = min(whole[0], width/3)
	if width <= 0 || t.MinWidth[0] >= whole[0] && t.MinWidth[1] >= whole[1] {
		return false
	}
	header := slices.Delete(slices.Clone(t.Header), evidenceColumn, evidenceColumn+1)
	var rows [][]string
	for _, r := range t.Rows {
		rows = append(rows, slices.Delete(slices.Clone(r), evidenceColumn, evidenceColumn+1))
	}
	mins := slices.Delete(whole, evidenceColumn, evidenceColumn+1)
	// The note's words are kept whole before the files' names, cut after
	// a separator; then the note's words may be cut too.
	for _, relax := range []int{-1, 0, len(mins) - 1} {
		if relax >= 0 {
			mins[relax] = 8
		}
		if _, ok := fit.ColumnWidths(header, rows, mins, width); ok {
			t.Header, t.Rows, t.MinWidth = header, rows, mins
			return true
		}
	}
	return false
}

func minWidths(rows [][]string, width int) []int {
	loose := []int{8, 6, 8, 7, 8, 8}
	whole := slices.Clone(loose)
	for _, r := range rows {
		whole[0], whole[1] = max(whole[0], fit.Width(r[0])), max(whole[1], fit.Width(r[1]))
		for _, word := range strings.Fields(r[5]) {
			whole[5] = max(whole[5], fit.Width(word))
		}
	}
	if width <= 0 {
		return whole
	}
	whole[0], whole[5] = min(whole[0], width/3), min(whole[5], width/4)
	header := []string{"FILE", "FORMAT", "EVIDENCE", "RECORDS", "WARNINGS", "NOTE"}
	for _, relax := range []int{-1, 1, 5} {
		if relax >= 0 {
			whole[relax] = loose[relax]
		}
		if _, ok := fit.ColumnWidths(header, rows, whole, width); ok {
			break
		}
	}
	return whole
}

// inputNote is the NOTE of input i in inspect's table, and whether i was
// read: why it was skipped, that its capture header could not be read, or
// what it held.
func inputNote(i model.Input, unreadable []string) (string, bool) {
	if i.Skipped != "" {
		return i.Skipped, false
	}
	if slices.Contains(unreadable, i.Path) {
		return "capture header unreadable", false
	}
	keys := make([]string, 0, len(i.Details))
	for k := range i.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var kv []string
	for _, k := range keys {
		kv = append(kv, fmt.Sprintf("%s=%d", k, i.Details[k]))
	}
	return strings.Join(kv, " "), true
}

// missingEvidence says what a rule lacks: the kinds it needs, and "one of"
// the kinds of which it needs any.
func missingEvidence[K ~string](missing, anyOf []K) []string {
	var m []string
	for _, k := range missing {
		m = append(m, string(k))
	}
	if len(anyOf) > 0 {
		var a []string
		for _, k := range anyOf {
			a = append(a, string(k))
		}
		m = append(m, "one of "+strings.Join(a, ", "))
	}
	return m
}

// nodeCell is what the table's NODE shows for in: its node, or else the
// nodes its records carry, comma separated.
func nodeCell(in model.Input, nodes map[string][]string) string {
	if in.Node != "" {
		return in.Node
	}
	return strings.Join(nodes[in.Path], ",")
}

// inputDir is the folder of an input's path, as path.Dir gives it, but
// keeping the "//" of a bundle URL's scheme (s3://bucket/dir), and taking
// a directory listed with a separator at its end (model.IsDirPath, one
// the run never read) for the entry of its own folder, not for a folder.
func inputDir(p string) string {
	if model.IsDirPath(p) {
		p = p[:len(p)-1] // a separator is one byte
	}
	if scheme, _, ok := strings.Cut(p, "://"); ok && isScheme(scheme) {
		if i := strings.LastIndexByte(p, '/'); i > len(scheme)+2 {
			return p[:i]
		}
	}
	return path.Dir(p)
}

// isScheme reports whether s is a URL scheme (RFC 3986): a letter, then
// letters, digits, '+', '-' or '.'.
func isScheme(s string) bool {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || strings.ContainsRune("+-.", r))) {
			return false
		}
	}
	return s != ""
}

// count says n things: "1 file", "3 files".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
