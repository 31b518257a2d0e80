package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// ErrNotResults is returned by OpenStore for a database that no batch has
// written: it lacks netmortem's tables.
var ErrNotResults = errors.New("not a results database of netmortem batch (no netmortem_migrations table)")

// OpenStore opens the results database target (the forms of Open) for
// `netmortem query`, to read it: unlike Open, it creates nothing and
// applies no migration. A SQLite file that does not exist, a database
// without netmortem's tables (ErrNotResults) and one whose schema is newer
// than this netmortem's (ErrNewerSchema) are errors.
func OpenStore(ctx context.Context, target string) (*DB, error) {
	t, err := parseTarget(target)
	if err != nil {
		return nil, err
	}
	if t.dialect == SQLite {
		if path := sqliteFile(target); path != "" {
			if _, err := os.Stat(path); err != nil {
				return nil, err
			}
			// Read-only: not even the journal mode is set.
			t.dsn = "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(10000)"
		}
	}
	db, err := sql.Open(t.driver, t.dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	d := &DB{sql: db, dialect: t.dialect, name: t.name}
	if err := d.checkSchema(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	return d, nil
}

// sqliteFile is the path of the SQLite file of target: the target itself,
// or the path of its sqlite:// or file: URL; "" when it cannot tell.
func sqliteFile(target string) string {
	scheme, rest, ok := strings.Cut(target, ":")
	switch {
	case !ok || len(scheme) == 1 || strings.ContainsAny(scheme, `/\. `):
		return target
	case strings.EqualFold(scheme, "file"):
		path, _, _ := strings.Cut(rest, "?")
		if p, err := url.PathUnescape(path); err == nil {
			return p
		}
	case strings.EqualFold(scheme, "sqlite") || strings.EqualFold(scheme, "sqlite3"):
		if u, err := url.Parse(target); err == nil {
			return u.Path
		}
	}
	return ""
}

// checkSchema checks that d was written by a batch whose schema this
// netmortem reads.
func (d *DB) checkSchema(ctx context.Context) error {
	var v sql.NullInt64
	err := d.retry(ctx, func() error {
		return d.sql.QueryRowContext(ctx, "SELECT max(version) FROM netmortem_migrations").Scan(&v)
	})
	if err != nil {
		if isMissingTable(err) {
			return ErrNotResults
		}
		return err
	}
	ms, err := migrations(d.dialect)
	if err != nil {
		return err
	}
	switch {
	case !v.Valid || v.Int64 == 0:
		return ErrNotResults
	case int(v.Int64) > len(ms):
		return fmt.Errorf("%w: migration %d applied, this netmortem knows %d", ErrNewerSchema, v.Int64, len(ms))
	}
	return nil
}

// isMissingTable says whether err is a query's error for a table that
// does not exist (SQLite's message, PostgreSQL's SQLSTATE 42P01).
func isMissingTable(err error) bool {
	s := err.Error()
	return strings.Contains(s, "no such table") || strings.Contains(s, "SQLSTATE 42P01")
}
