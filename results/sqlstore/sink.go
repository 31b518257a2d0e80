// Package sqlstore keeps the lines of `netmortem batch` in a database,
// SQLite (a file, through the pure-Go modernc.org/sqlite) or PostgreSQL
// (through github.com/jackc/pgx), and answers `netmortem query` from it. A
// DB is a results.Sink: the shards of a batch, processes on several
// machines, write one database at once, each bundle in one transaction.
// The schema (docs/fleet.md, "Results in a database") is created and
// upgraded by numbered migrations, embedded per dialect and applied by Open.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/netmortem/netmortem/results"
)

// DB is a results database. It is safe for concurrent use.
type DB struct {
	sql     *sql.DB
	dialect string // SQLite or PostgreSQL
	name    string // the target, without a password, for errors
}

var _ results.Sink = (*DB)(nil)

// Open opens the results database target and brings its schema up to date
// (see parseTarget for the forms of target): a path or sqlite:///abs/path
// or file:path is a SQLite file, created when missing; postgres:// or
// postgresql:// is a PostgreSQL database, which must exist. A database
// whose schema is newer than this netmortem's is refused (ErrNewerSchema).
func Open(ctx context.Context, target string) (*DB, error) {
	t, err := parseTarget(target)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(t.driver, t.dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	d := &DB{sql: db, dialect: t.dialect, name: t.name}
	if err := d.retry(ctx, func() error { return db.PingContext(ctx) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	if err := d.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	return d, nil
}

// Dialect is SQLite or PostgreSQL.
func (d *DB) Dialect() string { return d.dialect }

// Name is the database as errors name it: its path, or its URL without the
// password.
func (d *DB) Name() string { return d.name }

// Close closes the database.
func (d *DB) Close() error { return d.sql.Close() }

// Done returns the bundles the database holds whose status is not
// canceled.
func (d *DB) Done(ctx context.Context) (map[string]bool, error) {
	done := map[string]bool{}
	err := d.retry(ctx, func() error {
		clear(done)
		rows, err := d.sql.QueryContext(ctx, "SELECT bundle FROM bundles WHERE status <> $1", results.StatusCanceled)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b string
			if err := rows.Scan(&b); err != nil {
				return err
			}
			done[b] = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	return done, nil
}

// retry runs f until it succeeds, fails for a reason other than contention
// (a PostgreSQL serialization failure or deadlock, SQLite busy or locked),
// or ctx ends; it waits longer after each failure, up to a second, with
// jitter, so that writers that collided do not collide again.
func (d *DB) retry(ctx context.Context, f func() error) error {
	wait := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil || !retryable(err) || attempt == maxAttempts {
			return err
		}
		t := time.NewTimer(wait/2 + rand.N(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// maxAttempts bounds retry: with the waits, about a minute of contention.
const maxAttempts = 60

// retryable reports an error that running the transaction again may not
// meet.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return true
		}
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	return false
}

// timeText is how SQLite keeps a time: RFC 3339 in UTC with nine digits of
// fraction, so that times sort as text as they do in time.
const timeText = "2006-01-02T15:04:05.000000000Z07:00"

// timeArg is t as the dialect keeps it.
func (d *DB) timeArg(t time.Time) any {
	if d.dialect == SQLite {
		return t.UTC().Format(timeText)
	}
	return t.UTC()
}

// nullTimeArg is timeArg(t), or nil (NULL) for the zero time.
func (d *DB) nullTimeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return d.timeArg(t)
}
