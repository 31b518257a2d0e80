package sqlstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil/servers"
	"github.com/netmortem/netmortem/results"
)

// dbStore writes lines to the database target through its sink, as a
// batch does, and opens it as a Store.
func dbStore(t *testing.T, target string, lines []*results.Line) results.Store {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if err := db.Write(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// OpenStore reads: it creates no file and no table, and refuses a database
// that no batch wrote or that a newer netmortem did.
func TestOpenStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	for _, target := range []string{missing, "file:" + missing, "sqlite://" + missing} {
		if _, err := OpenStore(ctx, target); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("OpenStore(%s): %v, want a not-exist error", target, err)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenStore made %s: %v", missing, err)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pgEmpty := servers.Postgres(t).Database(t)
	for _, target := range []string{empty, pgEmpty} {
		if _, err := OpenStore(ctx, target); !errors.Is(err, ErrNotResults) {
			t.Errorf("OpenStore(%s): %v, want ErrNotResults", target, err)
		}
	}
	if st, err := os.Stat(empty); err != nil || st.Size() != 0 {
		t.Errorf("OpenStore wrote to %s: %v, %d bytes", empty, err, st.Size())
	}
	eachDialect(t, func(t *testing.T, target string) {
		db := open(t, target)
		query(t, db, "INSERT INTO netmortem_migrations (version, applied_at) VALUES (99, $1)", db.timeArg(time.Now()))
		if _, err := OpenStore(ctx, target); !errors.Is(err, ErrNewerSchema) {
			t.Errorf("OpenStore(%s) of a newer schema: %v, want ErrNewerSchema", target, err)
		}
	})
}
