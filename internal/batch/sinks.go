package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/signal"
	"sync"
	"syscall"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/report"
	"github.com/netmortem/netmortem/results"
)

// sink is one of the sinks a batch writes its lines to.
type sink struct {
	sink results.Sink
	// name is how errors name it: "stdout", the --out file, "the
	// database" (whose errors name it).
	name string
	flag string // the flag that gave it: "--out" or "--db"
}

// Sinks are the sinks of a batch: --out (a JSON Lines file, or
// stdout), --db (a database), or both, each given every line. The first
// write error is kept: after it nothing more is written.
type Sinks struct {
	sinks []sink
	mu    sync.Mutex
	err   error
}

// OpenSinks opens the sinks of a batch: the database db when given,
// the JSON Lines file out when given or when db is not ("-" for stdout),
// and returns the bundles --resume skips: those every sink holds as done
// (a bundle one lacks is analyzed again, and written to every sink; a
// database replaces its line, a JSON Lines file holds both, the last one
// counting). A sink that cannot be opened is an error that names its
// flag; the sinks already opened are closed.
func OpenSinks(ctx context.Context, stdout io.Writer, out string, outGiven bool, db string, resume bool) (*Sinks, map[string]bool, error) {
	s := &Sinks{}
	var done map[string]bool
	add := func(b sink) error {
		s.sinks = append(s.sinks, b)
		if !resume {
			done = map[string]bool{}
			return nil
		}
		d, err := b.sink.Done(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", b.flag, err)
		}
		if done == nil {
			done = d
			return nil
		}
		for k := range done {
			if !d[k] {
				delete(done, k)
			}
		}
		return nil
	}
	if db != "" {
		d, err := openDB(ctx, db)
		if err != nil {
			return nil, nil, fmt.Errorf("--db: %w", err)
		}
		if err := add(sink{sink: d, name: "the database", flag: "--db"}); err != nil {
			s.Close()
			return nil, nil, err
		}
	}
	if db == "" || outGiven {
		var b sink
		if out == "-" {
			// A closed pipe is then a write error (exit 3), not a
			// silent SIGPIPE.
			signal.Ignore(syscall.SIGPIPE)
			b = sink{sink: results.NewJSONL(stdout), name: "stdout", flag: "--out"}
		} else {
			j, err := results.OpenJSONLSink(out, resume)
			if err != nil {
				s.Close()
				return nil, nil, fmt.Errorf("--out: %w", err)
			}
			b = sink{sink: j, name: out, flag: "--out"}
		}
		if err := add(b); err != nil {
			s.Close()
			return nil, nil, err
		}
	}
	return s, done, nil
}

// Write writes l to every sink, and returns the first write error of the
// batch, as the batch reports it.
func (s *Sinks) Write(l *results.Line) error {
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	if err != nil {
		return err
	}
	for _, b := range s.sinks {
		// A bundle analyzed is written whole even when the batch is
		// being interrupted.
		if err := b.sink.Write(context.Background(), l); err != nil {
			return s.fail(b, err)
		}
	}
	return nil
}

// fail keeps err, the first error of sink b, unless an error is kept
// already, and returns the error kept.
func (s *Sinks) fail(b sink, err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = fmt.Errorf("writing the results to %s: %w", b.name, err)
	}
	return s.err
}

// Close closes every sink, and returns the first write error of the batch
// or else the first error in closing (a file system may report a failed
// write only then). Closing again closes nothing.
func (s *Sinks) Close() error {
	for _, b := range s.sinks {
		if err := b.sink.Close(); err != nil {
			s.fail(b, err)
		}
	}
	s.sinks = nil
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// LineOf is the line of res the sinks write: res.Line, or, when JSON
// cannot hold it (a fact no encoder can write), a copy that says so as an
// internal error of its bundle, without findings, rather than no line.
func LineOf(res Result) *results.Line {
	l := res.Line
	if _, err := json.Marshal(&l); err != nil {
		l.Status, l.Error = results.StatusUnreadable, "internal error: the result cannot be written as JSON: "+err.Error()
		l.Findings, l.Warnings, l.RuleErrors, l.MaxSev = []analyzer.Finding{}, []report.Warning{}, []analyzer.RuleError{}, ""
	}
	return &l
}
