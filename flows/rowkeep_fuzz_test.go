package flows

import (
	"bufio"
	"bytes"
	"testing"
	"time"

	"github.com/netmortem/netmortem/model"
)

// Any bytes read as kept rows give rows whose cells are within their
// bytes, or an error: never a panic, nor a row read past the file. Rows
// read, kept again and read again are the same.
func FuzzKeptRows(f *testing.F) {
	var seed bytes.Buffer
	k := rowKeeper{w: bufio.NewWriter(&seed)}
	var r rowCells
	t0 := time.Unix(1_764_460_800, 5).UTC()
	for i, a := range []model.Attempt{{}, {Pos: model.Pos{File: "a.pcap", Frame: 9}, Outcome: "refused", History: "Sr", Start: t0},
		{Pos: model.Pos{File: "a.pcap", Frame: 10}, Outcome: "established", Start: t0.Add(time.Second), Packets: 12}} {
		r.format(&a)
		k.add(&r)
		k.w.Flush()
		f.Add(bytes.Clone(seed.Bytes()), uint8(i+1))
	}
	f.Fuzz(func(t *testing.T, file []byte, n uint8) {
		var rows []rowCells
		err := read(t, file, int(n), func(r *rowCells) {
			if r.ends[numColumns-1] != len(r.buf) {
				t.Fatalf("row %d: cells end at %d, its bytes at %d", len(rows)+1, r.ends[numColumns-1], len(r.buf))
			}
			rows = append(rows, rowCells{buf: bytes.Clone(r.buf), ends: r.ends})
		})
		if err != nil {
			return
		}
		if len(rows) != int(n) {
			t.Fatalf("%d rows of %d, no error", len(rows), n)
		}
		var again bytes.Buffer
		k := rowKeeper{w: bufio.NewWriter(&again)}
		for i := range rows {
			k.add(&rows[i])
		}
		k.w.Flush()
		i := 0
		err = read(t, again.Bytes(), len(rows), func(r *rowCells) {
			if !bytes.Equal(r.buf, rows[i].buf) || r.ends != rows[i].ends {
				t.Fatalf("row %d kept again: %q %v, read first %q %v", i+1, r.buf, r.ends, rows[i].buf, rows[i].ends)
			}
			i++
		})
		if err != nil || i != len(rows) {
			t.Fatalf("rows kept again: %d read, %v", i, err)
		}
	})
}

// read reads n rows kept in file through a rowKeeper.
func read(t *testing.T, file []byte, n int, fn func(r *rowCells)) error {
	k := rowKeeper{f: &seekable{Reader: bytes.NewReader(file)}, n: n, size: int64(len(file))}
	return k.each(t.Context(), fn, func() bool { return false })
}

// seekable is a bytes.Reader as the file a rowKeeper reads.
type seekable struct {
	*bytes.Reader
}

func (s *seekable) Write([]byte) (int, error) { panic("written") }
