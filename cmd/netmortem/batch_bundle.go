package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// The statuses of a bundle in the batch output (docs/scale.md).
const (
	statusOK         = "ok"
	statusUnreadable = "unreadable"
	statusRefused    = "refused"
	statusTimeout    = "timeout"
	statusOverBudget = "over_budget"
	// statusCanceled is a bundle the batch was interrupted in. It is not
	// written to the output (the bundle is not done: --resume analyzes
	// it), and a line with it, from an earlier version, is not taken as
	// done either.
	statusCanceled = "canceled"
)

// analyzeBundle reads and analyzes one bundle within its time and size
// budgets. Memory follows the bundle's size (and a capture's live
// connections), so the size budget bounds it. A bundle that is neither a
// regular file nor a directory is refused before it is opened.
func analyzeBundle(ctx context.Context, bundle string, budget time.Duration, maxBytes int64) (res batchResult) {
	start := time.Now()
	res = batchResult{Bundle: bundle, Status: statusOK, Started: start.UTC(), Findings: []analyzer.Finding{},
		Warnings: []report.Warning{}, RuleErrors: []analyzer.RuleError{}}
	defer func() {
		if r := recover(); r != nil {
			res.Status, res.Error = statusUnreadable, fmt.Sprint("internal error: ", r)
		}
		res.DurationMS = time.Since(start).Milliseconds()
	}()
	if err := refusal(bundle); err != nil {
		res.Status, res.Error = statusRefused, err.Error()
		return res
	}
	if maxBytes > 0 {
		if size := diskSize(bundle); size > maxBytes {
			res.Status, res.Error = statusOverBudget, fmt.Sprintf("%d bytes on disk, over the %d-byte budget", size, maxBytes)
			return res
		}
	}
	bctx, cancel := withBudget(ctx, budget)
	defer cancel()
	opts := &parse.Options{SummarizeCaptures: true}
	if maxBytes > 0 {
		opts.Limits.MaxTotalBytes = maxBytes
	}
	in := openPaths(bctx, []string{bundle}, opts)
	if ended(bctx, &res, budget) {
		return res
	}
	if in.err != nil {
		res.Status, res.Error = statusUnreadable, in.err.Error()
		return res
	}
	snap := in.snap
	ar := analyzer.Run(bctx, snap, analyzer.Default(), nil)
	// Rules cut short by the budget or an interrupt are not a result.
	if ended(bctx, &res, budget) {
		return res
	}
	rep := report.New(snap, in.warns, ar)
	res.Findings, res.RuleErrors = rep.Findings, rep.Errors
	res.NWarnings = len(rep.Warnings)
	res.Warnings = rep.Warnings[:min(len(rep.Warnings), maxBatchWarnings)]
	for _, in := range snap.Inputs {
		if in.Skipped != "" {
			res.Skipped++
		} else {
			res.Inputs++
		}
	}
	if bad := unreadableCaptures(snap); len(bad) > 0 {
		// The rest of the bundle is analyzed; its findings stay.
		res.Status, res.Error = statusUnreadable, fmt.Sprintf("%s could not be read: %s", count(len(bad), "capture"), strings.Join(bad, ", "))
	}
	if res.Inputs == 0 {
		res.Status, res.Error = statusUnreadable, "no input could be read"
	}
	if m := rep.Max(); m > 0 {
		res.MaxSev = m.String()
	}
	return res
}

// ended records in res why ctx, a bundle's context, ended, if it did: the
// bundle's budget ran out (timeout), or the batch was interrupted
// (canceled).
func ended(ctx context.Context, res *batchResult, budget time.Duration) bool {
	switch {
	case ctx.Err() == nil:
		return false
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Status, res.Error = statusTimeout, fmt.Sprintf("over the %s budget", budget)
	default:
		res.Status, res.Error = statusCanceled, "interrupted"
	}
	return true
}

// diskSize is the size of a file, or of every file under a directory.
func diskSize(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
