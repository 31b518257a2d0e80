package fit

import (
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// WriteBox writes header and rows as a box table with tablewriter, each
// column's text wrapped to its width in widths (ColumnWidths), at word
// boundaries where it can.
func WriteBox(w io.Writer, header []string, rows [][]string, widths []int) error {
	perColumn := tw.NewMapper[int, int]()
	for c, cw := range widths {
		perColumn.Set(c, cw+2) // the cell's padding included
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNormal),
		tablewriter.WithHeaderAutoWrap(tw.WrapNormal),
		tablewriter.WithColumnWidths(perColumn))
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}
