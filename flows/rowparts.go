package flows

import "context"

// Kept rows written in parts (TableWidths.WriteRows through a
// TableWriter, or a FittedWriter writing lines): the rows are read back
// on one goroutine, a batch at a time, and laid out on others (inParts),
// where laying out each row on one goroutine took as long as the whole
// of a large capture's tracking after its last packet.

// rowBatch is a batch of kept rows, read back, on their way through
// inParts.
type rowBatch struct {
	buf  []byte    // the rows' bytes, one after the other
	rows []rowSpan // where each row is in buf
}

// rowSpan is where a row of a rowBatch is in its buf, and where its cells
// end, counted from its start.
type rowSpan struct {
	from, to int
	ends     [numColumns]int
}

// rowBatchLen is how many rows a rowBatch holds.
const rowBatchLen = 256

func (b *rowBatch) reset() { b.buf, b.rows = b.buf[:0], b.rows[:0] }

// rowsPart is a writerPart that writes kept rows.
type rowsPart interface {
	writeRow(r *rowCells)
}

func (p *fittedPart) writeRow(r *rowCells) {
	if p.rows != nil {
		p.rows.writeRow(r)
	}
}

// inParts writes the rows k kept through pw, in order, formatted on
// goroutines of their own, until ctx ends or pw takes no more. It
// returns the first error reading the rows back met, or ctx's error when
// it ended first.
func (k *rowKeeper) inParts(ctx context.Context, pw partsWriter) error {
	k.read = true
	full, free, stop := make(chan *rowBatch, 2), make(chan *rowBatch, 4), make(chan struct{})
	var readErr error
	go func() {
		defer close(full)
		readErr = k.decode(full, free, stop)
	}()
	stopped, cut := inParts(ctx, pw, full, free, stop, func(p writerPart, b *rowBatch) {
		rp := p.(rowsPart)
		var r rowCells
		for i := range b.rows {
			sp := &b.rows[i]
			r.buf, r.ends = b.buf[sp.from:sp.to:sp.to], sp.ends
			rp.writeRow(&r)
		}
	}, (*rowBatch).reset)
	if stopped {
		return cut // a writer that failed says why when closed
	}
	return readErr
}

// decode reads the rows k kept (rows) into batches taken from free (or
// made) and sends them on full, in order, until stop is closed. A row
// that cannot be read ends the reading, once the rows before it are sent.
func (k *rowKeeper) decode(full, free chan *rowBatch, stop chan struct{}) error {
	var b *rowBatch
	stopped := false
	send := func() bool {
		select {
		case full <- b:
			b = nil
		case <-stop:
			stopped = true
		}
		return !stopped
	}
	err := k.rows(func(_ int, r *rowCells) bool {
		if b == nil {
			select {
			case b = <-free:
			default:
				b = &rowBatch{rows: make([]rowSpan, 0, rowBatchLen)}
			}
		}
		from := len(b.buf)
		b.buf = append(b.buf, r.buf...)
		b.rows = append(b.rows, rowSpan{from: from, to: len(b.buf), ends: r.ends})
		return len(b.rows) < rowBatchLen || send()
	})
	if !stopped && b != nil && len(b.rows) > 0 {
		send()
	}
	return err
}
