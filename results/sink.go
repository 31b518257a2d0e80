package results

import (
	"context"
	"time"
)

// A Sink is where a batch writes its lines: a JSON Lines file (JSONL), or a
// database (package results/sqlstore). Write and Done may be called from
// several goroutines, and several processes may write one database sink at
// once (the shards of a batch): a sink holds at most one line per bundle,
// and a line written again replaces the earlier one, findings included, so
// that a retried shard never duplicates a row.
type Sink interface {
	// Done returns the bundles the sink holds as finished: every bundle
	// it holds a line of, except those whose status is StatusCanceled.
	// A resumed batch skips them.
	Done(ctx context.Context) (map[string]bool, error)
	// Write records l, replacing what the sink held for l.Bundle. The
	// line is written whole or, on an error, not at all (a database
	// writes it in one transaction; a file may be left with a cut last
	// line, which Done ignores and a resume drops).
	Write(ctx context.Context, l *Line) error
	// Close flushes and releases the sink. Its error may be the first to
	// report a failed write (a file system that reports only on close).
	Close() error
}

// A Store answers `netmortem query`: counts over the lines a sink holds.
// Every Store gives the same answers over the same lines, whichever sink
// holds them (tested): the JSON Lines file of a local batch and the
// PostgreSQL database of an Indexed Job agree.
type Store interface {
	// Rules counts, for each rule, the bundles with a finding of it and
	// its findings.
	Rules(ctx context.Context, f Filter) ([]RuleCount, error)
	// Weeks counts the bundles of each week (of their BundleTime) and
	// those among them that match f (see GroupCount).
	Weeks(ctx context.Context, f Filter) ([]GroupCount, error)
	// Versions counts the bundles of each Kubernetes minor version and
	// those among them that match f.
	Versions(ctx context.Context, f Filter) ([]GroupCount, error)
	// Fingerprints counts, for each fingerprint, the bundles that have
	// it.
	Fingerprints(ctx context.Context, f Filter) ([]FingerprintCount, error)
	// Bundles lists the bundles with a finding whose fingerprint is fp.
	Bundles(ctx context.Context, fp string, f Filter) ([]BundleRef, error)
	// Close releases the store.
	Close() error
}

// Filter narrows what a Store counts. The zero Filter counts every line.
type Filter struct {
	// Rule, when set, counts only findings of this rule: in Weeks and
	// Versions, a bundle matches when it has one.
	Rule string
	// Since and Until, when not zero, keep only the bundles whose
	// BundleTime is in [Since, Until). A bundle whose time is unknown is
	// then left out.
	Since, Until time.Time
}

// RuleCount is one row of Store.Rules. Rows are sorted by Bundles, most
// first, then by Rule.
type RuleCount struct {
	Rule     string `json:"rule"`
	Bundles  int    `json:"bundles"`  // bundles with at least one finding of Rule
	Findings int    `json:"findings"` // findings of Rule in them
	// MaxSeverity is the highest severity of its findings.
	MaxSeverity string `json:"max_severity"`
	// First and Last are the earliest and latest BundleTime of those
	// bundles, zero when none is known.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
}

// GroupCount is one row of Store.Weeks (Group is a week, "2026-W48", or
// UnknownWeek) or Store.Versions (Group is a minor version, "1.31", or
// UnknownVersion). Rows are sorted by Group, with the unknown group last
// (versions by their numbers: "1.9" before "1.31"; SortWeeks, SortVersions).
type GroupCount struct {
	Group string `json:"group"`
	// Bundles counts the bundles of the group, whatever their status.
	Bundles int `json:"bundles"`
	// Matching counts those with a finding of Filter.Rule, or with any
	// finding when the filter names no rule.
	Matching int `json:"matching"`
	// Findings counts the findings of Filter.Rule (or all findings) in
	// the group.
	Findings int `json:"findings"`
	// Incomplete counts the bundles of the group whose status is
	// StatusIncomplete: their evidence was cut short, their findings
	// cover what could be read. Absent from JSON when none is.
	Incomplete int `json:"incomplete,omitempty"`
}

// FingerprintCount is one row of Store.Fingerprints. Rows are sorted by
// Bundles, most first, then by Fingerprint.
type FingerprintCount struct {
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	// Title is the title of its finding in the bundle that sorts first.
	Title   string `json:"title"`
	Bundles int    `json:"bundles"`
}

// BundleRef is one row of Store.Bundles: a bundle that has the finding.
// Rows are sorted by Bundle.
type BundleRef struct {
	Bundle            string    `json:"bundle"`
	Rule              string    `json:"rule"`
	Severity          string    `json:"severity"`
	Title             string    `json:"title"`
	BundleTime        time.Time `json:"bundle_time,omitzero"`
	KubernetesVersion string    `json:"kubernetes_version,omitempty"`
}
