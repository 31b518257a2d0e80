package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/internal/batch"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/results"
)

func newBatchCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "batch [flags] BUNDLE|GLOB...",
		Short: "analyze many bundles in parallel, one JSON line each",
		Long: "Analyzes every bundle (a directory, an archive, or a file; globs are expanded) in parallel and\n" +
			"writes one JSON line per bundle, then a summary of which rules fired in how many bundles.\n" +
			"One bad bundle never stops the batch. A bundle that is neither a regular file nor a directory\n" +
			"(a named pipe, a device, a socket) is refused before it is opened. Bundles interrupted by\n" +
			"SIGINT or SIGTERM are left out of the output, so that --resume analyzes them. --out is locked while the\n" +
			"batch writes it: a second batch given the same file fails at once.\n\n" +
			"A directory that holds several bundles (archives, sosreport or troubleshoot.sh directories,\n" +
			"folders of them) is split: each is analyzed on its own, and batch says so; --as-one analyzes\n" +
			"the directory as one bundle. Globs are expanded by netmortem too ('**' matches any depth).\n\n" +
			"Bundles in object storage are named by URL: s3://BUCKET/KEY, gs://, azblob://CONTAINER/KEY,\n" +
			"file:///PATH; a key ending in / is every object under it, a key with glob characters a pattern\n" +
			"listed through the bucket's API. Credentials come from the environment as each cloud's SDK\n" +
			"reads them (docs/fleet.md, \"Bundles in object storage\").\n\n" +
			"--resume with --anonymize needs the key of the run it resumes (--anonymize-key-file or\n" +
			"NETMORTEM_ANONYMIZE_KEY), so that the bundles' tokens match the lines already written.\n\n" +
			"--db writes the lines to a database instead of stdout: a SQLite file (results.db,\n" +
			"sqlite:///abs/path, file:path) or PostgreSQL (postgres://user@host/db), its schema created or\n" +
			"upgraded first (docs/fleet.md). Each bundle is one transaction that replaces what the database\n" +
			"held of it, so that shards and retried runs writing one database at once never duplicate a row.\n" +
			"With --out too, both get every line, and --resume skips only the bundles both hold. A database\n" +
			"that cannot be opened stops the batch before any bundle is analyzed (exit 3).",
		Example: "  netmortem batch -j 2 'fixtures/incidents/*' > results.jsonl\n" +
			"  netmortem batch --resume --out results.jsonl 'fixtures/incidents/*'\n" +
			"  netmortem batch -q --shard 0/2 --out shard-0.jsonl 'fixtures/incidents/*'",
		Annotations: map[string]string{exitCodesKey: exitCodesBatch},
	}
	fs := cmd.Flags()
	jobs := fs.IntP("jobs", "j", runtime.NumCPU(), "bundles analyzed at once")
	out := fs.String("out", "-", "JSON Lines output file (- for stdout); with --db, only when given")
	db := fs.String("db", "", "results database to write the lines to instead of --out: a SQLite file (results.db, sqlite:///abs/path, file:path) or a postgres:// URL (docs/fleet.md); with --out too, both get every line")
	resume := fs.Bool("resume", false, "skip bundles already in --out (and append to it) or in --db; with both, the bundles both hold")
	shard := fs.String("shard", "", "K/N: take only the bundles of shard K (0-based) out of N, by a hash of the bundle path; auto: K and N from JOB_COMPLETION_INDEX and JOB_COMPLETIONS (a Kubernetes Indexed Job)")
	timeout := fs.Duration("timeout", defaultTimeout, "time budget per bundle (0: no limit)")
	maxBytes := fs.Int64("max-bundle-bytes", 16<<30, "size budget per bundle: bundles larger on disk are not analyzed, archives decompressing to more are read up to it; both are over_budget (0: no limit)")
	maxMemory := fs.Int64("max-bundle-memory", 0, "memory budget per bundle in bytes, for what its parsed text keeps: files past it are read no further, with a warning (0: the default, 256 MiB)")
	memLimit := fs.Int64("memory-limit", 0, "soft memory limit for the whole batch in bytes, as GOMEMLIMIT (0: none)")
	failOn := fs.String("fail-on", "warning", "exit 1 when any bundle has a finding at or above this severity: info, warning, error, or never")
	quiet := fs.BoolP("quiet", "q", false, "print no progress on stderr (the configuration used, the directories split, each bundle done, the summary); errors are still printed")
	config := fs.String("config", "", "YAML file that disables rules, overrides severities, sets thresholds and suppresses findings in every bundle (docs/config.md)")
	var ao anonymizeOptions
	addAnonymizeFlags(fs, &ao)
	asOne := fs.Bool("as-one", false, "analyze each directory given as one bundle, even when it holds several (archives, sosreport or troubleshoot directories): by default each is analyzed on its own")
	completeFlags(cmd, map[string]cobra.CompletionFunc{"fail-on": completeValues(failOnValues...),
		"jobs": cobra.NoFileCompletions, "shard": cobra.NoFileCompletions, "timeout": cobra.NoFileCompletions,
		"max-bundle-bytes": cobra.NoFileCompletions, "max-bundle-memory": cobra.NoFileCompletions, "memory-limit": cobra.NoFileCompletions})
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	c.runs(cmd, "", func([]string) int {
		return runBatch(fs, c.stdout, c.stderr, jobs, out, db, resume, shard, timeout, maxBytes, maxMemory, memLimit, failOn, quiet, asOne, config, ao)
	})
	return cmd
}

func runBatch(fs *pflag.FlagSet, stdout, stderr io.Writer, jobs *int, out, db *string, resume *bool, shard *string, timeout *time.Duration,
	maxBytes, maxMemory, memLimit *int64, failOn *string, quiet, asOne *bool, config *string, ao anonymizeOptions) int {
	sev, err := parseFailOn(*failOn)
	if err != nil {
		fmt.Fprintln(stderr, "netmortem batch: --fail-on:", err)
		return exitUsage
	}
	if err := ao.loadKey(); err != nil {
		escape.Fprintln(stderr, "netmortem batch:", err)
		return exitUsage
	}
	if *jobs < 1 {
		fmt.Fprintln(stderr, "netmortem batch: --jobs must be at least 1")
		return exitUsage
	}
	if *memLimit > 0 {
		debug.SetMemoryLimit(*memLimit)
	}
	shardK, shardN, err := parseShard(*shard)
	if err != nil {
		fmt.Fprintln(stderr, "netmortem batch: --shard:", err)
		return exitUsage
	}
	var br *batch.Options
	if *config != "" {
		rs, cfg, err := netmortem.SelectRules(nil, *config, nil, nil)
		if err != nil {
			sayError(stderr, "batch", err)
			return exitUsage
		}
		br = &batch.Options{Rules: rs, Config: cfg}
		if !*quiet {
			sayConfig(stderr, "batch", *config, false)
		}
	}
	if ao.enabled() {
		if *resume && ao.key == "" {
			fmt.Fprintln(stderr, "netmortem batch: --resume with --anonymize needs the key the earlier run used "+
				"(--anonymize-key-file FILE, "+keyEnv+" or --anonymize-key): the lines name their bundles by tokens, "+
				"and with a random key the tokens of this run would not match those already written")
			return exitUsage
		}
		if br == nil {
			br = &batch.Options{}
		}
		br.Anon = batch.NewAnon(ao.key)
		if *resume && ao.mapping != "" {
			if err := br.Anon.Keep(ao.mapping); err != nil {
				escape.Fprintln(stderr, "netmortem batch:", err)
				return exitUsage
			}
		}
	}
	if slices.Contains(fs.Args(), operand.Stdin) {
		fmt.Fprintln(stderr, "netmortem batch:", batch.ErrStdin)
		return exitUsage
	}
	objs := operand.NewObjects(*timeout)
	defer objs.Close()
	operands, err := operand.Expand(context.Background(), fs.Args(), objs, nil)
	if err != nil {
		escape.Fprintln(stderr, "netmortem batch:", err)
		if operand.MayPass(err) {
			return exitUnreadable
		}
		return exitUsage
	}
	// A pattern that matched nothing is kept: its line says so.
	// A link a pattern matched out of its folder is not read, nor split:
	// its line says so.
	var outside []string
	bundles := slices.DeleteFunc(slices.Clone(operands.Paths), func(p string) bool {
		if operands.Outside[p] {
			outside = append(outside, p)
		}
		return operands.Outside[p]
	})
	if !*asOne {
		if bundles, err = splitOperands(context.Background(), bundles, stderr, *quiet); err != nil {
			fprintfFitted(stderr, outputWidth(stderr), "netmortem batch: %s\n", err)
			return exitUsage
		}
	}
	bundles = append(bundles, outside...)
	if len(bundles) == 0 {
		fmt.Fprintln(stderr, "netmortem batch: no BUNDLE given")
		fs.Usage()
		return exitUsage
	}
	slices.Sort(bundles)
	bundles = slices.Compact(bundles)
	if shardN > 0 {
		bundles = slices.DeleteFunc(bundles, func(b string) bool { return shardOf(b, shardN) != shardK })
	}

	sinks, done, err := batch.OpenSinks(context.Background(), stdout, *out, fs.Changed("out"), *db, *resume)
	if err != nil {
		escape.Fprintln(stderr, "netmortem batch:", err)
		return exitUnreadable
	}
	defer sinks.Close()
	todo := slices.DeleteFunc(slices.Clone(bundles), func(b string) bool { return done[br.LineName(b)] })
	if br == nil {
		br = &batch.Options{}
	}
	br.Timeout, br.MaxBytes, br.MaxMemory, br.Objects = *timeout, *maxBytes, *maxMemory, objs
	br.Outside = operands.Outside

	sigCtx, stop := signalContext()
	defer stop()
	// ctx also ends at the first write error: nothing more can be written.
	ctx, cancel := context.WithCancel(sigCtx)
	defer cancel()
	prog := newProgress(stderr, len(todo), *quiet)
	step := prog.step
	if *quiet {
		// No progress, but a bundle that could not be read is an error,
		// said once: a mistyped path must not pass unnoticed.
		step = func(_ int, r batch.Result) {
			if !done[r.Bundle] && unreadable(r.Status) {
				fprintfFitted(stderr, prog.width, "netmortem batch: %s: %s: %s\n", r.Bundle, r.Status, strings.TrimPrefix(r.Error, r.Bundle+": "))
			}
		}
	}
	t := batch.Run(ctx, cancel, todo, *jobs, br, sinks, done, step)
	prog.done()
	writeErr := sinks.Close() // a file system may report a write error only here

	finished, failed, already := t.Finished, t.Failed, t.Already
	if !*quiet && br.Config != nil && len(todo) == len(bundles) && finished == len(todo) {
		// Only when the batch saw every bundle: an entry for a bundle
		// analyzed before --resume is not unmatched.
		sayUnmatched(stderr, br.Config, t.Suppressed, time.Now())
	}
	if br.Anon != nil {
		if err := ao.writeMappings(br.Anon.Mappings()); err != nil && writeErr == nil {
			writeErr = fmt.Errorf("writing the results to %s: %w", outName(*out), err)
		}
	}
	left := len(todo) - finished - already
	if !*quiet {
		writeBatchSummary(stderr, len(bundles), len(bundles)-len(todo)+already, finished, failed, t.Incomplete, left, t.Hits)
	}
	testHook("written")
	switch {
	case writeErr != nil:
		escape.Fprintf(stderr, "netmortem batch: %s\n", writeErr)
		return exitUnreadable
	case sigCtx.Err() != nil && left > 0:
		// An interrupt once every bundle was analyzed cut nothing short.
		fmt.Fprintf(stderr, "netmortem batch: interrupted: %s not analyzed (--resume analyzes them)\n", count(left, "bundle"))
		return exitUnreadable
	case t.Retry > 0:
		fmt.Fprintf(stderr, "netmortem batch: %s could not be read from storage for now, and got no line (--resume reads them again)\n", count(t.Retry, "bundle"))
		return exitUnreadable
	case failed > 0:
		return exitUnreadable
	case t.Worst >= sev && t.Worst > 0:
		return exitFindings
	case t.Incomplete > 0:
		// No finding decides, and what was cut off could have.
		return exitUnreadable
	}
	return exitOK
}

// unreadable reports whether a bundle's status says it could not be
// analyzed (missing, refused, out of time or over its budget), as the exit
// code counts it.
func unreadable(status string) bool {
	switch status {
	case results.StatusOK, results.StatusIncomplete, results.StatusCanceled, batch.StatusRetry:
		return false
	}
	return true
}

func outName(out string) string {
	if out == "-" {
		return "stdout"
	}
	return out
}

func parseShard(s string) (k, n int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	if s == "auto" {
		return shardFromEnv()
	}
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 0 || k >= n {
		return 0, 0, fmt.Errorf("%q: want K/N with 0 <= K < N, or auto", s)
	}
	return k, n, nil
}

// shardOf places a bundle in one of n shards by a hash of its path, so that
// every worker computes the same split.
func shardOf(bundle string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(bundle))
	return int(h.Sum32() % uint32(n))
}

// progress reports batch progress on stderr: one updating line on a
// terminal, plain lines otherwise, fitted to width.
type progress struct {
	w     io.Writer
	total int
	tty   bool
	quiet bool
	width int
	start time.Time
}

func newProgress(w io.Writer, total int, quiet bool) *progress {
	tty := false
	if f, ok := unwrapSized(w).(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, total: total, tty: tty, quiet: quiet, width: outputWidth(w), start: time.Now()}
}

func (p *progress) step(n int, r batch.Result) {
	if p.quiet {
		return
	}
	status := count(len(r.Findings), "finding")
	switch r.Status {
	case results.StatusOK:
	case results.StatusIncomplete:
		status += "; incomplete: " + r.Error
	case results.StatusCanceled:
		status = "canceled: interrupted, not written (--resume analyzes it)"
	case batch.StatusRetry:
		status = "not read, not written (--resume reads it again): " + r.Error
	default:
		// The line names the bundle: an error about the bundle itself
		// ("missing: no such file or directory") need not name it again.
		status = r.Status + ": " + strings.TrimPrefix(r.Error, r.Bundle+": ")
	}
	if p.tty {
		const width = 30
		filled := width * n / max(p.total, 1)
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), n, p.total,
			time.Since(p.start).Round(time.Second))
		return
	}
	fprintfFitted(p.w, p.width, "[%d/%d] %s: %s (%s)\n", n, p.total, r.Bundle, status, time.Duration(r.DurationMS)*time.Millisecond)
}

func (p *progress) done() {
	if p.tty && !p.quiet {
		fmt.Fprintln(p.w)
	}
}

func writeBatchSummary(w io.Writer, total, resumed, finished, failed, incomplete, left int, hits map[string]int) {
	line := fmt.Sprintf("\n%s: %d analyzed now, %d already done, %d unreadable, refused or over budget", count(total, "bundle"), finished, resumed, failed)
	if incomplete > 0 {
		line += fmt.Sprintf(", %d incomplete", incomplete)
	}
	if left > 0 {
		line += fmt.Sprintf(", %d not analyzed", left)
	}
	io.WriteString(w, fitText(line+".\n", outputWidth(w)))
	if len(hits) == 0 {
		return
	}
	rules := make([]string, 0, len(hits))
	for r := range hits {
		rules = append(rules, r)
	}
	sort.Slice(rules, func(i, j int) bool {
		if hits[rules[i]] != hits[rules[j]] {
			return hits[rules[i]] > hits[rules[j]]
		}
		return rules[i] < rules[j]
	})
	tw := tablewriter.NewTable(w)
	tw.Header("RULE", "BUNDLES")
	for _, r := range rules {
		tw.Append(r, strconv.Itoa(hits[r]))
	}
	tw.Render()
}
