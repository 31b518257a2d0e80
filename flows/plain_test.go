package flows

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPlainTableAsTablewriter holds plainTable to what newTable's
// tablewriter writes, on random tables of printable ASCII cells (spaces
// leading, trailing and inside, empty cells and headers, odd and even
// slack for the centred headers), and to leaving to tablewriter the tables
// with a cell it does not size as its length.
func TestPlainTableAsTablewriter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte(" abcXYZ019#:.+-|_ ")
	cell := func() string {
		b := make([]byte, r.IntN(9))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for round := range 300 {
		cols := 1 + r.IntN(6)
		header := make([]string, cols)
		for i := range header {
			header[i] = cell()
		}
		rows := make([][]string, 1+r.IntN(5))
		for i := range rows {
			rows[i] = make([]string, cols)
			for j := range rows[i] {
				rows[i][j] = cell()
			}
		}
		plain := round%10 != 0
		if !plain {
			rows[r.IntN(len(rows))][r.IntN(cols)] = []string{"é", "\t", "a\nb", "\x1b[1m", "日本"}[r.IntN(5)]
		}
		pt := &plainTable{header: header, rows: func(yield func([]string) bool) {
			for _, row := range rows {
				if !yield(slices.Clone(row)) {
					return
				}
			}
		}}
		widths, ok := pt.widths()
		if ok != plain {
			t.Fatalf("round %d: widths ok = %v, want %v for %q", round, ok, plain, rows)
		}
		if !ok {
			continue
		}
		var got, want bytes.Buffer
		if err := pt.write(&got, widths); err != nil {
			t.Fatal(err)
		}
		tw := newTable(&want)
		tw.Header(anyRow(header)...)
		for _, row := range rows {
			if err := tw.Append(row); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Render(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("round %d: header %q rows %q:\n%s\nwant\n%s", round, header, rows, got.String(), want.String())
		}
	}
}
