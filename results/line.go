// Package results holds what a batch of bundles leaves behind and how it is
// kept and asked about: Line, one bundle's result (a JSON line of `netmortem
// batch`, a row of a database); Sink, where lines are written (JSON Lines
// here, SQLite and PostgreSQL in package results/sqlstore); and Store, the
// questions `netmortem query` asks of a sink (which rules fired in how many
// bundles, week by week, by Kubernetes version, and which bundles share a
// fingerprint), answered the same whichever sink holds the lines.
package results

import (
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/buildinfo"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// The statuses of a bundle in a Line.
const (
	StatusOK         = "ok"
	StatusUnreadable = "unreadable"
	StatusRefused    = "refused"
	StatusTimeout    = "timeout"
	StatusOverBudget = "over_budget"
	// StatusIncomplete is a bundle analyzed whole whose evidence is cut
	// short (an archive without its end, a capture cut in a record, a
	// table without its COMMIT): its findings cover what could be read,
	// and Error names each cut.
	StatusIncomplete = "incomplete"
	// StatusCanceled is a bundle a batch was interrupted in. It is never
	// written to a sink (the bundle is not done: a resumed batch analyzes
	// it), and a line with it, from an earlier version, is not taken as
	// done either.
	StatusCanceled = "canceled"
)

// Line is one bundle's result in a batch: a JSON line of `netmortem batch`
// (the schema is documented in docs/scale.md) and the rows a database sink
// keeps of it.
type Line struct {
	// SchemaVersion is report.SchemaVersion: the shape of the line.
	SchemaVersion string `json:"schema_version"`
	// Tool is the netmortem that wrote the line.
	Tool buildinfo.Info `json:"tool"`
	// Bundle names the bundle: its path as given or matched, or its URL
	// (s3://bucket/key) for a bundle in object storage; a path that is not
	// UTF-8 escaped (BundleName). A sink holds at most one line per Bundle.
	Bundle string `json:"bundle"`
	// Status is one of the Status constants.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Started is when the analysis of the bundle started (UTC).
	Started    time.Time `json:"started"`
	DurationMS int64     `json:"duration_ms"`
	// BundleTime is when the bundle's evidence was taken, as BundleTime
	// tells it, and BundleTimeSource where that time comes from; the
	// zero time and "" when nothing tells.
	BundleTime       time.Time `json:"bundle_time,omitzero"`
	BundleTimeSource string    `json:"bundle_time_source,omitempty"`
	// KubernetesVersion is the cluster's version as the bundle shows it
	// (see KubernetesVersion); "" when it does not.
	KubernetesVersion string               `json:"kubernetes_version,omitempty"`
	Inputs            int                  `json:"inputs"`
	Skipped           int                  `json:"skipped"`
	MaxSev            string               `json:"max_severity,omitempty"`
	Findings          []analyzer.Finding   `json:"findings"`
	Warnings          []report.Warning     `json:"warnings"`
	NWarnings         int                  `json:"warning_count"`
	RuleErrors        []analyzer.RuleError `json:"rule_errors"`
	// SuppressedCount counts the findings the configuration's ignore
	// entries left out of Findings.
	SuppressedCount int `json:"suppressed_count"`
	// SuppressedFingerprints are their fingerprints, for a baseline
	// made of the batch's lines.
	SuppressedFingerprints []string `json:"suppressed_fingerprints,omitempty"`
	// InputList are the bundle's inputs, for the sinks that keep them
	// (a database's inputs table); a JSON line counts them only.
	InputList []model.Input `json:"-"`
}

// Week is the ISO 8601 week of t in UTC, as "2026-W48"; "unknown" for the
// zero time. Queries group bundles by the week of their BundleTime.
func Week(t time.Time) string {
	if t.IsZero() {
		return UnknownWeek
	}
	y, w := t.UTC().ISOWeek()
	return isoWeek(y, w)
}

// UnknownWeek is the week of a bundle whose time is not known.
const UnknownWeek = "unknown"

func isoWeek(y, w int) string {
	b := []byte("0000-W00")
	for i := 3; i >= 0; i-- {
		b[i] = byte('0' + y%10)
		y /= 10
	}
	b[6], b[7] = byte('0'+w/10), byte('0'+w%10)
	return string(b)
}
