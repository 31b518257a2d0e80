package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// batchResult is one line of `netmortem batch` output (JSON Lines); the
// schema is documented in docs/scale.md.
type batchResult struct {
	Bundle     string               `json:"bundle"`
	Status     string               `json:"status"` // ok, unreadable, timeout, canceled
	Error      string               `json:"error,omitempty"`
	Started    time.Time            `json:"started"`
	DurationMS int64                `json:"duration_ms"`
	Inputs     int                  `json:"inputs"`
	Skipped    int                  `json:"skipped"`
	MaxSev     string               `json:"max_severity,omitempty"`
	Findings   []analyzer.Finding   `json:"findings"`
	Warnings   []report.Warning     `json:"warnings"`
	NWarnings  int                  `json:"warning_count"`
	RuleErrors []analyzer.RuleError `json:"rule_errors"`
}

// maxBatchWarnings bounds the warnings kept per bundle in the output.
const maxBatchWarnings = 50

func runBatch(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("batch", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	jobs := fs.IntP("jobs", "j", runtime.NumCPU(), "bundles analyzed at once")
	out := fs.String("out", "-", "JSON Lines output file (- for stdout)")
	resume := fs.Bool("resume", false, "skip bundles already in --out and append to it")
	shard := fs.String("shard", "", "K/N: take only the bundles of shard K (0-based) out of N, by a hash of the bundle path")
	timeout := fs.Duration("timeout", 10*time.Minute, "time budget per bundle")
	maxBytes := fs.Int64("max-bundle-bytes", 16<<30, "size budget per bundle: bundles larger on disk, or decompressing to more, are not analyzed (0: no limit)")
	memLimit := fs.Int64("memory-limit", 0, "soft memory limit for the whole batch in bytes, as GOMEMLIMIT (0: none)")
	failOn := fs.String("fail-on", "warning", "exit 1 when any bundle has a finding at or above this severity")
	quiet := fs.BoolP("quiet", "q", false, "no progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: netmortem batch [flags] BUNDLE|GLOB...\n\n"+
			"Analyzes every bundle (a directory, an archive, or a file; globs are expanded) in parallel and\n"+
			"writes one JSON line per bundle, then a summary of which rules fired in how many bundles.\n"+
			"One bad bundle never stops the batch.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	sev, err := analyzer.ParseSeverity(*failOn)
	if err != nil {
		fmt.Fprintln(stderr, "netmortem batch: --fail-on:", err)
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
	var bundles []string
	for _, a := range fs.Args() {
		matches, err := filepath.Glob(a)
		if err != nil || len(matches) == 0 {
			matches = []string{a} // not a pattern, or nothing matched: reported as unreadable
		}
		bundles = append(bundles, matches...)
	}
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

	done := map[string]bool{}
	var w io.Writer = stdout
	if *out != "-" {
		if *resume {
			// A line without its newline was cut by a kill, even when it
			// happens to be whole JSON: drop it before reading what is done.
			if err := dropPartialLine(*out); err != nil {
				fmt.Fprintln(stderr, "netmortem batch:", err)
				return exitUnreadable
			}
			done = readDone(*out)
		}
		flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if *resume {
			flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		}
		f, err := os.OpenFile(*out, flags, 0o644)
		if err != nil {
			fmt.Fprintln(stderr, "netmortem batch:", err)
			return exitUnreadable
		}
		defer f.Close()
		w = f
	}
	todo := slices.DeleteFunc(slices.Clone(bundles), func(b string) bool { return done[b] })

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var (
		mu       sync.Mutex
		bw       = bufio.NewWriter(w)
		hits     = map[string]int{}
		failed   int
		worst    analyzer.Severity
		finished int
		prog     = newProgress(stderr, len(todo), *quiet)
	)
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(*jobs, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				res := analyzeBundle(ctx, b, *timeout, *maxBytes)
				line, _ := json.Marshal(res)
				mu.Lock()
				bw.Write(line)
				bw.WriteByte('\n')
				bw.Flush()
				finished++
				if res.Status != "ok" {
					failed++
				}
				seen := map[string]bool{}
				for _, f := range res.Findings {
					worst = max(worst, f.Severity)
					if !seen[f.Rule] {
						seen[f.Rule] = true
						hits[f.Rule]++
					}
				}
				prog.step(finished, res)
				mu.Unlock()
			}
		}()
	}
	for _, b := range todo {
		if ctx.Err() != nil {
			break
		}
		work <- b
	}
	close(work)
	wg.Wait()
	prog.done()

	if !*quiet {
		writeBatchSummary(stderr, len(bundles), len(bundles)-len(todo), finished, failed, hits)
	}
	switch {
	case ctx.Err() != nil:
		return exitUnreadable
	case failed > 0:
		return exitUnreadable
	case worst >= sev && worst > 0:
		return exitFindings
	}
	return exitOK
}

// analyzeBundle reads and analyzes one bundle within its time and size
// budgets. Memory follows the bundle's size (and a capture's live
// connections), so the size budget bounds it.
func analyzeBundle(ctx context.Context, bundle string, budget time.Duration, maxBytes int64) (res batchResult) {
	start := time.Now()
	res = batchResult{Bundle: bundle, Status: "ok", Started: start.UTC(), Findings: []analyzer.Finding{},
		Warnings: []report.Warning{}, RuleErrors: []analyzer.RuleError{}}
	defer func() {
		if r := recover(); r != nil {
			res.Status, res.Error = "unreadable", fmt.Sprint("internal error: ", r)
		}
		res.DurationMS = time.Since(start).Milliseconds()
	}()
	if maxBytes > 0 {
		if size := diskSize(bundle); size > maxBytes {
			res.Status, res.Error = "over_budget", fmt.Sprintf("%d bytes on disk, over the %d-byte budget", size, maxBytes)
			return res
		}
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	opts := &parse.Options{Summary: parse.Summary{Enabled: true}}
	if maxBytes > 0 {
		opts.Limits.MaxTotalBytes = maxBytes
	}
	snap, warns, err := parse.Open(ctx, bundle, opts)
	if ctx.Err() != nil {
		res.Status, res.Error = "timeout", fmt.Sprintf("over the %s budget", budget)
		if errors.Is(ctx.Err(), context.Canceled) {
			res.Status, res.Error = "canceled", "interrupted"
		}
		return res
	}
	if err != nil {
		res.Status, res.Error = "unreadable", err.Error()
		return res
	}
	ar := analyzer.Run(ctx, snap, rules.All(), nil)
	rep := report.New(snap, warns, ar)
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
	if res.Inputs == 0 {
		res.Status, res.Error = "unreadable", "no input could be read"
	}
	if m := rep.Max(); m > 0 {
		res.MaxSev = m.String()
	}
	return res
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

func parseShard(s string) (k, n int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 0 || k >= n {
		return 0, 0, fmt.Errorf("%q: want K/N with 0 <= K < N", s)
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

// readDone returns the bundles already present in a JSON Lines output.
func readDone(path string) map[string]bool {
	done := map[string]bool{}
	f, err := os.Open(path)
	if err != nil {
		return done
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var r struct {
			Bundle string `json:"bundle"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Bundle != "" {
			done[r.Bundle] = true
		}
	}
	return done
}

// dropPartialLine cuts a last line that a killed batch left unfinished, so
// that appending starts on a line of its own.
func dropPartialLine(path string) error {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 || b[len(b)-1] == '\n' {
		return nil // nothing there yet, or whole lines only
	}
	i := strings.LastIndexByte(string(b), '\n')
	return os.Truncate(path, int64(i+1))
}

// progress reports batch progress on stderr: one updating line on a
// terminal, plain lines otherwise.
type progress struct {
	w     io.Writer
	total int
	tty   bool
	quiet bool
	start time.Time
}

func newProgress(w io.Writer, total int, quiet bool) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, total: total, tty: tty, quiet: quiet, start: time.Now()}
}

func (p *progress) step(n int, r batchResult) {
	if p.quiet {
		return
	}
	status := count(len(r.Findings), "finding")
	if r.Status != "ok" {
		status = r.Status + ": " + r.Error
	}
	if p.tty {
		const width = 30
		filled := width * n / max(p.total, 1)
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), n, p.total,
			time.Since(p.start).Round(time.Second))
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s: %s (%s)\n", n, p.total, r.Bundle, status, time.Duration(r.DurationMS)*time.Millisecond)
}

func (p *progress) done() {
	if p.tty && !p.quiet {
		fmt.Fprintln(p.w)
	}
}

func writeBatchSummary(w io.Writer, total, resumed, finished, failed int, hits map[string]int) {
	fmt.Fprintf(w, "\n%d bundles: %d analyzed now, %d already done, %d unreadable or over budget.\n", total, finished, resumed, failed)
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
