package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/netmortem/netmortem/results"
)

// queryStore is the results.Store of a database: one GROUP BY query per
// method, the same SQL in both dialects but for placeholders, the
// comparison of times (timestamptz in PostgreSQL, RFC 3339 text in SQLite)
// and the byte order of bundle names (COLLATE "C" in PostgreSQL). Rows
// are sorted in Go, in the order every Store gives (results.SortRules...).
type queryStore struct {
	db    *sql.DB
	pg    bool
	close func() error
}

// severityRank is the SQL of results.SeverityRank.
const severityRank = "CASE %s WHEN 'error' THEN 3 WHEN 'warning' THEN 2 WHEN 'info' THEN 1 ELSE 0 END"

// severityName is the severity of a rank of severityRank.
var severityName = map[int]string{3: "error", 2: "warning", 1: "info"}

// query builds a statement and its arguments.
type query struct {
	pg   bool
	sql  strings.Builder
	args []any
}

// arg adds v to the arguments and returns its placeholder.
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	if q.pg {
		return fmt.Sprintf("$%d", len(q.args))
	}
	return "?"
}

func (q *query) add(format string, a ...any) { fmt.Fprintf(&q.sql, format, a...) }

// timeKey is the SQL of a bundle's time that compares as its time does:
// the column itself in PostgreSQL; in SQLite, its RFC 3339 text without
// the final Z, so that the fraction of a second (without trailing zeros)
// compares as a number, "…:05" before "…:05.5".
func (s *queryStore) timeKey(col string) string {
	if s.pg {
		return col
	}
	return fmt.Sprintf("(substr(%s, 1, 19) || rtrim(substr(%s, 20), 'Z'))", col, col)
}

// timeArg is a bound of Filter as the argument timeKey compares with.
func (s *queryStore) timeArg(t time.Time) any {
	if s.pg {
		return t.UTC()
	}
	return strings.TrimSuffix(t.UTC().Format(time.RFC3339Nano), "Z")
}

// where adds the conditions on the bundles b of f: their status (a line
// of a canceled bundle is not held) and their time.
func (s *queryStore) where(q *query, f results.Filter) {
	q.add(" WHERE b.status <> %s", q.arg(results.StatusCanceled))
	if !f.Since.IsZero() {
		q.add(" AND %s >= %s", s.timeKey("b.bundle_time"), q.arg(s.timeArg(f.Since)))
	}
	if !f.Until.IsZero() {
		q.add(" AND %s < %s", s.timeKey("b.bundle_time"), q.arg(s.timeArg(f.Until)))
	}
}

// scanTime reads a time that a query returns: a time.Time (PostgreSQL),
// a timeKey or RFC 3339 text (SQLite), or NULL (the zero time).
func (s *queryStore) scanTime(v any) (time.Time, error) {
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
	if !strings.HasSuffix(text, "Z") {
		text += "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return time.Time{}, fmt.Errorf("a bundle time: %w", err)
	}
	return t.UTC(), nil
}

func (s *queryStore) Rules(ctx context.Context, f results.Filter) ([]results.RuleCount, error) {
	q := &query{pg: s.pg}
	key := s.timeKey("b.bundle_time")
	q.add("SELECT f.rule, COUNT(DISTINCT f.bundle), COUNT(*), MAX("+severityRank+"), MIN(%s), MAX(%s)"+
		" FROM findings f JOIN bundles b ON b.bundle = f.bundle", "f.severity", key, key)
	s.where(q, f)
	if f.Rule != "" {
		q.add(" AND f.rule = %s", q.arg(f.Rule))
	}
	q.add(" GROUP BY f.rule")
	out := []results.RuleCount{}
	err := s.each(ctx, q, func(rows *sql.Rows) error {
		var r results.RuleCount
		var rank int
		var first, last any
		if err := rows.Scan(&r.Rule, &r.Bundles, &r.Findings, &rank, &first, &last); err != nil {
			return err
		}
		r.MaxSeverity = severityName[rank]
		var err error
		if r.First, err = s.scanTime(first); err != nil {
			return err
		}
		if r.Last, err = s.scanTime(last); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	results.SortRules(out)
	return out, err
}

func (s *queryStore) Weeks(ctx context.Context, f results.Filter) ([]results.GroupCount, error) {
	out, err := s.groups(ctx, "week", f)
	results.SortWeeks(out)
	return out, err
}

func (s *queryStore) Versions(ctx context.Context, f results.Filter) ([]results.GroupCount, error) {
	out, err := s.groups(ctx, "kubernetes_minor", f)
	results.SortVersions(out)
	return out, err
}

// groups counts the bundles by their column col, with those that have
// findings (of f.Rule) and how many.
func (s *queryStore) groups(ctx context.Context, col string, f results.Filter) ([]results.GroupCount, error) {
	q := &query{pg: s.pg}
	q.add("SELECT b.%s, COUNT(*), COUNT(fc.bundle), COALESCE(SUM(fc.n), 0) FROM bundles b"+
		" LEFT JOIN (SELECT bundle, COUNT(*) AS n FROM findings", col)
	if f.Rule != "" {
		q.add(" WHERE rule = %s", q.arg(f.Rule))
	}
	q.add(" GROUP BY bundle) fc ON fc.bundle = b.bundle")
	s.where(q, f)
	q.add(" GROUP BY b.%s", col)
	out := []results.GroupCount{}
	err := s.each(ctx, q, func(rows *sql.Rows) error {
		var r results.GroupCount
		if err := rows.Scan(&r.Group, &r.Bundles, &r.Matching, &r.Findings); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

func (s *queryStore) Fingerprints(ctx context.Context, f results.Filter) ([]results.FingerprintCount, error) {
	collate := ""
	if s.pg {
		collate = ` COLLATE "C"`
	}
	q := &query{pg: s.pg}
	q.add("SELECT g.fingerprint, g.n, t.rule, t.title FROM (SELECT f.fingerprint, COUNT(*) AS n, MIN(f.bundle%s) AS first"+
		" FROM findings f JOIN bundles b ON b.bundle = f.bundle", collate)
	s.where(q, f)
	if f.Rule != "" {
		q.add(" AND f.rule = %s", q.arg(f.Rule))
	}
	q.add(" GROUP BY f.fingerprint) g JOIN findings t ON t.fingerprint = g.fingerprint AND t.bundle = g.first")
	out := []results.FingerprintCount{}
	err := s.each(ctx, q, func(rows *sql.Rows) error {
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

func (s *queryStore) Bundles(ctx context.Context, fp string, f results.Filter) ([]results.BundleRef, error) {
	q := &query{pg: s.pg}
	q.add("SELECT b.bundle, f.rule, f.severity, f.title, b.bundle_time, b.kubernetes_version" +
		" FROM findings f JOIN bundles b ON b.bundle = f.bundle")
	s.where(q, f)
	q.add(" AND f.fingerprint = %s", q.arg(fp))
	if f.Rule != "" {
		q.add(" AND f.rule = %s", q.arg(f.Rule))
	}
	out := []results.BundleRef{}
	err := s.each(ctx, q, func(rows *sql.Rows) error {
		var r results.BundleRef
		var t any
		if err := rows.Scan(&r.Bundle, &r.Rule, &r.Severity, &r.Title, &t, &r.KubernetesVersion); err != nil {
			return err
		}
		var err error
		r.BundleTime, err = s.scanTime(t)
		out = append(out, r)
		return err
	})
	results.SortBundles(out)
	return out, err
}

// each runs q and calls fn on each of its rows.
func (s *queryStore) each(ctx context.Context, q *query, fn func(*sql.Rows) error) error {
	rows, err := s.db.QueryContext(ctx, q.sql.String(), q.args...)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("query: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	return nil
}

func (s *queryStore) Close() error {
	if s.close != nil {
		return s.close()
	}
	return nil
}
