//go:build fleet

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/results"
	"github.com/netmortem/netmortem/results/sqlstore"
)

// query --db reads a SQLite database as it reads the JSON Lines of the
// same lines, and says what is wrong with one it cannot read.
func TestQueryDB(t *testing.T) {
	file := queryLines(t)
	target := filepath.Join(t.TempDir(), "results.db")
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range queryLineValues() {
		if err := db.Write(ctx, &l); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, q := range [][]string{{"rules"}, {"weeks", "--rule", "synack-reset"}, {"versions", "--since", "2026-W45"},
		{"fingerprints", "-o", "json"}, {"bundles", "fp1", "-o", "csv"}, {"bundles", "fp9"}} {
		code, want, wantErr := runCLI(t, append(append([]string{"query"}, q...), file)...)
		gotCode, got, gotErr := runCLI(t, append(append([]string{"query"}, q...), "--db", target)...)
		if gotCode != exitOK || code != exitOK || got != want || gotErr != wantErr {
			t.Errorf("query %q --db: exit %d, stderr %q:\n%s\nwant (from the file) exit %d, stderr %q:\n%s", q, gotCode, gotErr, got, code, wantErr, want)
		}
	}
	// The lines of a real batch (the examples' fixture) in a database.
	fixtureDB := filepath.Join(t.TempDir(), "incidents.db")
	db, err = sqlstore.Open(ctx, fixtureDB)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fixture("query/incidents.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var l results.Line
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if err := db.Write(ctx, &l); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, q := range [][]string{{"rules"}, {"weeks"}, {"versions", "--rule", "syn-unanswered"}, {"fingerprints", "-o", "csv"},
		{"bundles", "87e058b64faab806", "-o", "json"}, {"rules", "--since", "2026-11-24", "-o", "json"}} {
		_, want, _ := runCLI(t, append(append([]string{"query"}, q...), fixture("query/incidents.jsonl"))...)
		code, got, stderr := runCLI(t, append(append([]string{"query"}, q...), "--db", fixtureDB)...)
		if code != exitOK || got != want || want == "" {
			t.Errorf("query %q over the fixture's lines in a database: exit %d, stderr %q:\n%s\nwant (from the file):\n%s", q, code, stderr, got, want)
		}
	}

	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ db, want string }{
		{empty, "not a results database of netmortem batch"},
		{filepath.Join(t.TempDir(), "missing.db"), "no such file"},
		{"postgres://", "no host"},
	} {
		if code, _, stderr := runCLI(t, "query", "rules", "--db", tc.db); code != exitUnreadable || !strings.Contains(stderr, tc.want) {
			t.Errorf("query rules --db %s: exit %d, stderr %q; want exit %d, stderr with %q", tc.db, code, stderr, exitUnreadable, tc.want)
		}
	}
}
