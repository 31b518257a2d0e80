// Package batch is the machinery of `netmortem batch`: each bundle of a
// batch analyzed on its own within its time and size budgets (Bundle),
// several at once (Run), each giving one results.Line written to the
// sinks (a JSON Lines file, a database); directories of bundles split
// (SplitOperand); lines anonymized each with its bundle's names only
// (Anon).
package batch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/anon"
	"github.com/netmortem/netmortem/internal/buildinfo"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
	"github.com/netmortem/netmortem/results"
)

// Result is one line of `netmortem batch` output: the results.Line
// written to the sinks, with what the batch keeps of it besides.
type Result struct {
	results.Line
	// suppressed are the findings the configuration suppressed, for the
	// ignore entries that matched none in the whole batch.
	suppressed []analyzer.Suppressed
	// anon, with --anonymize, is the bundle's Anonymizer.
	anon *anon.Anonymizer
}

// Options are the rules a batch runs on each bundle, with the
// configuration (--config) that sets their parameters and suppresses
// findings, and the budgets of each bundle. The nil *Options runs every
// rule as documented, without budgets.
type Options struct {
	// Rules are the rules run, nil for rules.All(); Config their
	// configuration, nil for none.
	Rules  []*analyzer.Rule
	Config *analyzer.Config
	// Anon, when not nil, anonymizes each bundle's line (--anonymize).
	Anon *Anon
	// Timeout is the time budget of each bundle (0: none); MaxBytes its
	// size budget on disk or in storage, and of what its archives
	// decompress to (0: none); MaxMemory the budget of what its parsed
	// text keeps (0: parse's default).
	Timeout   time.Duration
	MaxBytes  int64
	MaxMemory int64
	// Objects reads the bundles given by URL; nil when none are.
	Objects *operand.Objects
	// Outside are the bundles a pattern matched that are links out of
	// the directory it starts from (operand.Expanded.Outside): refused.
	Outside map[string]bool
}

// MaxWarnings bounds the warnings kept per bundle in the output.
const MaxWarnings = 50

// StatusRetry is the status of a bundle its store failed to give
// (operand.ErrMayPass): no line is written, so that --resume reads it
// again. The other statuses are results.Status*.
const StatusRetry = "retry"

// ErrStdin says why batch refuses "-".
var ErrStdin = errors.New(`"-" (stdin) cannot be a batch bundle: batch records each bundle by its path, ` +
	"so that --resume and --shard find it again, and stdin has none and can be read only once; " +
	"save it to a file, or use netmortem analyze -")

// Bundle reads and analyzes one bundle within its time and size budgets.
// Memory follows the bundle's size (and a capture's live connections), so
// the size budget bounds it. A bundle that is neither a regular file nor a
// directory is refused before it is opened.
func Bundle(ctx context.Context, bundle string, o *Options) (res Result) {
	if o == nil {
		o = &Options{}
	}
	start := time.Now()
	res = Result{Line: results.Line{SchemaVersion: report.SchemaVersion, Tool: buildinfo.Get(), Bundle: results.BundleName(bundle), Status: results.StatusOK, Started: start.UTC(),
		Findings: []analyzer.Finding{}, Warnings: []report.Warning{}, RuleErrors: []analyzer.RuleError{}}}
	defer func() {
		if r := recover(); r != nil {
			res.Status, res.Error = results.StatusUnreadable, fmt.Sprint("internal error: ", r)
		}
		res.DurationMS = time.Since(start).Milliseconds()
	}()
	if o.Outside[bundle] {
		res.Status, res.Error = results.StatusRefused, operand.ErrOutside.Error()
		return res
	}
	if err := operand.Refusal(bundle); err != nil {
		res.Status, res.Error = results.StatusRefused, err.Error()
		return res
	}
	if err := o.Objects.ListingErr(bundle); err != nil {
		res.Status, res.Error = results.StatusUnreadable, err.Error()
		return res
	}
	if _, err := os.Lstat(bundle); err != nil && operand.IsPattern(bundle) {
		// Operands that exist are taken as they are, patterns expanded:
		// this one matched nothing.
		res.Status, res.Error = results.StatusUnreadable, operand.NoMatch(bundle).Error()
		return res
	}
	if o.MaxBytes > 0 {
		if size, where := o.Objects.BundleSize(ctx, bundle); size > o.MaxBytes {
			res.Status, res.Error = results.StatusOverBudget, fmt.Sprintf("%d bytes %s, over the %d-byte budget", size, where, o.MaxBytes)
			return res
		}
	}
	bctx, cancel := withBudget(ctx, o.Timeout)
	defer cancel()
	opts := &parse.Options{Summary: parse.Summary{Enabled: true}}
	if o.MaxBytes > 0 {
		opts.Limits.MaxTotalBytes = o.MaxBytes
	}
	opts.Limits.MaxMemory = o.MaxMemory
	in := operand.Open(bctx, operand.Expanded{Paths: []string{bundle}, Objects: o.Objects}, opts)
	if ended(bctx, &res, o.Timeout) {
		return res
	}
	if in.Err != nil {
		res.Status, res.Error = results.StatusUnreadable, in.Err.Error()
		if errors.Is(in.Err, operand.ErrMayPass) {
			res.Status = StatusRetry
		}
		return res
	}
	snap := in.Snap
	rs := o.Rules
	if rs == nil {
		rs = rules.All()
	}
	if o.Anon != nil {
		res.anon = o.Anon.forBundle(snap)
	}
	ar := analyzer.Run(bctx, snap, rs, o.Config)
	// Rules cut short by the budget or an interrupt are not a result.
	if ended(bctx, &res, o.Timeout) {
		return res
	}
	sup, expired := netmortem.Suppress(&ar, o.Config, nil, "", time.Now())
	res.SuppressedCount, res.suppressed = len(sup), sup
	res.SuppressedFingerprints = report.SuppressedFingerprints(sup)
	rep := report.New(snap, in.Warns, ar)
	rep.Warnings = append(rep.Warnings, expired...)
	res.Findings, res.RuleErrors = rep.Findings, rep.Errors
	res.NWarnings = len(rep.Warnings)
	res.Warnings = rep.Warnings[:min(len(rep.Warnings), MaxWarnings)]
	modified := o.Objects.ModTime(ctx, bundle)
	if fi, err := os.Stat(bundle); err == nil {
		modified = fi.ModTime()
	}
	res.BundleTime, res.BundleTimeSource = results.BundleTime(snap, modified, start)
	res.KubernetesVersion = results.KubernetesVersion(snap)
	res.InputList = snap.Inputs
	for _, in := range snap.Inputs {
		if in.Skipped != "" {
			res.Skipped++
		} else {
			res.Inputs++
		}
	}
	if len(snap.Cuts) > 0 {
		// Read and analyzed; what was cut off is not in the findings.
		var cuts []string
		for _, c := range snap.Cuts {
			cuts = append(cuts, c.String())
		}
		res.Status, res.Error = results.StatusIncomplete, strings.Join(cuts, "; ")
	}
	if bad := snap.UnreadableCaptures(); len(bad) > 0 {
		// The rest of the bundle is analyzed; its findings stay.
		res.Status, res.Error = results.StatusUnreadable, fmt.Sprintf("%s could not be read: %s", count(len(bad), "capture"), strings.Join(bad, ", "))
	}
	if res.Inputs == 0 {
		res.Status, res.Error = results.StatusUnreadable, "no input could be read"
	}
	if o.MaxBytes > 0 && slices.ContainsFunc(in.Warns, func(e *model.Error) bool { return errors.Is(e.Err, parse.ErrTotalBytes) }) {
		// What was read before the budget ran out is analyzed; its
		// findings stay.
		res.Status, res.Error = results.StatusOverBudget, fmt.Sprintf("decompresses to more than %d bytes, over the %d-byte budget", o.MaxBytes, o.MaxBytes)
	}
	if m := rep.Max(); m > 0 {
		res.MaxSev = m.String()
	}
	return res
}

// ended records in res why ctx, a bundle's context, ended, if it did: the
// bundle's budget ran out (timeout), or the batch was interrupted
// (canceled).
func ended(ctx context.Context, res *Result, budget time.Duration) bool {
	switch {
	case ctx.Err() == nil:
		return false
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Status, res.Error = results.StatusTimeout, fmt.Sprintf("over the %s budget", budget)
	default:
		res.Status, res.Error = results.StatusCanceled, "interrupted"
	}
	return true
}

// withBudget returns ctx with a deadline d from now; d = 0 means none.
func withBudget(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// count says n things: "1 capture", "3 captures".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
