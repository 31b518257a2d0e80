package flows_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// Rows sized by RowSizers, in batches handed round them and added in
// order (AddSized), give the sizes and the kept rows the TableWidths
// given every row itself gives: the same table at every width, the same
// verdicts on whether it is plain and fits. The attempts are of one
// capture, of two, of several captures and nodes, with a cell tablewriter sizes
// its own way, and with a position that is a line.
func TestSizedRowsAsAdded(t *testing.T) {
	variants := map[string]func(a []model.Attempt){
		"one capture": func([]model.Attempt) {},
		"captures and nodes": func(a []model.Attempt) {
			for i := range a {
				switch i % 5 {
				case 1:
					a[i].Pos.File = "d.pcap"
				case 2:
					a[i].Node, a[i].Pos.File = "node-a", "e.pcap"
				case 3:
					a[i].Pos.File = "sub/ü.pcap"
				}
			}
		},
		"two captures": func(a []model.Attempt) {
			// Batches of 256 over three sizers: the third sizes
			// only d.pcap's.
			for i := 512; i < 768; i++ {
				a[i].Pos.File = "d.pcap"
			}
		},
		"not plain": func(a []model.Attempt) { a[len(a)/2].History = "S\u200bF" },
		"a line":    func(a []model.Attempt) { a[len(a)-3].Pos = model.Pos{File: "c.txt", Line: 12} },
	}
	for name, vary := range variants {
		all := replayAttempts(1200)
		vary(all)
		rows := make([]model.Row, len(all))
		for i := range all {
			rows[i] = all[i].Row()
		}
		rows[7] = model.Row{Attempt: &all[7]} // a row handed on as its attempt
		added := func() *flows.TableWidths {
			m := flows.NewTableWidths()
			m.Keep(spoolFile(t))
			for i := range rows {
				m.AddRow(&rows[i])
			}
			return m
		}
		sized := func(batch, n int) *flows.TableWidths {
			m := flows.NewTableWidths()
			m.Keep(spoolFile(t))
			sizers := make([]*flows.RowSizer, n)
			for i := range sizers {
				sizers[i] = m.Sizer()
			}
			for from, k := 0, 0; from < len(rows); from, k = from+batch, k+1 {
				s := sizers[k%n]
				for i := from; i < min(from+batch, len(rows)); i++ {
					s.AddRow(&rows[i])
				}
				m.AddSized(s)
			}
			return m
		}
		want := added()
		for _, batch := range []int{1, 7, 256} {
			for _, n := range []int{1, 3} {
				where := fmt.Sprintf("%s, batches of %d over %d sizers", name, batch, n)
				if got := sized(batch, n); got.Plain() != want.Plain() || got.Fits() != want.Fits() {
					t.Fatalf("%s: plain %v, fits %v; want %v, %v", where, got.Plain(), got.Fits(), want.Plain(), want.Fits())
				}
				for _, width := range []int{0, 12, 80} {
					if width == 0 && !want.Plain() || width > 0 && !want.Fits() {
						continue
					}
					w, g := keptTable(t, added(), width), keptTable(t, sized(batch, n), width)
					if g != w {
						t.Errorf("%s, width %d:\n%s", where, width, testutil.DiffLines(w, g))
					}
				}
			}
		}
	}
}

// keptTable returns the table m's kept rows make at width (0: as
// tablewriter writes it).
func keptTable(t *testing.T, m *flows.TableWidths, width int) string {
	t.Helper()
	var out bytes.Buffer
	var w closingWriter = flows.NewTableWriter(&out, &flows.Table{}, flows.Filter{}, m)
	if width > 0 {
		w = flows.NewFittedWriter(&out, &flows.Table{}, flows.Filter{}, m, width)
	}
	if err := m.WriteRows(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return out.String()
}

// Rows sized by a RowSizer made before Keep are not formatted for
// keeping: the TableWidths says it has not kept every row, rather than
// writing a table without them.
func TestSizerBeforeKeep(t *testing.T) {
	all := replayAttempts(10)
	m := flows.NewTableWidths()
	s := m.Sizer()
	m.Keep(spoolFile(t))
	for i := range all {
		r := all[i].Row()
		s.AddRow(&r)
	}
	m.AddSized(s)
	if err := m.Kept(); err == nil || !strings.Contains(err.Error(), "made before Keep") {
		t.Errorf("Kept: %v", err)
	}
	if err := m.WriteRows(context.Background(), flows.NewTableWriter(&bytes.Buffer{}, &flows.Table{}, flows.Filter{}, m)); err == nil {
		t.Error("rows written")
	}
}
