package sqlstore

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The dialects of a results database.
const (
	// SQLite is a database file, through modernc.org/sqlite (pure Go).
	SQLite = "sqlite"
	// PostgreSQL is a PostgreSQL server, through github.com/jackc/pgx.
	PostgreSQL = "postgres"
)

// target is a parsed Open target.
type target struct {
	dialect string
	driver  string // the database/sql driver
	dsn     string // what the driver opens
	name    string // how errors name the database: a path, or a URL without its password
}

// sqlitePragmas are the settings of every SQLite connection: wait up to ten
// seconds for a lock before SQLITE_BUSY, write-ahead logging (readers do
// not block the writer), foreign keys enforced (ON DELETE CASCADE), and
// transactions that take the write lock as they begin (BEGIN IMMEDIATE), so
// that two writers never deadlock upgrading a read lock.
const sqlitePragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"

// parseTarget reads the target of Open:
//
//	results.db, ./dir/results.db, /abs/results.db      a SQLite file
//	sqlite:///abs/results.db                           a SQLite file, by URL
//	file:results.db?mode=rw                            a SQLite URI filename
//	postgres://user:pass@host:5432/db?sslmode=disable  a PostgreSQL database
//	postgresql://...                                   the same
func parseTarget(s string) (target, error) {
	if s == "" {
		return target{}, errors.New("empty database target: want a SQLite file (results.db, sqlite:///abs/path, file:path) or a postgres:// URL")
	}
	scheme, rest, hasScheme := strings.Cut(s, ":")
	if !hasScheme || len(scheme) == 1 || strings.ContainsAny(scheme, `/\. `) {
		// A path: "results.db", "./a:b.db", "C:\results.db".
		return sqlitePath(s, s), nil
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		u, err := url.Parse(s)
		if err != nil {
			return target{}, fmt.Errorf("%s: %w", redact(s), unwrapURLError(err))
		}
		if u.Host == "" && u.Query().Get("host") == "" {
			return target{}, fmt.Errorf("%s: no host: want postgres://[user[:password]@]host[:port]/database", redact(s))
		}
		return target{dialect: PostgreSQL, driver: "pgx", dsn: s, name: redact(s)}, nil
	case "sqlite", "sqlite3":
		if !strings.HasPrefix(rest, "//") {
			return target{}, fmt.Errorf("%s: want sqlite:///absolute/path (three slashes), or the path alone", s)
		}
		u, err := url.Parse(s)
		if err != nil {
			return target{}, fmt.Errorf("%s: %w", s, unwrapURLError(err))
		}
		if u.Host != "" {
			return target{}, fmt.Errorf("%s: a host (%q) in a sqlite URL: want sqlite:///absolute/path (three slashes), or the path alone", s, u.Host)
		}
		if u.Path == "" || u.Path == "/" {
			return target{}, fmt.Errorf("%s: no path: want sqlite:///absolute/path", s)
		}
		if u.RawQuery != "" {
			return target{}, fmt.Errorf("%s: a query in a sqlite URL: give the options in a file: URI (file:/path?mode=rw)", s)
		}
		return sqlitePath(u.Path, s), nil
	case "file":
		path, query, _ := strings.Cut(rest, "?")
		if path == "" || path == "//" || path == "///" {
			return target{}, fmt.Errorf("%s: no path: want file:path", s)
		}
		if query != "" {
			query += "&"
		}
		return target{dialect: SQLite, driver: "sqlite", dsn: "file:" + path + "?" + query + sqlitePragmas, name: s}, nil
	}
	return target{}, fmt.Errorf("%s: unknown database scheme %q: want a SQLite file (results.db, sqlite:///abs/path, file:path) or a postgres:// URL", redact(s), scheme)
}

// sqlitePath is the target of the SQLite file at path, as a URI filename
// (its ?, # and % escaped).
func sqlitePath(path, name string) target {
	p := (&url.URL{Path: path}).EscapedPath()
	if strings.HasPrefix(p, "/") {
		p = "//" + p // an empty authority: "//tmp/x" is not a host
	}
	return target{dialect: SQLite, driver: "sqlite", dsn: "file:" + p + "?" + sqlitePragmas, name: name}
}

// redact hides the password of a URL that parses; any other string is
// returned as it is, but for what is between its :// and its last @.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil {
		if _, has := u.User.Password(); has {
			return u.Redacted()
		}
		return s
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			return s[:j+3] + "xxxxx" + s[i:]
		}
	}
	return s
}

// unwrapURLError drops the URL, with its password, from a url.Parse error.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
