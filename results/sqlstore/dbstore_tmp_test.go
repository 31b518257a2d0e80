package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/results"
)

func dbStore(t *testing.T, target string, lines []*results.Line) results.Store {
	t.Helper()
	pg := strings.HasPrefix(target, "postgres://")
	driver, ts := "sqlite", "TEXT"
	if pg {
		driver, ts = "pgx", "timestamptz"
	}
	db, err := sql.Open(driver, target)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"CREATE TABLE bundles(bundle TEXT PRIMARY KEY, status TEXT NOT NULL, bundle_time " + ts + ", week TEXT NOT NULL, kubernetes_version TEXT NOT NULL, kubernetes_minor TEXT NOT NULL)",
		"CREATE TABLE findings(bundle TEXT NOT NULL REFERENCES bundles(bundle) ON DELETE CASCADE, fingerprint TEXT NOT NULL, rule TEXT NOT NULL, severity TEXT NOT NULL, title TEXT NOT NULL, PRIMARY KEY(bundle, fingerprint))",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	ph := func(i int) string {
		if pg {
			return "$" + string(rune('0'+i))
		}
		return "?"
	}
	for _, l := range lines {
		var bt any
		if !l.BundleTime.IsZero() {
			if pg {
				bt = l.BundleTime
			} else {
				bt = l.BundleTime.UTC().Format(time.RFC3339Nano)
			}
		}
		if _, err := db.Exec("DELETE FROM findings WHERE bundle = "+ph(1), l.Bundle); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("DELETE FROM bundles WHERE bundle = "+ph(1), l.Bundle); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("INSERT INTO bundles VALUES ("+ph(1)+","+ph(2)+","+ph(3)+","+ph(4)+","+ph(5)+","+ph(6)+")",
			l.Bundle, l.Status, bt, results.Week(l.BundleTime), l.KubernetesVersion, results.MinorVersion(l.KubernetesVersion)); err != nil {
			t.Fatal(err)
		}
		for _, f := range l.Findings {
			if _, err := db.Exec("INSERT INTO findings VALUES ("+ph(1)+","+ph(2)+","+ph(3)+","+ph(4)+","+ph(5)+") ON CONFLICT (bundle, fingerprint) DO UPDATE SET rule = excluded.rule, severity = excluded.severity, title = excluded.title",
				l.Bundle, f.Fingerprint, f.Rule, f.Severity.String(), f.Title); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
