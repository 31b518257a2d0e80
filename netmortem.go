// Package netmortem analyzes the evidence of a Kubernetes network incident
// (packet captures, iptables, nftables and IPVS state, socket tables,
// sysctls, kubectl snapshots, logs, whole support bundles) offline, in one
// call: Analyze does what `netmortem analyze` does and returns the report
// every format of report.Write renders as the CLI does.
//
//	rep, err := netmortem.Analyze(ctx, netmortem.Paths("support-bundle.tar.gz"), nil)
//	if err != nil { ... } // an option that cannot be used: nothing was read
//	report.Write(os.Stdout, "markdown", rep)
//
// Analyze reads the operands (files, directories, archives, globs with
// '**', bundle URLs, readers) as one bundle, runs the rules with the
// configuration found beside the bundle (ConfigFile) or given, leaves out
// the findings its ignore entries and a baseline select, adds the evidence
// that would decide what is not proven, says what the analysis could not
// cover (Report.Incomplete), builds the HTML report's timelines, and
// anonymizes the result when asked. Prepare and Plan.Run are the same in
// two steps, for callers (the CLI) that say what they use before reading
// and want what was read besides the report.
package netmortem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
	"github.com/netmortem/netmortem/timeline"
)

// An Operand is one thing Analyze reads: a path, or a reader.
type Operand struct {
	// Path is a file, a directory, an archive (.tar, .tar.gz, .zip ...),
	// a glob ('**' matches any depth, "{a,b}" either name), or a bundle
	// URL (s3://BUCKET/KEY, gs://, azblob://CONTAINER/KEY, file:///PATH;
	// a key ending in / is every object under it, a key with glob
	// characters a pattern). A Path that names an existing file is that
	// file, glob characters or not. "-" reads Options.Stdin.
	Path string
	// Reader, when not nil, is read as one file named Path (a capture, a
	// command output, kubectl JSON, a compressed file, an archive), as a
	// file of that name on disk is read; Path names it in inputs,
	// positions and findings. "-" is read as stdin is, named "<stdin>".
	Reader io.Reader
}

// Paths returns the operands of paths.
func Paths(paths ...string) []Operand {
	out := make([]Operand, len(paths))
	for i, p := range paths {
		out[i] = Operand{Path: p}
	}
	return out
}

// Reader returns the operand that reads r as one file named name.
func Reader(name string, r io.Reader) Operand { return Operand{Path: name, Reader: r} }

// Options tune Analyze. The zero value (or nil) runs every rule as
// `netmortem analyze` does with no flag: the configuration found beside
// the bundle, no time budget, captures summarized, timelines built.
type Options struct {
	// Rules are the rules run; nil means rules.All(). Enable and Disable
	// select among them by name: only those of Enable (even when the
	// configuration disables them), then none of Disable.
	Rules           []*analyzer.Rule
	Enable, Disable []string
	// Config is the configuration file (docs/config.md): rule settings
	// and the ignore entries whose findings are left out. "" means the
	// ConfigFile found beside the first operand (FindConfig), unless
	// NoConfigDiscovery is set.
	Config            string
	NoConfigDiscovery bool
	// Baseline is an earlier report (analyze -o json, or batch lines):
	// the findings it has, by fingerprint, are left out as suppressed.
	Baseline string
	// ShowSuppressed lists the suppressed findings, with why, in
	// Report.Suppressed; they are always counted.
	ShowSuppressed bool
	// Anonymize replaces addresses and names in the report by tokens
	// derived from AnonymizeKey (a random key when empty: tokens then
	// hold within the run only). A non-empty AnonymizeKey implies it.
	Anonymize    bool
	AnonymizeKey string
	// Timeout is the time budget for reading and analyzing: past it,
	// reading stops, the rules run on what was read (with at least a
	// minute, or Timeout if shorter), and Report.Incomplete says so. 0
	// means none.
	Timeout time.Duration
	// MaxBundleMemory bounds, in bytes, what the inputs' parsed text
	// keeps: files past it are read no further, with a warning (0: the
	// default, 256 MiB; see parse.Limits.MaxMemory).
	MaxBundleMemory int64
	// Node attributes the inputs to this node when the bundle layout does
	// not say.
	Node string
	// KeepAttempts keeps every connection attempt of the captures instead
	// of folding the established ones, and the failed ones beyond a
	// sample per server, into counters (parse.Summary): memory then grows
	// with the captures. The findings are the same; a few rules
	// (connection-skew, service-rule-shadowed) then cite the established
	// attempts' SYN frames where a summary cites their count.
	KeepAttempts bool
	// NoTimelines leaves out the HTML report's timelines and evidence
	// quotes (Report.Timelines, Report.Quotes), which the other formats
	// do not show: building them reads the evidence again.
	NoTimelines bool
	// Stdin is what the operand "-" reads; nil means os.Stdin.
	Stdin io.Reader
}

// Analyze reads the operands as one bundle and analyzes them as
// `netmortem analyze` does (see the package documentation), returning the
// report that report.Write renders in every format. The error is an
// option that cannot be used (a configuration or baseline that cannot be
// read, an unknown rule, a malformed glob, a bundle URL whose listing
// failed): nothing was read. What could not be read, a time budget that
// ran out and an interrupt (ctx ending) are not errors: the report covers
// what was read, and Report.Incomplete says why it is not all.
func Analyze(ctx context.Context, operands []Operand, opts *Options) (*report.Report, error) {
	p, err := Prepare(ctx, operands, opts)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.Run(ctx).Report, nil
}

// A Plan is an analysis ready to run: its options checked, its
// configuration and baseline read, its operands expanded.
type Plan struct {
	// ConfigPath is the configuration used, "" for none; ConfigFound
	// says it was found beside the bundle rather than given.
	ConfigPath  string
	ConfigFound bool
	// Rules are the rules selected, Config their configuration.
	Rules  []*analyzer.Rule
	Config *analyzer.Config
	// Paths are the operands, globs and bundle URLs expanded, each once.
	Paths []string
	// BeforeRead, when set, is called by Run before reading, under the
	// time budget's context (the CLI says there which directories hold
	// several bundles, read as one).
	BeforeRead func(ctx context.Context)

	opts     Options
	operands operand.Expanded
	baseline map[string]bool
}

// Prepare checks opts, reads the configuration and the baseline, and
// expands the operands (listing bundle URLs under ctx); errors are as
// Analyze's. The Plan must be closed.
func Prepare(ctx context.Context, operands []Operand, opts *Options) (*Plan, error) {
	p := &Plan{}
	if opts != nil {
		p.opts = *opts
	}
	o := &p.opts
	if o.Timeout < 0 {
		return nil, errors.New("the time budget must not be negative")
	}
	if o.MaxBundleMemory < 0 {
		return nil, errors.New("the memory budget must not be negative")
	}
	var args []string
	readers := map[string]io.Reader{}
	for _, op := range operands {
		args = append(args, op.Path)
		switch {
		case op.Reader == nil:
		case op.Path == operand.Stdin:
			o.Stdin = op.Reader
		default:
			readers[op.Path] = op.Reader
		}
	}
	p.ConfigPath = o.Config
	if p.ConfigPath == "" && !o.NoConfigDiscovery {
		p.ConfigPath, p.ConfigFound = FindConfig(args)
	}
	var err error
	if p.Rules, p.Config, err = SelectRules(o.Rules, p.ConfigPath, o.Enable, o.Disable); err != nil {
		return nil, err
	}
	if p.operands, err = operand.Expand(ctx, args, operand.NewObjects(0), readers); err != nil {
		p.operands.Close()
		return nil, err
	}
	p.Paths = p.operands.Paths
	if o.Baseline != "" {
		if p.baseline, err = ReadBaseline(o.Baseline); err != nil {
			p.Close()
			return nil, &OptionError{Option: "baseline", Err: err}
		}
	}
	return p, nil
}

// Close closes the buckets the bundle URLs opened.
func (p *Plan) Close() { p.operands.Close() }

// Analysis is what Plan.Run did: the report, and what the CLI says
// besides it.
type Analysis struct {
	// Report is the report (anonymized when asked).
	Report *report.Report
	// Snapshot is the evidence read (not anonymized).
	Snapshot *model.Snapshot
	// Suppressed are the findings the configuration's ignore entries and
	// the baseline left out, listed or not in Report.
	Suppressed []analyzer.Suppressed
	// Cut says reading stopped early: ctx ended, or the time budget ran
	// out while reading.
	Cut bool
	// OnlyCutInputs says the report is incomplete only because inputs
	// were cut short (Snapshot.Cuts): everything given was read, to
	// where it ends. A finding at or above --fail-on then decides analyze's
	// exit code; an input not read at all, the time budget or an
	// interrupt make it 3 whatever the findings.
	OnlyCutInputs bool

	anonymizer *Anonymizer
}

// Mappings lists what anonymization replaced, nil when not asked for.
func (a *Analysis) Mappings() []Mapping {
	if a.anonymizer == nil {
		return nil
	}
	return a.anonymizer.Mappings()
}

// maxRuleGrace is the most the rules are given, past the budget, to run on
// what was read when reading used it up.
const maxRuleGrace = time.Minute

// Run reads and analyzes the plan's operands under ctx and its time
// budget. It runs once: the readers among the operands are read by then.
func (p *Plan) Run(ctx context.Context) *Analysis {
	o := &p.opts
	start := time.Now()
	readCtx, cancel := withBudget(ctx, o.Timeout)
	defer cancel()
	if p.BeforeRead != nil {
		p.BeforeRead(readCtx)
	}
	popts := &parse.Options{Node: o.Node, KeepAttempts: o.KeepAttempts,
		Limits: parse.Limits{MaxMemory: o.MaxBundleMemory}, Stdin: o.Stdin}
	in := operand.Open(readCtx, p.operands, popts)
	snap := in.Snap
	// Reading was cut when the context's end stopped it; a budget that
	// runs out once everything was read cut nothing.
	readCut := readCtx.Err() != nil && in.Stopped()
	// The rules run on what was read, even when reading ran out of time:
	// they get what is left of the budget, and at least maxRuleGrace.
	ruleCtx, cancelRules := ruleContext(ctx, readCtx, o.Timeout)
	defer cancelRules()
	res := analyzer.Run(ruleCtx, snap, p.Rules, p.Config)
	suppressed, expired := Suppress(&res, p.Config, p.baseline, o.Baseline, time.Now())
	rep := report.New(snap, in.Warns, res)
	rep.Warnings = append(rep.Warnings, expired...)
	rep.SetSuppressed(suppressed, o.ShowSuppressed)
	rep.NextEvidence = report.NextEvidenceFor(snap, enabledRules(p.Rules, p.Config), res)
	var onlyCuts bool
	cut, of := rulesCut(res)
	rep.Incomplete, onlyCuts = incomplete(ctx, ruleCtx, readCut, o.Timeout, start, in, cut, of)
	if !o.NoTimelines {
		rep.Timelines = timeline.Build(ruleCtx, snap, rep.Rules(), rep.Findings)
		rep.Quotes = timeline.Quotes(ruleCtx, rep.Findings, rep.Timelines)
	}
	a := &Analysis{Snapshot: snap, Suppressed: suppressed, Cut: ctx.Err() != nil || readCut,
		OnlyCutInputs: len(rep.Incomplete) > 0 && onlyCuts}
	if o.Anonymize || o.AnonymizeKey != "" {
		a.anonymizer = NewAnonymizer(o.AnonymizeKey, snap)
	}
	a.Report = anonymizeReport(a.anonymizer, rep)
	return a
}

// withBudget returns ctx with a deadline d from now; d = 0 means none.
func withBudget(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// ruleContext is the context the rules run under after reading under
// readCtx: what is left of the budget, but at least min(budget,
// maxRuleGrace), so that what was read is analyzed even when reading used
// up the budget. ctx is the run's own context (interrupts).
func ruleContext(ctx, readCtx context.Context, budget time.Duration) (context.Context, context.CancelFunc) {
	deadline, ok := readCtx.Deadline()
	grace := min(budget, maxRuleGrace)
	if !ok || time.Until(deadline) >= grace {
		return context.WithCancel(readCtx)
	}
	return context.WithTimeout(ctx, grace)
}

// incomplete lists why an analysis did not cover all it was given (the
// reasons analyze exits 3 for, but failed rules, which the report lists
// apart): an interrupt, the time budget, each path that could not be read,
// the captures whose header could not be read, each input or archive cut
// short (model.Cut), no input read at all. ctx
// is the run's context, ruleCtx the rules', readCut whether reading ran
// out of time; in is what was read, and cut and of how many of the rules
// run the context stopped. onlyCuts says every reason is an input cut
// short.
func incomplete(ctx, ruleCtx context.Context, readCut bool, budget time.Duration, start time.Time, in operand.Opened, cut, of int) (out []string, onlyCuts bool) {
	switch {
	case ctx.Err() != nil && cut == 1 && of == 1:
		out = append(out, "interrupted: the one rule run did not run to the end (it is listed as failed): what was read was not analyzed")
	case ctx.Err() != nil && cut > 0 && cut == of:
		out = append(out, fmt.Sprintf("interrupted: none of the %d rules ran to the end (each is listed as failed): what was read was not analyzed", of))
	case ctx.Err() != nil && cut > 0:
		out = append(out, fmt.Sprintf("interrupted: %d of the %d rules did not run to the end (listed as failed); the findings are the others', on what was read until then", cut, of))
	case ctx.Err() != nil:
		out = append(out, "interrupted: the findings cover what was read and analyzed until then")
	case readCut || ruleCtx.Err() != nil:
		out = append(out, fmt.Sprintf("the %s time budget (--timeout) ran out after %s: %s", budget.String(),
			time.Since(start).Round(time.Millisecond).String(), budgetNote(readCut, ruleCtx.Err() != nil)))
	}
	stopped := len(out) > 0 // reading stopped early: a capture cut short has no header read either
	for _, err := range operand.Flatten(operand.WithoutContextErrors(in.Err)) {
		out = append(out, err.Error())
	}
	bad := in.Snap.UnreadableCaptures()
	if len(bad) > 0 && !stopped {
		out = append(out, fmt.Sprintf("%s could not be read: %s", count(len(bad), "capture"), strings.Join(bad, ", ")))
	}
	unread := len(out)
	for _, c := range in.Snap.Cuts {
		if !slices.Contains(bad, c.File) {
			out = append(out, c.String())
		}
	}
	// No input read at all, unless every input is a capture listed as
	// unreadable above: the line would say it twice.
	if operand.CountInputs(in.Snap, false) == 0 && (len(bad) == 0 || stopped) {
		out = append(out, "no input could be read")
		unread++
	}
	return out, unread == 0
}

// rulesCut returns how many of the rules of res its context stopped, and
// of how many rules it ran or stopped (those the configuration disables
// are neither).
func rulesCut(res analyzer.Result) (cut, of int) {
	ran := map[string]bool{}
	for _, r := range res.Rules {
		ran[r.Name] = true
	}
	of = len(res.Rules)
	for _, e := range res.Errors {
		if e.Stopped() {
			cut++
			if !ran[e.Rule] {
				of++ // stopped before it started
			}
		}
	}
	return cut, of
}

// budgetNote says what the end of the time budget cut short.
func budgetNote(readCut, rulesCut bool) string {
	switch {
	case readCut && !rulesCut:
		return "reading stopped there; the findings cover what was read"
	case readCut:
		return "reading stopped there, and the rules that had not run by the end of their grace period are listed as failed"
	}
	return "the rules that had not run are listed as failed"
}

// count says n things: "1 capture", "3 captures".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
