package flows

import (
	"fmt"
	"io"
	"strings"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/fit"
)

// WriteTable writes t in the table form fitted to width columns: the
// summary wrapped, the tables' columns narrowed and their cells wrapped
// (a table that cannot be made that narrow is written one block per
// attempt), and the positions relative to the directory of the captures,
// named once at the top. width <= 0 writes what Write(w, "table") does.
func (t *Table) WriteTable(w io.Writer, width int) error {
	if t == nil || w == nil {
		return fmt.Errorf("flows: nil table or writer")
	}
	if width <= 0 {
		return t.writeTable(w)
	}
	var b strings.Builder
	root := t.root()
	if root != "" {
		for _, l := range fit.Wrap(escape.String("Captures under "+root+" (paths below are relative to it)"), width) {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
	}
	for _, l := range fit.Wrap(t.summaryLine(), width) {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
	if len(t.Attempts) == 0 {
		b.WriteString("No connection attempts match.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	et := &fit.Table{Header: endpointColumns, Rows: t.endpointRows()}
	if err := et.Render(w, width); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	at := &fit.Table{Header: columns}
	prefix := escape.String(root + "/")
	for i := range t.Attempts {
		row := t.row(&t.Attempts[i])
		if root != "" {
			row[0] = strings.Replace(row[0], prefix, "", 1)
		}
		at.Rows = append(at.Rows, row)
	}
	return at.Render(w, width)
}

// root is the directory all of t's captures are in, or "".
func (t *Table) root() string {
	root := ""
	for i, c := range t.Captures {
		dir := ""
		if j := strings.LastIndex(c.File, "/"); j >= 0 {
			dir = c.File[:j]
		}
		if i == 0 {
			root = dir
			continue
		}
		for root != "" && dir != root && !strings.HasPrefix(dir, root+"/") {
			if j := strings.LastIndex(root, "/"); j >= 0 {
				root = root[:j]
			} else {
				root = ""
			}
		}
	}
	return root
}
