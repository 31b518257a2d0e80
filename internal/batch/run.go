package batch

import (
	"context"
	"sync"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/results"
)

// Tally is what Run did.
type Tally struct {
	// Finished bundles got their line; Failed of them are not
	// results.StatusOK nor results.StatusIncomplete, Incomplete are the
	// latter.
	Finished, Failed, Incomplete int
	// Already are the bundles found done only once analyzed (--resume
	// with --anonymize: done under their anonymized name).
	Already int
	// Retry are the bundles their store did not give, for now.
	Retry int
	// Hits counts, by rule, the bundles it found something in.
	Hits map[string]int
	// Worst is the highest severity of a finding.
	Worst analyzer.Severity
	// Suppressed are the findings the configuration suppressed.
	Suppressed []analyzer.Suppressed
}

// Run analyzes the bundles todo, jobs at once, with o, and writes the line
// of each to sinks, unless it is done already (by its line's name), was
// interrupted, or its store did not give it (StatusRetry): those get no
// line, so that --resume reads them again. step is called, one call at a
// time, after each bundle, with how many are done so far. The first write
// error cancels ctx through cancel: nothing more can be written.
func Run(ctx context.Context, cancel context.CancelFunc, todo []string, jobs int, o *Options, sinks *Sinks, done map[string]bool,
	step func(n int, r Result)) Tally {
	var (
		mu sync.Mutex
		t  = Tally{Hits: map[string]int{}}
	)
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(jobs, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				res := Bundle(ctx, b, o)
				if o != nil && o.Anon != nil {
					res = o.Anon.result(res)
				}
				mu.Lock()
				if res.Status == results.StatusCanceled || res.Status == StatusRetry || done[res.Bundle] {
					// Not done: left out of the output, so that
					// --resume analyzes it. Or done before, under a
					// name with a name of the bundle's own replaced.
					switch res.Status {
					case StatusRetry:
						t.Retry++
					case results.StatusCanceled:
					default:
						t.Already++
					}
					step(t.Finished+t.Already, res)
					mu.Unlock()
					continue
				}
				mu.Unlock()
				// Written outside the lock: a database takes each
				// worker's lines at once.
				if err := sinks.Write(LineOf(res)); err != nil {
					cancel()
					continue
				}
				mu.Lock()
				t.Finished++
				t.Suppressed = append(t.Suppressed, res.suppressed...)
				switch res.Status {
				case results.StatusOK:
				case results.StatusIncomplete:
					t.Incomplete++
				default:
					t.Failed++
				}
				seen := map[string]bool{}
				for _, f := range res.Findings {
					t.Worst = max(t.Worst, f.Severity)
					if !seen[f.Rule] {
						seen[f.Rule] = true
						t.Hits[f.Rule]++
					}
				}
				step(t.Finished+t.Already, res)
				mu.Unlock()
			}
		}()
	}
dispatch:
	for _, b := range todo {
		select {
		case work <- b:
		case <-ctx.Done():
			break dispatch
		}
	}
	close(work)
	wg.Wait()
	return t
}
