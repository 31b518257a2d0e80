package flows

import (
	"encoding/binary"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/model"
)

// rowCells formats the cells of attempts' table rows, as Table.row gives
// them, into one buffer used again for each row: the tables written an
// attempt at a time format each row twice (once to size the columns,
// once to write it), and Table.row's fifteen strings a row were most of
// their time and all of their garbage.
type rowCells struct {
	buf   []byte
	ends  [numColumns]int // where each cell ends in buf
	start microCache
	// frames writes the row's frame numbers.
	frames frameCache
	// node, file and plain cache whether the start of the last "where"
	// cell, its node and file, is written as it is (printable ASCII,
	// which escape.String leaves alone).
	node, file string
	plain      bool
}

// numColumns is how many cells a row has.
const numColumns = 15

// The table has numColumns columns.
var _ = [1]int{}[len(columns)-numColumns]

// format formats a's cells.
func (r *rowCells) format(a *model.Attempt) {
	row := a.Row()
	r.formatRow(&row)
}

// formatRow formats the cells of the row w (made without its attempt).
func (r *rowCells) formatRow(w *model.Row) {
	b := r.buf[:0]
	p := w.Pos
	if p.Frame > 0 && p.Line == 0 && p.Object == "" && p.Path == "" && r.plainPrefix(w.Node, p.File) {
		b = appendFramePos(b, w.Node, p.File, p.Frame, &r.frames)
	} else {
		b = append(b, where(w.Node, p)...)
	}
	r.ends[0] = len(b)
	b = r.start.appendStart(b, w.Start)
	r.ends[1] = len(b)
	b = appendAddrPort(b, w.Client)
	r.ends[2] = len(b)
	b = appendAddrPort(b, w.Server)
	r.ends[3] = len(b)
	b = append(b, w.Outcome...)
	r.ends[4] = len(b)
	b = append(b, w.ConnState...)
	r.ends[5] = len(b)
	b = append(b, w.History...)
	r.ends[6] = len(b)
	b = appendSegRefs(b, &w.SYN, &r.frames)
	r.ends[7] = len(b)
	b = appendSegRefs(b, &w.SYNACK, &r.frames)
	r.ends[8] = len(b)
	b = appendSegRefs(b, &w.RST, &r.frames)
	r.ends[9] = len(b)
	b = appendInt(b, int64(w.SYNRetransmissions))
	r.ends[10] = len(b)
	if w.SYNACKTimed {
		b = appendMillis(b, w.TimeToSYNACK)
	}
	r.ends[11] = len(b)
	b = appendInt(b, int64(w.Packets))
	r.ends[12] = len(b)
	b = appendInt(b, w.ClientBytes)
	r.ends[13] = len(b)
	b = appendInt(b, w.ServerBytes)
	r.ends[14] = len(b)
	r.buf = b
}

// cell returns the bytes of cell i of the row formatted last, valid until
// the next format.
func (r *rowCells) cell(i int) []byte {
	from := 0
	if i > 0 {
		from = r.ends[i-1]
	}
	return r.buf[from:r.ends[i]:r.ends[i]]
}

// plainPrefix reports whether the start of a "where" cell, the node (if
// any) and the file, is written as it is whatever frame follows it.
func (r *rowCells) plainPrefix(node, file string) bool {
	if node == r.node && file == r.file && r.buf != nil {
		return r.plain
	}
	r.node, r.file = node, file
	r.plain = escape.String(node) == node && escape.String(file) == file
	return r.plain
}

// ascii reports whether b is printable ASCII, whose width is its length.
// It reads b eight bytes at a time: a row's cells are sized, and written,
// after this test of each.
func ascii(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		// A byte below 0x20 borrows its high bit in x - 0x20 (with x's
		// own high bit clear); a byte above 0x7e sets it in x + 1, or
		// has it set already. Neither test reports a byte that is
		// not one, whatever the bytes around it.
		if (x-0x20*ones)&^x&highs != 0 || (x+ones|x)&highs != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// appendFramePos appends the first cell of an attempt on node at frame of
// file, node and file written as they are, the frame through frames.
func appendFramePos(b []byte, node, file string, frame int, frames *frameCache) []byte {
	if node != "" {
		b = append(append(b, node...), ' ')
	}
	return frames.append(append(append(b, file...), "#frame="...), int64(frame))
}
