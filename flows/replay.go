package flows

import (
	"bufio"
	"bytes"
	"context"
	"runtime"

	"github.com/netmortem/netmortem/model"
)

// AttemptWriter takes attempts to write, one at a time: JSONWriter,
// TableWriter, FittedWriter and CSVWriter are AttemptWriters.
type AttemptWriter interface {
	Write(a *model.Attempt)
}

// Replay writes the attempts s keeps through w, in the order Add took
// them, until ctx ends; it returns what Each returns. Through JSONWriter,
// TableWriter and FittedWriter (but for a table of one block per row) the
// attempts are formatted a batch at a time on GOMAXPROCS goroutines, and
// the batches written in order: the same bytes as Each(ctx, w.Write),
// where formatting on one goroutine bounds the listing of a large capture.
// Other writers take the attempts as Each gives them. Replay stops
// between batches once ctx ends, and runs once, as Each: s takes no
// attempt after it.
func (s *Spool) Replay(ctx context.Context, w AttemptWriter) error {
	pw, ok := w.(partsWriter)
	if !ok || !pw.inParts() {
		return s.Each(ctx, w.Write)
	}
	if err := s.Flush(); err != nil {
		return err
	}
	full, free, stop, err := s.start()
	if err != nil {
		return err
	}
	stopped, cut := inParts(ctx, pw, full, free, stop, func(p writerPart, b *spoolBatch) {
		for i := range b.a {
			p.Write(&b.a[i])
		}
	}, (*spoolBatch).reset)
	if stopped {
		return cut // a writer that failed says why when closed
	}
	return s.readErr
}

// inParts formats the batches a reading goroutine sends on full, in
// order, on up to maxReplayWorkers goroutines, each through a part of pw
// (format), and puts what they formatted through pw in order; each batch
// is then reset and handed back on free, for the reading goroutine's next
// one, when free has room. Once ctx ends, or pw takes no more, it closes
// stop, drains full (the reading goroutine's last batch) and reports that
// it stopped, with ctx's error, if any. Otherwise it returns once full is
// closed and every batch is put.
func inParts[B any](ctx context.Context, pw partsWriter, full <-chan B, free chan<- B, stop chan struct{},
	format func(p writerPart, b B), reset func(b B)) (stopped bool, cut error) {
	// The batches are read on one goroutine: past a few, more
	// formatting goroutines would only hold more batches.
	workers := min(max(runtime.GOMAXPROCS(0), 1), maxReplayWorkers)
	// The batches being formatted or waiting to be written, in order, at
	// most window of them: what the formatting goroutines are handed is
	// buffered, so that handing never waits.
	window := 2 * workers
	work := make(chan *replayBatch[B], window)
	done := make(chan struct{})
	for range workers {
		bw := bufio.NewWriterSize(nil, 64<<10)
		part := pw.part(bw)
		go func() {
			defer func() { done <- struct{}{} }()
			for rb := range work {
				rb.out.Reset()
				bw.Reset(&rb.out)
				format(part, rb.b)
				bw.Flush() // to a bytes.Buffer: no error
				rb.n, rb.err = part.took()
				close(rb.ready)
			}
		}()
	}
	var queue, spare []*replayBatch[B]
	over := false // the writer takes no more: nothing more is formatted
	// put writes the first batch queued once it is formatted.
	put := func() {
		rb := queue[0]
		queue = queue[1:]
		<-rb.ready
		if !over {
			over = pw.put(rb.out.Bytes(), rb.n, rb.err)
		}
		reset(rb.b)
		select {
		case free <- rb.b:
		default:
		}
		spare = append(spare, rb)
	}
	for b := range full {
		if ctx.Err() != nil || over {
			close(stop)
			for range full { // the reading goroutine's last batch
			}
			cut = ctx.Err()
			break
		}
		var rb *replayBatch[B]
		if n := len(spare); n > 0 {
			rb, spare = spare[n-1], spare[:n-1]
		} else {
			rb = new(replayBatch[B])
		}
		rb.b, rb.ready = b, make(chan struct{})
		work <- rb
		queue = append(queue, rb)
		if len(queue) == window {
			put()
		}
	}
	close(work)
	stopped = cut != nil || over
	for !stopped && len(queue) > 0 {
		put()
	}
	for range workers {
		<-done
	}
	return stopped, cut
}

// maxReplayWorkers bounds the goroutines inParts formats on.
const maxReplayWorkers = 8

// replayBatch is a batch on its way through inParts, and what it was
// formatted as.
type replayBatch[B any] struct {
	b     B
	out   bytes.Buffer
	n     int   // the attempts written
	err   error // the first error formatting them
	ready chan struct{}
}

// partsWriter is a writer whose attempts can be formatted apart, on
// goroutines of their own, and written in order (Spool.Replay).
type partsWriter interface {
	// inParts reports whether the writer can be written in parts.
	inParts() bool
	// part returns a writer formatting attempts into bw as the writer
	// would after attempts written already, with scratch of its own.
	part(bw *bufio.Writer) writerPart
	// put writes, in order, what a part formatted: n attempts, and the
	// error that stopped it, if any. It reports whether the writer takes
	// no more: it failed, formatting or writing out, or has nothing to
	// write.
	put(b []byte, n int, err error) bool
}

// writerPart formats a batch of attempts for a partsWriter.
type writerPart interface {
	AttemptWriter
	// took returns how many attempts were written since it was last
	// called, and the first error formatting them.
	took() (int, error)
}

func (j *JSONWriter) inParts() bool { return true }

// part returns a JSONWriter writing into bw as if an attempt had been
// written before: each attempt after a comma, which put makes the
// array's bracket for the first one.
func (j *JSONWriter) part(bw *bufio.Writer) writerPart {
	return &jsonPart{JSONWriter{w: bw, filter: j.filter, n: 1}}
}

func (j *JSONWriter) put(b []byte, n int, err error) bool {
	if j.err != nil {
		return true
	}
	if j.n == 0 && len(b) > 0 {
		b[0] = '[' // "[\n    " rather than ",\n    ", as long
	}
	if _, werr := j.w.Write(b); werr != nil {
		j.err = werr
		return true
	}
	j.n += n
	j.err = err
	return err != nil
}

type jsonPart struct{ JSONWriter }

func (p *jsonPart) took() (int, error) {
	n := p.n - 1
	p.n = 1
	return n, p.err
}

func (tw *TableWriter) inParts() bool { return true }

func (tw *TableWriter) part(bw *bufio.Writer) writerPart {
	return &tablePart{TableWriter{w: bw, filter: tw.filter, widths: tw.widths, done: tw.done, err: tw.err}}
}

func (tw *TableWriter) put(b []byte, _ int, _ error) bool {
	if tw.done || tw.err != nil {
		return true
	}
	_, err := tw.w.Write(b) // the bufio.Writer's error, for Close too
	return err != nil
}

type tablePart struct{ TableWriter }

func (p *tablePart) took() (int, error) { return 0, nil }

// inParts reports whether the table is written in lines: blocks are
// written apart by a line between each, which the first has not.
func (fw *FittedWriter) inParts() bool { return fw.rows == nil || !fw.rows.layout.Blocks() }

func (fw *FittedWriter) part(bw *bufio.Writer) writerPart {
	p := &fittedPart{FittedWriter{w: bw, filter: fw.filter}}
	if fw.rows != nil {
		p.rows = fw.rows.part(bw)
	}
	return p
}

func (fw *FittedWriter) put(b []byte, _ int, _ error) bool {
	_, err := fw.w.Write(b) // the bufio.Writer's error, for Close too
	return err != nil
}

type fittedPart struct{ FittedWriter }

func (p *fittedPart) took() (int, error) { return 0, nil }
