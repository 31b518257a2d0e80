package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/netmortem/netmortem/results"
)

// A DB is the results.Store of `netmortem query` too: one GROUP BY query
// per method, the same SQL in both dialects but for placeholders and the
// byte order of bundle names (COLLATE "C" in PostgreSQL); times compare as
// they are kept (timeArg: timestamptz, or text that sorts as time). Rows
// are sorted in Go, in the order every Store gives them (results.SortRules
// and the others), so that a DB and a JSON Lines file answer alike.
var _ results.Store = (*DB)(nil)

// severityRank is the SQL of results.SeverityRank.
const severityRank = "CASE %s WHEN 'error' THEN 3 WHEN 'warning' THEN 2 WHEN 'info' THEN 1 ELSE 0 END"

// severityName is the severity of a rank of severityRank.
var severityName = map[int]string{3: "error", 2: "warning", 1: "info"}

// stmt builds a statement and its arguments.
type stmt struct {
	pg   bool
	sql  strings.Builder
	args []any
}

// arg adds v to the arguments and returns its placeholder.
func (q *stmt) arg(v any) string {
	q.args = append(q.args, v)
	if q.pg {
		return fmt.Sprintf("$%d", len(q.args))
	}
	return "?"
}

func (q *stmt) add(format string, a ...any) { fmt.Fprintf(&q.sql, format, a...) }

// where adds the conditions on the bundles b of f: their status (a line
// of a canceled bundle is not held) and their time.
func (d *DB) where(q *stmt, f results.Filter) {
	q.add(" WHERE b.status <> %s", q.arg(results.StatusCanceled))
	if !f.Since.IsZero() {
		q.add(" AND b.bundle_time >= %s", q.arg(d.timeArg(f.Since)))
	}
	if !f.Until.IsZero() {
		q.add(" AND b.bundle_time < %s", q.arg(d.timeArg(f.Until)))
	}
}

// scanTime reads a time that a query returns: a time.Time (PostgreSQL),
// RFC 3339 text (SQLite, timeText), or NULL (the zero time).
func (d *DB) scanTime(v any) (time.Time, error) {
	var text string
	switch v := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return v.UTC(), nil
	case string:
		text = v
	case []byte:
		text = string(v)
	default:
		return time.Time{}, fmt.Errorf("a time of type %T", v)
	}
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return time.Time{}, fmt.Errorf("a bundle time: %w", err)
	}
	return t.UTC(), nil
}

func (d *DB) Rules(ctx context.Context, f results.Filter) ([]results.RuleCount, error) {
	q := &stmt{pg: d.dialect == PostgreSQL}
	q.add("SELECT f.rule, COUNT(DISTINCT f.bundle), COUNT(*), MAX("+severityRank+"), MIN(b.bundle_time), MAX(b.bundle_time)"+
		" FROM findings f JOIN bundles b ON b.bundle = f.bundle", "f.severity")
	d.where(q, f)
	if f.Rule != "" {
		q.add(" AND f.rule = %s", q.arg(f.Rule))
	}
	q.add(" GROUP BY f.rule")
	out := []results.RuleCount{}
	err := d.each(ctx, q, func(rows *sql.Rows) error {
		var r results.RuleCount
		var rank int
		var first, last any
		if err := rows.Scan(&r.Rule, &r.Bundles, &r.Findings, &rank, &first, &last); err != nil {
			return err
		}
		r.MaxSeverity = severityName[rank]
		var err error
		if r.First, err = d.scanTime(first); err != nil {
			return err
		}
		if r.Last, err = d.scanTime(last); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	results.SortRules(out)
	return out, err
}

func (d *DB) Weeks(ctx context.Context, f results.Filter) ([]results.GroupCount, error) {
	out, err := d.groups(ctx, "week", f)
	results.SortWeeks(out)
	return out, err
}

func (d *DB) Versions(ctx context.Context, f results.Filter) ([]results.GroupCount, error) {
	out, err := d.groups(ctx, "kubernetes_minor", f)
	results.SortVersions(out)
	return out, err
}

// groups counts the bundles by their column col, with those that have
// findings (of f.Rule) and how many, and those incomplete.
func (d *DB) groups(ctx context.Context, col string, f results.Filter) ([]results.GroupCount, error) {
	q := &stmt{pg: d.dialect == PostgreSQL}
	q.add("SELECT b.%s, COUNT(*), COUNT(fc.bundle), COALESCE(SUM(fc.n), 0), ", col)
	q.add("COALESCE(SUM(CASE WHEN b.status = %s THEN 1 ELSE 0 END), 0) FROM bundles b", q.arg(results.StatusIncomplete))
	q.add(" LEFT JOIN (SELECT bundle, COUNT(*) AS n FROM findings")
	if f.Rule != "" {
		q.add(" WHERE rule = %s", q.arg(f.Rule))
	}
	q.add(" GROUP BY bundle) fc ON fc.bundle = b.bundle")
	d.where(q, f)
	q.add(" GROUP BY b.%s", col)
	out := []results.GroupCount{}
	err := d.each(ctx, q, func(rows *sql.Rows) error {
		var r results.GroupCount
		if err := rows.Scan(&r.Group, &r.Bundles, &r.Matching, &r.Findings, &r.Incomplete); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

func (d *DB) Fingerprints(ctx context.Context, f results.Filter) ([]results.FingerprintCount, error) {
	collate := ""
	if d.dialect == PostgreSQL {
		collate = ` COLLATE "C"`
	}
	q := &stmt{pg: d.dialect == PostgreSQL}
	q.add("SELECT g.fingerprint, g.n, t.rule, t.title FROM (SELECT f.fingerprint, COUNT(*) AS n, MIN(f.bundle%s) AS first"+
		" FROM findings f JOIN bundles b ON b.bundle = f.bundle", collate)
	d.where(q, f)
	if f.Rule != "" {
		q.add(" AND f.rule = %s", q.arg(f.Rule))
	}
	q.add(" GROUP BY f.fingerprint) g JOIN findings t ON t.fingerprint = g.fingerprint AND t.bundle = g.first")
	out := []results.FingerprintCount{}
	err := d.each(ctx, q, func(rows *sql.Rows) error {
		var r results.FingerprintCount
		if err := rows.Scan(&r.Fingerprint, &r.Bundles, &r.Rule, &r.Title); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	results.SortFingerprints(out)
	return out, err
}

func (d *DB) Bundles(ctx context.Context, fp string, f results.Filter) ([]results.BundleRef, error) {
	q := &stmt{pg: d.dialect == PostgreSQL}
	q.add("SELECT b.bundle, f.rule, f.severity, f.title, b.bundle_time, b.kubernetes_version" +
		" FROM findings f JOIN bundles b ON b.bundle = f.bundle")
	d.where(q, f)
	q.add(" AND f.fingerprint = %s", q.arg(fp))
	if f.Rule != "" {
		q.add(" AND f.rule = %s", q.arg(f.Rule))
	}
	out := []results.BundleRef{}
	err := d.each(ctx, q, func(rows *sql.Rows) error {
		var r results.BundleRef
		var t any
		if err := rows.Scan(&r.Bundle, &r.Rule, &r.Severity, &r.Title, &t, &r.KubernetesVersion); err != nil {
			return err
		}
		var err error
		r.BundleTime, err = d.scanTime(t)
		out = append(out, r)
		return err
	})
	results.SortBundles(out)
	return out, err
}

// each runs q and calls fn on each of its rows.
func (d *DB) each(ctx context.Context, q *stmt, fn func(*sql.Rows) error) error {
	rows, err := d.sql.QueryContext(ctx, q.sql.String(), q.args...)
	if err != nil {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	return nil
}
