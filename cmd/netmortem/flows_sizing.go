package main

import (
	"runtime"
	"sync"

	"github.com/netmortem/netmortem/flows"
)

// maxSizers bounds the goroutines that size the table's rows.
const maxSizers = 4

// sizeRows returns a writer that sizes the table's columns for the rows
// handed on that pass filter, and keeps them formatted, through m: on
// up to one goroutine a core, each with a RowSizer of its own, whose
// sizes and rows are added to m in the order of the batches. After a
// large capture's last packet its tracker hands on every attempt still
// open, hundreds of thousands, as fast as two cores work them out:
// sized on one goroutine, those rows took longer than the whole of the
// tracker's end.
func sizeRows(m *flows.TableWidths, filter flows.Filter) splitWriter {
	sizers := make([]*flows.RowSizer, max(1, min(runtime.GOMAXPROCS(0), maxSizers)))
	for i := range sizers {
		sizers[i] = m.Sizer()
	}
	var mu sync.Mutex
	turn := sync.NewCond(&mu)
	next := 0 // the place of the batch whose rows m adds next
	return splitWriter{ways: len(sizers), write: func(way int, b *attemptBatch) {
		s := sizers[way]
		for i := range b.r {
			if filter.MatchRow(&b.r[i]) {
				s.AddRow(&b.r[i])
			}
		}
		mu.Lock()
		for next != b.seq {
			turn.Wait()
		}
		m.AddSized(s)
		next++
		turn.Broadcast()
		mu.Unlock()
	}}
}
