package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/netmortem/netmortem/results"
)

// The columns of the rows of a line, in the order of the arguments rows
// gives.
var bundleColumns = []string{"bundle", "status", "error", "started", "duration_ms", "bundle_time", "bundle_time_source",
	"week", "kubernetes_version", "kubernetes_minor", "inputs", "skipped", "max_severity", "warning_count",
	"suppressed_count", "tool_version", "schema_version", "line", "written_at"}

var findingColumns = []string{"bundle", "fingerprint", "rule", "severity", "certainty", "title", "subject", "facts"}

var inputColumns = []string{"bundle", "seq", "path", "format", "kind", "node", "layout", "records", "skipped"}

// upsert is an INSERT of n rows of table that replaces the rows with the
// same key.
func upsert(table string, cols []string, n int, key ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, strings.Join(cols, ", "))
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for i := range cols {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "$%d", r*len(cols)+i+1)
		}
		b.WriteByte(')')
	}
	fmt.Fprintf(&b, " ON CONFLICT (%s) DO UPDATE SET ", strings.Join(key, ", "))
	set := 0
	for _, c := range cols {
		if isKey(c, key) {
			continue
		}
		if set > 0 {
			b.WriteString(", ")
		}
		set++
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

var upsertBundle = upsert("bundles", bundleColumns, 1, "bundle")

// maxRows bounds the rows of one INSERT, for the bound on a statement's
// parameters (32766 in SQLite, 65535 in PostgreSQL).
const maxRows = 500

// upsertRows upserts rows into table, maxRows at a time: a statement per
// maxRows rows rather than per row, for a database across a network. No
// two rows may have the same key (PostgreSQL refuses to update a row twice
// in one statement).
func upsertRows(ctx context.Context, tx *sql.Tx, table string, cols []string, key []string, rows [][]any) error {
	for len(rows) > 0 {
		n := min(len(rows), maxRows)
		args := make([]any, 0, n*len(cols))
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		if _, err := tx.ExecContext(ctx, upsert(table, cols, n, key...), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

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
	key := d.text(l.Bundle)
	err = d.retry(ctx, func() error {
		tx, err := d.sql.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, upsertBundle, bundle...); err != nil {
			return err
		}
		if err := upsertRows(ctx, tx, "findings", findingColumns, []string{"bundle", "fingerprint"}, findings); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, deleteFindings[d.dialect], key, fps); err != nil {
			return err
		}
		if err := upsertRows(ctx, tx, "inputs", inputColumns, []string{"bundle", "seq"}, inputs); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, deleteInputs, key, len(inputs)); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return fmt.Errorf("%s: writing bundle %s: %w", d.name, l.Bundle, err)
	}
	return nil
}

// rows are the arguments of the rows of l: its bundles row, its findings
// rows (one per fingerprint: of two findings with one, the later), the
// JSON array of their fingerprints, and its inputs rows. Text is kept as
// the JSON line has it, valid UTF-8 (see text).
func (d *DB) rows(l *results.Line, line []byte) (bundle []any, findings [][]any, fps string, inputs [][]any, err error) {
	tx := d.text
	bundle = []any{tx(l.Bundle), tx(l.Status), tx(l.Error), d.timeArg(l.Started), l.DurationMS, d.nullTimeArg(l.BundleTime),
		tx(l.BundleTimeSource), results.Week(l.BundleTime), tx(l.KubernetesVersion), tx(results.MinorVersion(l.KubernetesVersion)),
		l.Inputs, l.Skipped, tx(l.MaxSev), l.NWarnings, l.SuppressedCount, tx(l.Tool.Version), tx(l.SchemaVersion),
		d.json(line), d.timeArg(time.Now())}
	seen := make([]string, 0, len(l.Findings))
	at := map[string]int{} // the index in findings of a fingerprint
	for _, f := range l.Findings {
		subject, err := json.Marshal(f.Subject)
		if err != nil {
			return nil, nil, "", nil, fmt.Errorf("finding %s: %w", f.Fingerprint, err)
		}
		facts, err := json.Marshal(f.Facts)
		if err != nil {
			return nil, nil, "", nil, fmt.Errorf("finding %s: %w", f.Fingerprint, err)
		}
		row := []any{tx(l.Bundle), tx(f.Fingerprint), tx(f.Rule), f.Severity.String(), tx(string(f.Certainty)),
			tx(f.Title), d.json(subject), d.json(facts)}
		if i, ok := at[tx(f.Fingerprint)]; ok {
			findings[i] = row
			continue
		}
		at[tx(f.Fingerprint)] = len(findings)
		findings = append(findings, row)
		seen = append(seen, tx(f.Fingerprint))
	}
	b, err := json.Marshal(seen)
	if err != nil {
		return nil, nil, "", nil, err
	}
	for i, in := range l.InputList {
		inputs = append(inputs, []any{tx(l.Bundle), i, tx(in.Path), tx(in.Format), tx(string(in.Kind)), tx(in.Node), tx(in.Layout),
			in.Records, tx(in.Skipped)})
	}
	return bundle, findings, d.json(b), inputs, nil
}

// text is s as the database keeps it: valid UTF-8, its invalid bytes
// replaced by U+FFFD as in the JSON line (so that a bundle is named alike
// in every sink), and in PostgreSQL, whose text cannot hold it, U+0000 too.
func (d *DB) text(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if d.dialect == PostgreSQL {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return s
}

// json is the JSON text js as the database keeps it: in PostgreSQL, whose
// jsonb cannot hold U+0000, its \u0000 escapes are replaced by \ufffd.
func (d *DB) json(js []byte) string {
	if d.dialect != PostgreSQL || !bytes.Contains(js, []byte(`\u0000`)) {
		return string(js)
	}
	out := make([]byte, 0, len(js))
	for i := 0; i < len(js); i++ {
		if js[i] != '\\' || i+1 == len(js) {
			out = append(out, js[i])
			continue
		}
		if bytes.HasPrefix(js[i:], []byte(`\u0000`)) {
			out = append(out, `\ufffd`...)
			i += len(`\u0000`) - 1
			continue
		}
		out = append(out, js[i], js[i+1]) // an escape: \\ is not the start of another
		i++
	}
	return string(out)
}
