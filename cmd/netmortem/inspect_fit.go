package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/internal/operand"
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
func groupInputs(in inspection) []*inspectGroup {
	var groups []*inspectGroup
	index := map[[2]string]*inspectGroup{}
	for _, i := range in.Inputs {
		key := [2]string{nodeCell(i, in.RecordNodes), operand.InputDir(i.Path)}
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

// writeInspectionFitted writes the table form of inspect fitted to width
// columns (no limit if 0): the files grouped by node and folder, each
// group under a heading that names them, its files by their names in the
// folder; then the counts, the warnings and the rules, wrapped.
func writeInspectionFitted(w io.Writer, in inspection, width int) error {
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
	for gi, g := range groupInputs(in) {
		if gi > 0 {
			b.WriteString("\n")
		}
		node := "no node"
		if g.node != "" {
			node = "node " + g.node
		}
		lines("", escape.String(node+", folder "+g.dir+"/"))
		t := &fit.Table{Header: []string{"FILE", "FORMAT", "EVIDENCE", "RECORDS", "WARNINGS", "NOTE"}, MinWidth: []int{8, 6, 8, 7, 8, 8}}
		for _, i := range g.inputs {
			note, ok := inputNote(i, in.Unreadable)
			switch {
			case ok:
				read++
			case i.Skipped != "":
				skipped++
			}
			t.Rows = append(t.Rows, []string{escape.String(strings.TrimPrefix(i.Path, g.dir+"/")), escape.String(i.Format),
				escape.String(string(i.Kind)), strconv.Itoa(i.Records), strconv.Itoa(i.Warnings), escape.String(note)})
		}
		if err := flush(); err != nil {
			return err
		}
		if err := t.Render(w, width); err != nil {
			return err
		}
	}
	b.WriteString("\n")
	lines("", fmt.Sprintf("%s read, %d skipped, %s.", count(read, "file"), skipped, count(len(in.Warnings), "warning")))
	for _, wn := range in.Warnings {
		lines("  warning: ", escape.String(wn.Position+": "+wn.Message))
	}
	b.WriteString("\n")
	lines("Rules that can run: ", strings.Join(in.Runnable, ", "))
	if len(in.Skipped) > 0 {
		b.WriteString("Rules that lack evidence:\n")
		for _, s := range in.Skipped {
			lines("  "+s.Rule+": ", "needs "+strings.Join(missingEvidence(s.Missing, s.AnyOf), ", "))
		}
	}
	if len(in.ToCollect) > 0 {
		b.WriteString("\nTo collect:\n")
		for _, g := range in.ToCollect {
			lines("  ", escape.String(collectHeading(g)))
			for _, c := range g.Commands {
				lines("    $ ", escape.String(c.Shell))
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
