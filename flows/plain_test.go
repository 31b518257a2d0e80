package flows

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/escape"
)

// TestPlainTableAsTablewriter holds plainTable to what newTable's
// tablewriter writes, on random tables of printable cells (spaces leading,
// trailing and inside, empty cells and headers, odd and even slack for
// the centred headers; letters with accents, wide CJK and emoji, combining
// marks, flags and box-drawing characters, as escape.String leaves them),
// and to leaving to tablewriter the tables with a rune it trims, breaks or
// sizes its own way (control characters, other spaces, joiners, invalid
// bytes).
func TestPlainTableAsTablewriter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{" ", "a", "b", "c", "X", "Y", "Z", "0", "1", "9", "#", ":", ".", "+", "-", "|", "_", " ",
		"é", "ü", "日本", "ｱ", "한", "e\u0301", "😀", "🇫🇷", "─", "│", "∑", "Ⅻ", "א"}
	cell := func() string {
		var b strings.Builder
		for range r.IntN(9) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return escape.String(b.String())
	}
	for round := range 1000 {
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
			bad := []string{"\t", "a\nb", "\x1b[1m", "\u00a0x", "x\u3000", "\u2028", "a\u200db", "\xff"}
			rows[r.IntN(len(rows))][r.IntN(cols)] = bad[r.IntN(len(bad))]
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
