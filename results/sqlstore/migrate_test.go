package sqlstore

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMigrate checks the migrations: a fresh database gets every one, a
// database opened again gets none twice, and a database with a migration
// this netmortem does not know is refused.
func TestMigrate(t *testing.T) {
	ms, err := migrations(SQLite)
	if err != nil {
		t.Fatal(err)
	}
	pms, err := migrations(PostgreSQL)
	if err != nil || len(pms) != len(ms) || len(ms) == 0 {
		t.Fatalf("%d SQLite and %d PostgreSQL migrations (%v): want the same number, and some", len(ms), len(pms), err)
	}
	eachDialect(t, func(t *testing.T, target string) {
		ctx := context.Background()
		for range 2 {
			db := open(t, target)
			if v, err := db.Version(ctx); err != nil || v != len(ms) {
				t.Errorf("version %d, %v; want %d", v, err, len(ms))
			}
			if got := query(t, db, "SELECT count(*), count(DISTINCT version) FROM netmortem_migrations"); !slices.Equal(got, []string{"1|1"}) {
				t.Errorf("migrations rows: %q, want 1|1", got)
			}
			for _, table := range []string{"bundles", "findings", "inputs"} {
				if got := query(t, db, "SELECT count(*) FROM "+table); !slices.Equal(got, []string{"0"}) {
					t.Errorf("%s: %q rows", table, got)
				}
			}
			db.Close()
		}

		db := open(t, target)
		query(t, db, "INSERT INTO netmortem_migrations (version, applied_at) VALUES ($1, $2)", len(ms)+1, db.timeArg(time.Now()))
		db.Close()
		_, err := Open(ctx, target)
		if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "migration 2 applied, this netmortem knows 1") {
			t.Errorf("newer schema: %v", err)
		}
	})
}

// TestMigrateConcurrently checks that four processes opening one fresh
// database at once all succeed, and apply each migration once.
func TestMigrateConcurrently(t *testing.T) {
	eachDialect(t, func(t *testing.T, target string) {
		helper(t, 4, "open", target)
		db := open(t, target)
		if got := query(t, db, "SELECT version, count(*) FROM netmortem_migrations GROUP BY version"); !slices.Equal(got, []string{"1|1"}) {
			t.Errorf("migrations rows: %q, want 1|1", got)
		}
	})
}

// TestOpenErrors checks what Open says of a database it cannot use.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for target, want := range map[string]string{
		dir + "/no/such/dir/results.db":           "no/such/dir/results.db: ",
		"sqlite://" + dir + "/no/such/results.db": "no/such/results.db: ",
		"postgres://u:secret@127.0.0.1:1/db":      "postgres://u:xxxxx@127.0.0.1:1/db: ",
		"mysql://u:secret@host/db":                `unknown database scheme "mysql"`,
	} {
		db, err := Open(ctx, target)
		if err == nil {
			db.Close()
			t.Errorf("%s: no error", target)
			continue
		}
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %v, want %q and no password", target, err, want)
		}
	}
	notDB := dir + "/results.jsonl"
	if err := os.WriteFile(notDB, []byte("{\"bundle\":\"a\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, notDB); err == nil || !strings.Contains(err.Error(), notDB) {
		t.Errorf("a file that is not a database: %v", err)
	}
}
