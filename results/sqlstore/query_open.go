package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	_ "modernc.org/sqlite"             // the "sqlite" driver

	"github.com/netmortem/netmortem/results"
)

// OpenStore opens the database of a batch's sink for `netmortem query`:
// target is a PostgreSQL URL (postgres://, postgresql://) or the path of a
// SQLite file. It only reads: a SQLite file is opened read-only, and a
// database that a batch has not written (without netmortem's tables) is
// an error, as is a file that does not exist.
func OpenStore(ctx context.Context, target string) (results.Store, error) {
	pg := strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
	driver, dsn := "pgx", target
	if !pg {
		if _, err := os.Stat(target); err != nil {
			return nil, err
		}
		driver = "sqlite"
		dsn = "file:" + (&url.URL{Path: target}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(target), err)
	}
	if err := checkTables(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", redact(target), err)
	}
	return &queryStore{db: db, pg: pg, close: db.Close}, nil
}

// errNotResults is a database without the tables of a batch's sink.
var errNotResults = errors.New("not a database of netmortem batch (no bundles and findings tables)")

// checkTables checks that db can be read and has the tables queries read.
func checkTables(ctx context.Context, db *sql.DB) error {
	for _, table := range []string{"bundles", "findings"} {
		var n int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT 1 FROM "+table+" LIMIT 1) t").Scan(&n)
		if err != nil {
			if isMissingTable(err) {
				return errNotResults
			}
			return err
		}
	}
	return nil
}

// isMissingTable says whether err is a query's error for a table that
// does not exist.
func isMissingTable(err error) bool {
	s := err.Error()
	return strings.Contains(s, "no such table") || strings.Contains(s, "SQLSTATE 42P01")
}

// redact is target without the password of its URL.
func redact(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.User == nil {
		return target
	}
	return u.Redacted()
}
