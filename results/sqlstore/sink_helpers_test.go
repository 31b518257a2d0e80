package sqlstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/buildinfo"
	"github.com/netmortem/netmortem/internal/testutil/servers"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
	"github.com/netmortem/netmortem/results"
)

// eachDialect runs f on a fresh database of each dialect: a SQLite file in
// a temporary directory and a PostgreSQL database of servers.Postgres.
func eachDialect(t *testing.T, f func(t *testing.T, target string)) {
	t.Run(SQLite, func(t *testing.T) {
		f(t, filepath.Join(t.TempDir(), "results.db"))
	})
	t.Run(PostgreSQL, func(t *testing.T) {
		f(t, servers.Postgres(t).Database(t))
	})
}

func open(t *testing.T, target string) *DB {
	t.Helper()
	db, err := Open(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// query returns the rows of a query as lines of fields separated by "|".
func query(t *testing.T, db *DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.sql.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fs := make([]string, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				fs[i] = "NULL"
			case []byte:
				fs[i] = string(v)
			default:
				fs[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(fs, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// testLine is a line of bundle with n findings (fingerprints fp0, fp1,
// ...) and n inputs.
func testLine(bundle string, n int) *results.Line {
	l := &results.Line{
		SchemaVersion:     report.SchemaVersion,
		Tool:              buildinfo.Info{Name: "netmortem", Version: "v1.2.3"},
		Bundle:            bundle,
		Status:            results.StatusOK,
		Started:           time.Date(2026, 11, 24, 10, 0, 0, 123456789, time.UTC),
		DurationMS:        1234,
		BundleTime:        time.Date(2026, 11, 23, 8, 30, 0, 500000000, time.UTC),
		BundleTimeSource:  results.TimeFromCapture,
		KubernetesVersion: "v1.31.4",
		Inputs:            n,
		MaxSev:            "error",
		Findings:          []analyzer.Finding{},
		Warnings:          []report.Warning{},
		RuleErrors:        []analyzer.RuleError{},
		NWarnings:         2,
		SuppressedCount:   1,
	}
	for i := range n {
		l.Findings = append(l.Findings, analyzer.Finding{
			Rule: fmt.Sprintf("rule-%d", i%2), Fingerprint: fmt.Sprintf("fp%d", i), Severity: analyzer.Error,
			Title:   fmt.Sprintf("finding <%d> & \"quoted\" é \u2028", i),
			Facts:   map[string]any{"count": float64(i) + 0.5, "big": 1e21, "port": 8080, "list": []any{"a", 1.0}},
			Subject: map[string]string{"node": "node-1", "object": fmt.Sprintf("svc/%d", i)}, Certainty: analyzer.Proven,
			Supports: []string{"x"}, Contradicts: []string{}, Alternatives: []string{},
		})
		l.InputList = append(l.InputList, model.Input{Path: fmt.Sprintf("bundle/file-%d.txt", i), Format: "sysctl",
			Kind: "sysctl", Node: "node-1", Layout: "sosreport", Records: 10 + i})
	}
	return l
}

// helperEnv names the action a test binary run by helper takes, instead
// of running tests (see TestHelperProcess).
const helperEnv = "SQLSTORE_TEST_HELPER"

// helper starts n copies of the test binary, each running action on
// target, and waits for them all.
func helper(t *testing.T, n int, action, target string) {
	t.Helper()
	cmds := make([]*exec.Cmd, n)
	outs := make([]*strings.Builder, n)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmds[i].Env = append(os.Environ(), helperEnv+"="+action, "SQLSTORE_TEST_TARGET="+target)
		outs[i] = &strings.Builder{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("process %d (%s): %v: %s", i, action, err, outs[i])
		}
	}
}

// TestHelperProcess is the body of the processes helper starts: it opens
// the database (action "open") or also writes the bundles of
// concurrentLines (action "write").
func TestHelperProcess(t *testing.T) {
	action := os.Getenv(helperEnv)
	if action == "" {
		return // run as a test: it has nothing to check
	}
	ctx := context.Background()
	db, err := Open(ctx, os.Getenv("SQLSTORE_TEST_TARGET"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if action == "write" {
		for _, l := range concurrentLines() {
			if err := db.Write(ctx, l); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
	if err := db.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// concurrentLines are the lines the concurrent writers write: 20 bundles
// of 0 to 4 findings.
func concurrentLines() []*results.Line {
	var ls []*results.Line
	for i := range 20 {
		ls = append(ls, testLine(fmt.Sprintf("bundle-%02d", i), i%5))
	}
	return ls
}
