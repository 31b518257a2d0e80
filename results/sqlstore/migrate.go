package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations
var migrationFiles embed.FS

// ErrNewerSchema is returned by Open for a database migrated by a newer
// netmortem than this one: its schema may not be what this one writes.
var ErrNewerSchema = errors.New("the database has a schema newer than this netmortem knows (upgrade netmortem)")

// migration is one numbered step of a dialect's schema.
type migration struct {
	version int
	name    string // the file's name, for errors
	sql     string
}

// migrations are the numbered SQL files of dialect, in order: their names
// begin with their version ("0001_schema.sql"), from 1 without a gap.
func migrations(dialect string) ([]migration, error) {
	dir := path.Join("migrations", dialect)
	ents, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range ents {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("%s/%s: want NNNN_name.sql", dir, e.Name())
		}
		b, err := fs.ReadFile(migrationFiles, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("%s/%s: migration %d, want %d", dir, m.name, m.version, i+1)
		}
	}
	return ms, nil
}

// migrationLock is the key of the PostgreSQL advisory lock migrations
// are applied under ("netmort" in ASCII).
const migrationLock int64 = 0x6e65746d6f7274

// migrate applies the migrations db lacks, each once, in one transaction
// that holds the database's lock (pg_advisory_xact_lock in PostgreSQL, the
// write lock BEGIN IMMEDIATE takes in SQLite): processes opening one
// database at once wait for each other, and the later ones find the
// migrations applied.
func (d *DB) migrate(ctx context.Context) error {
	ms, err := migrations(d.dialect)
	if err != nil {
		return err
	}
	return d.retry(ctx, func() error {
		tx, err := d.sql.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if d.dialect == PostgreSQL {
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
				return fmt.Errorf("taking the migration lock: %w", err)
			}
		}
		applied := "applied_at TEXT NOT NULL"
		if d.dialect == PostgreSQL {
			applied = "applied_at timestamptz NOT NULL"
		}
		if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS netmortem_migrations (version INT PRIMARY KEY, "+applied+")"); err != nil {
			return fmt.Errorf("creating netmortem_migrations: %w", err)
		}
		var cur sql.NullInt64
		if err := tx.QueryRowContext(ctx, "SELECT max(version) FROM netmortem_migrations").Scan(&cur); err != nil {
			return fmt.Errorf("reading netmortem_migrations: %w", err)
		}
		if int(cur.Int64) > len(ms) {
			return fmt.Errorf("%w: migration %d applied, this netmortem knows %d", ErrNewerSchema, cur.Int64, len(ms))
		}
		for _, m := range ms[cur.Int64:] {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO netmortem_migrations (version, applied_at) VALUES ($1, $2)",
				m.version, d.timeArg(time.Now())); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
		}
		return tx.Commit()
	})
}

// Version is the schema version of the database: the last migration
// applied.
func (d *DB) Version(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := d.sql.QueryRowContext(ctx, "SELECT max(version) FROM netmortem_migrations").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", d.name, err)
	}
	return int(v.Int64), nil
}
