package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/netmortem/netmortem/results"
)

// bundleColumns are the columns of a bundles row, in the order of
// bundleArgs.
var bundleColumns = []string{"bundle", "status", "error", "started", "duration_ms", "bundle_time", "bundle_time_source",
	"week", "kubernetes_version", "kubernetes_minor", "inputs", "skipped", "max_severity", "warning_count",
	"suppressed_count", "tool_version", "schema_version", "line", "written_at"}

var findingColumns = []string{"bundle", "fingerprint", "rule", "severity", "certainty", "title", "subject", "facts"}

var inputColumns = []string{"bundle", "seq", "path", "format", "kind", "node", "layout", "records", "skipped"}

// upsert is an INSERT of one row of table that replaces the row with the
// same key.
func upsert(table string, cols []string, key ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES (", table, strings.Join(cols, ", "))
	for i := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", i+1)
	}
	fmt.Fprintf(&b, ") ON CONFLICT (%s) DO UPDATE SET ", strings.Join(key, ", "))
	n := 0
	for _, c := range cols {
		if isKey(c, key) {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		n++
		fmt.Fprintf(&b, "%s = excluded.%s", c, c)
	}
	return b.String()
}

func isKey(c string, key []string) bool {
	for _, k := range key {
		if c == k {
			return true
		}
	}
	return false
}

var (
	upsertBundle  = upsert("bundles", bundleColumns, "bundle")
	upsertFinding = upsert("findings", findingColumns, "bundle", "fingerprint")
	upsertInput   = upsert("inputs", inputColumns, "bundle", "seq")
)

// The statements that delete what a line no longer holds: the findings
// whose fingerprint is not in the JSON array $2, the inputs past the
// count $2.
var deleteFindings = map[string]string{
	SQLite:     "DELETE FROM findings WHERE bundle = $1 AND fingerprint NOT IN (SELECT value FROM json_each($2))",
	PostgreSQL: "DELETE FROM findings WHERE bundle = $1 AND fingerprint NOT IN (SELECT jsonb_array_elements_text($2::jsonb))",
}

const deleteInputs = "DELETE FROM inputs WHERE bundle = $1 AND seq >= $2"

// Write records l, in one transaction: its bundles row, its findings and
// its inputs replace those the database held for l.Bundle, if any. Two
// processes writing the same bundle at once leave one of their lines,
// whole; a transaction that meets a serialization failure, a deadlock or
// a busy database is run again.
func (d *DB) Write(ctx context.Context, l *results.Line) error {
	line, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("%s: bundle %s: %w", d.name, l.Bundle, err)
	}
	bundle, findings, fps, inputs, err := d.rows(l, line)
	if err != nil {
		return fmt.Errorf("%s: bundle %s: %w", d.name, l.Bundle, err)
	}
	err = d.retry(ctx, func() error {
		tx, err := d.sql.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, upsertBundle, bundle...); err != nil {
			return err
		}
		if err := execEach(ctx, tx, upsertFinding, findings); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, deleteFindings[d.dialect], l.Bundle, fps); err != nil {
			return err
		}
		if err := execEach(ctx, tx, upsertInput, inputs); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, deleteInputs, l.Bundle, len(inputs)); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return fmt.Errorf("%s: writing bundle %s: %w", d.name, l.Bundle, err)
	}
	return nil
}

// execEach runs query once for each row of args, through one prepared
// statement.
func execEach(ctx context.Context, tx *sql.Tx, query string, args [][]any) error {
	if len(args) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, a := range args {
		if _, err := st.ExecContext(ctx, a...); err != nil {
			return err
		}
	}
	return nil
}

// rows are the arguments of the rows of l: its bundles row, its findings
// rows, the JSON array of their fingerprints, and its inputs rows.
func (d *DB) rows(l *results.Line, line []byte) (bundle []any, findings [][]any, fps string, inputs [][]any, err error) {
	bundle = []any{l.Bundle, l.Status, l.Error, d.timeArg(l.Started), l.DurationMS, d.nullTimeArg(l.BundleTime),
		l.BundleTimeSource, results.Week(l.BundleTime), l.KubernetesVersion, results.MinorVersion(l.KubernetesVersion),
		l.Inputs, l.Skipped, l.MaxSev, l.NWarnings, l.SuppressedCount, l.Tool.Version, l.SchemaVersion,
		string(line), d.timeArg(time.Now())}
	seen := make([]string, 0, len(l.Findings))
	for _, f := range l.Findings {
		subject, err := json.Marshal(f.Subject)
		if err != nil {
			return nil, nil, "", nil, fmt.Errorf("finding %s: %w", f.Fingerprint, err)
		}
		facts, err := json.Marshal(f.Facts)
		if err != nil {
			return nil, nil, "", nil, fmt.Errorf("finding %s: %w", f.Fingerprint, err)
		}
		findings = append(findings, []any{l.Bundle, f.Fingerprint, f.Rule, f.Severity.String(), string(f.Certainty),
			f.Title, string(subject), string(facts)})
		seen = append(seen, f.Fingerprint)
	}
	b, err := json.Marshal(seen)
	if err != nil {
		return nil, nil, "", nil, err
	}
	for i, in := range l.InputList {
		inputs = append(inputs, []any{l.Bundle, i, in.Path, in.Format, string(in.Kind), in.Node, in.Layout, in.Records, in.Skipped})
	}
	return bundle, findings, string(b), inputs, nil
}
