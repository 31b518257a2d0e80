package sqlstore

import (
	"strings"
	"testing"
)

// TestParseTarget checks the forms of a database target, and what is said
// of bad ones.
func TestParseTarget(t *testing.T) {
	const pragmas = "?" + sqlitePragmas
	for in, want := range map[string]target{
		"results.db":                   {SQLite, "sqlite", "file:results.db" + pragmas, "results.db"},
		"./out/results.db":             {SQLite, "sqlite", "file:./out/results.db" + pragmas, "./out/results.db"},
		"/abs/results.db":              {SQLite, "sqlite", "file:///abs/results.db" + pragmas, "/abs/results.db"},
		"a:b.db":                       {SQLite, "sqlite", "file:a:b.db" + pragmas, "a:b.db"},
		"dir.d:x/r.db":                 {SQLite, "sqlite", "file:dir.d:x/r.db" + pragmas, "dir.d:x/r.db"},
		"C:\\results.db":               {SQLite, "sqlite", "file:C:%5Cresults.db" + pragmas, "C:\\results.db"},
		"odd ?#%.db":                   {SQLite, "sqlite", "file:odd%20%3F%23%25.db" + pragmas, "odd ?#%.db"},
		"sqlite:///abs/results.db":     {SQLite, "sqlite", "file:///abs/results.db" + pragmas, "sqlite:///abs/results.db"},
		"sqlite:///abs/a%20b.db":       {SQLite, "sqlite", "file:///abs/a%20b.db" + pragmas, "sqlite:///abs/a%20b.db"},
		"file:results.db":              {SQLite, "sqlite", "file:results.db" + pragmas, "file:results.db"},
		"file:/abs/r.db?mode=ro":       {SQLite, "sqlite", "file:/abs/r.db?mode=ro&" + sqlitePragmas, "file:/abs/r.db?mode=ro"},
		"postgres://h/db":              {PostgreSQL, "pgx", "postgres://h/db", "postgres://h/db"},
		"postgresql://u:pw@h:5/db?x=1": {PostgreSQL, "pgx", "postgresql://u:pw@h:5/db?x=1", "postgresql://u:xxxxx@h:5/db?x=1"},
		"postgres:///db?host=/run/pg":  {PostgreSQL, "pgx", "postgres:///db?host=/run/pg", "postgres:///db?host=/run/pg"},
	} {
		got, err := parseTarget(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                         "empty database target",
		"sqlite:results.db":        "sqlite:results.db: want sqlite:///absolute/path (three slashes)",
		"sqlite://host/results.db": `sqlite://host/results.db: a host ("host") in a sqlite URL`,
		"sqlite://":                "sqlite://: no path",
		"sqlite:///":               "sqlite:///: no path",
		"sqlite:///r.db?mode=ro":   "a query in a sqlite URL",
		"sqlite:///r%zz.db":        `sqlite:///r%zz.db: invalid URL escape "%zz"`,
		"file:":                    "file:: no path",
		"file:?mode=ro":            "no path",
		"postgres://":              "postgres://: no host",
		"postgres:///db":           "no host",
		"postgres://u:pw@h:x/db":   `postgres://xxxxx@h:x/db: invalid port ":x" after host`,
		"mysql://u:pw@h/db":        `mysql://u:xxxxx@h/db: unknown database scheme "mysql"`,
		"s3://bucket/results.db":   `unknown database scheme "s3"`,
	} {
		got, err := parseTarget(in)
		if err == nil {
			t.Errorf("%q: %+v, want an error", in, got)
			continue
		}
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "pw") {
			t.Errorf("%q: %v, want %q and no password", in, err, want)
		}
	}
}
