//go:build fleet

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil/servers"
	"github.com/netmortem/netmortem/results"
	"github.com/netmortem/netmortem/results/sqlstore"
)

// dbLines returns the lines a results database holds, by bundle.
func dbLines(t *testing.T, driver, dsn string) map[string]results.Line {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT bundle, line FROM bundles")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	lines := map[string]results.Line{}
	for rows.Next() {
		var b, line string
		if err := rows.Scan(&b, &line); err != nil {
			t.Fatal(err)
		}
		var l results.Line
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		lines[b] = l
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// sameLine reports whether two lines of one bundle say the same, but for
// when and how long it was analyzed.
func sameLine(a, b results.Line) bool {
	a.Started, a.DurationMS = b.Started, b.DurationMS
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestBatchDB checks `batch --db` on a SQLite file and a PostgreSQL
// database: the database gets the lines --out would get, and nothing goes
// to stdout; with --out too, both get every line; --resume skips the
// bundles the database holds.
func TestBatchDB(t *testing.T) {
	stale := fixture("incidents/stale-dnat")
	jsonl := filepath.Join(t.TempDir(), "r.jsonl")
	if code, _, stderr := runCLI(t, "batch", "-q", "--out", jsonl, incident, stale); code != exitFindings {
		t.Fatalf("--out: exit %d: %s", code, stderr)
	}
	want := map[string]results.Line{}
	for _, r := range readJSONL(t, jsonl) {
		want[r.Bundle] = r.Line
	}
	for _, c := range []struct{ name, driver string }{{"sqlite", "sqlite"}, {"postgres", "pgx"}} {
		t.Run(c.name, func(t *testing.T) {
			var target, dsn string
			if c.name == "sqlite" {
				target = filepath.Join(t.TempDir(), "results.db")
				dsn = target
			} else {
				target = servers.Postgres(t).Database(t)
				dsn = target
			}
			code, stdout, stderr := runCLI(t, "batch", "-q", "--db", target, incident)
			if code != exitFindings || stdout != "" {
				t.Fatalf("--db: exit %d, stdout %q: %s", code, stdout, stderr)
			}
			got := dbLines(t, c.driver, dsn)
			if len(got) != 1 || !sameLine(got[incident], want[incident]) {
				t.Errorf("--db holds %v, want the line of %s", slices.Collect(maps.Keys(got)), incident)
			}

			out := filepath.Join(t.TempDir(), "both.jsonl")
			code, _, stderr = runCLI(t, "batch", "--resume", "--db", target, "--out", out, incident, stale)
			if code != exitFindings || !strings.Contains(stderr, "2 bundles: 2 analyzed now, 0 already done") {
				t.Errorf("--resume --db --out, a new --out: exit %d: %s", code, stderr)
			}
			if n := len(readJSONL(t, out)); n != 2 {
				t.Errorf("--out: %d lines, want 2 (the database held one, the file none)", n)
			}
			got = dbLines(t, c.driver, dsn)
			if len(got) != 2 || !sameLine(got[incident], want[incident]) || !sameLine(got[stale], want[stale]) {
				t.Errorf("--db holds %v, want the lines of %s and %s", slices.Collect(maps.Keys(got)), incident, stale)
			}

			code, stdout, stderr = runCLI(t, "batch", "--resume", "--db", target, incident, stale)
			if code != exitOK || stdout != "" || !strings.Contains(stderr, "2 bundles: 0 analyzed now, 2 already done") {
				t.Errorf("--resume --db, every bundle held: exit %d, stdout %q: %s", code, stdout, stderr)
			}
			db, err := sqlstore.Open(context.Background(), target)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if done, err := db.Done(context.Background()); err != nil || len(done) != 2 {
				t.Errorf("done %v, %v", done, err)
			}
		})
	}
}

// TestBatchDBErrors checks that a database that cannot be opened stops
// the batch before any bundle is analyzed, and that a line the database
// refuses stops it as a write error: both exit 3 with the error.
func TestBatchDBErrors(t *testing.T) {
	dir := t.TempDir()
	for _, target := range []string{filepath.Join(dir, "no", "dir", "results.db"), "mysql://host/db", "sqlite://host/x.db"} {
		code, stdout, stderr := runCLI(t, "batch", "--db", target, incident)
		if code != exitUnreadable || stdout != "" || !strings.HasPrefix(stderr, "netmortem batch: --db: ") || strings.Contains(stderr, "[1/1]") {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s", target, code, stdout, stderr)
		}
	}

	refusing := filepath.Join(dir, "refusing.db")
	db, err := sqlstore.Open(context.Background(), refusing)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", refusing)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("CREATE TRIGGER refuse BEFORE INSERT ON bundles BEGIN SELECT RAISE(ABORT, 'no more bundles'); END"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	code, _, stderr := runCLI(t, "batch", "-q", "-j", "1", "--db", refusing, incident, fixture("incidents/stale-dnat"))
	if code != exitUnreadable || !strings.Contains(stderr, "netmortem batch: writing the results to the database: "+refusing+": writing bundle ") ||
		!strings.Contains(stderr, "no more bundles") {
		t.Errorf("a refused line: exit %d: %s", code, stderr)
	}
}
