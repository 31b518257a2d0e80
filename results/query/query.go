// Package query answers what `netmortem query` asks of a batch's results
// (a results.Store): which rules fired in how many bundles, week by week,
// by Kubernetes version, and which bundles share a finding; and writes
// the answer as a table, JSON or CSV.
package query

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/results"
)

// The queries Ask answers.
const (
	Rules        = "rules"        // the bundles and findings of each rule
	Weeks        = "weeks"        // the bundles of each week, and those with findings
	Versions     = "versions"     // the same by Kubernetes version
	Fingerprints = "fingerprints" // the bundles that have each finding
	Bundles      = "bundles"      // the bundles that have one finding
)

// Formats are the formats Answer.Write writes.
var Formats = []string{"table", "json", "csv"}

// Open opens the Store of the database db (a SQLite file or a postgres://
// URL) when it is not "", else that of the JSON Lines files. A JSON Lines
// file given as db is named as such, with where it goes instead.
func Open(ctx context.Context, db string, files []string) (results.Store, error) {
	if db == "" {
		return results.OpenJSONL(files...)
	}
	st, err := openDB(ctx, db)
	if err != nil {
		if jsonLines(db) {
			return nil, fmt.Errorf("%s holds JSON Lines, not a database: give it with --out, as batch wrote it (netmortem query rules --out %s)", db, db)
		}
		return nil, err
	}
	return st, nil
}

// jsonLines reports whether the file path starts as a batch's JSON Lines
// do.
func jsonLines(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	return bytes.HasPrefix(bytes.TrimLeft(head[:n], " \t\r\n"), []byte(`{"`))
}

// Empty says why the answer to the query name is empty, in these results
// under f (fingerprint is that of Bundles).
func Empty(name, fingerprint string, f results.Filter) string {
	var what string
	switch {
	case name == Bundles:
		what = fmt.Sprintf("no bundle has the finding %s", fingerprint)
	case name == Rules || name == Fingerprints:
		what = "no finding"
	default:
		what = "no bundle"
	}
	var conds []string
	if f.Rule != "" && name != Weeks && name != Versions {
		conds = append(conds, "of rule "+f.Rule)
	}
	if !f.Since.IsZero() {
		conds = append(conds, "from "+f.Since.Format(time.RFC3339))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "before "+f.Until.Format(time.RFC3339))
	}
	if len(conds) > 0 {
		what += " " + strings.Join(conds, ", ")
	}
	return what + " in these results"
}

// ParseTime reads a time of a Filter's bounds: a date (2026-11-01, midnight
// UTC), an RFC 3339 time, or an ISO week (2026-W44, its Monday at
// midnight UTC); "" is the zero time.
func ParseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if y, w, ok := strings.Cut(s, "-W"); ok && len(y) == 4 && len(w) == 2 {
		year, err1 := strconv.Atoi(y)
		week, err2 := strconv.Atoi(w)
		if err1 == nil && err2 == nil && week >= 1 && week <= 53 {
			if t := isoWeekStart(year, week); results.Week(t) == s {
				return t, nil
			}
			return time.Time{}, fmt.Errorf("%q: %d has no week %d", s, year, week)
		}
	}
	return time.Time{}, fmt.Errorf("%q: want a date (2026-11-01), an RFC 3339 time (2026-11-01T08:00:00Z) or an ISO week (2026-W44)", s)
}

// isoWeekStart is the Monday, at midnight UTC, of ISO week w of year y.
func isoWeekStart(y, w int) time.Time {
	jan4 := time.Date(y, time.January, 4, 0, 0, 0, 0, time.UTC)
	monday := jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
	return monday.AddDate(0, 0, 7*(w-1))
}
