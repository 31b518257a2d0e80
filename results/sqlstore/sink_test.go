package sqlstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netmortem/netmortem/results"
)

// TestWriteRoundTrip checks the rows of a written line: the line column is
// the JSON line (byte for byte once read back and marshaled again), and
// the other columns, the findings and the inputs are those of the line.
func TestWriteRoundTrip(t *testing.T) {
	eachDialect(t, func(t *testing.T, target string) {
		db := open(t, target)
		ctx := context.Background()
		l := testLine("tickets/a b?#%.tar.gz", 3)
		unknown := testLine("tickets/unknown.tar.gz", 0)
		unknown.BundleTime, unknown.BundleTimeSource, unknown.KubernetesVersion, unknown.MaxSev = time.Time{}, "", "", ""
		for _, l := range []*results.Line{l, unknown} {
			if err := db.Write(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		want, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		got := query(t, db, "SELECT line FROM bundles WHERE bundle = $1", l.Bundle)
		if len(got) != 1 {
			t.Fatalf("%d rows", len(got))
		}
		var back results.Line
		if err := json.Unmarshal([]byte(got[0]), &back); err != nil {
			t.Fatal(err)
		}
		again, err := json.Marshal(&back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, want) {
			t.Errorf("line column, marshaled again:\n%s\nwant\n%s", again, want)
		}

		cols := "status, error, duration_ms, bundle_time_source, week, kubernetes_version, kubernetes_minor, inputs, skipped, " +
			"max_severity, warning_count, suppressed_count, tool_version, schema_version"
		rows := query(t, db, "SELECT "+cols+" FROM bundles ORDER BY bundle")
		wantRows := []string{
			"ok||1234|capture|2026-W48|v1.31.4|1.31|3|0|error|2|1|v1.2.3|" + l.SchemaVersion,
			"ok||1234||unknown||unknown|0|0||2|1|v1.2.3|" + l.SchemaVersion,
		}
		if !slices.Equal(rows, wantRows) {
			t.Errorf("bundles rows:\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
		}
		if got := query(t, db, "SELECT bundle FROM bundles WHERE bundle_time IS NULL"); !slices.Equal(got, []string{unknown.Bundle}) {
			t.Errorf("bundles without a time: %q, want %s alone", got, unknown.Bundle)
		}

		rows = query(t, db, "SELECT fingerprint, rule, severity, certainty, title FROM findings WHERE bundle = $1 ORDER BY fingerprint", l.Bundle)
		var wantF []string
		for _, f := range l.Findings {
			wantF = append(wantF, strings.Join([]string{f.Fingerprint, f.Rule, "error", "proven", f.Title}, "|"))
		}
		if !slices.Equal(rows, wantF) {
			t.Errorf("findings rows:\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(wantF, "\n"))
		}
		for _, col := range []string{"subject", "facts"} {
			js := query(t, db, "SELECT "+col+" FROM findings WHERE bundle = $1 AND fingerprint = 'fp2'", l.Bundle)
			var v, w any
			if err := json.Unmarshal([]byte(js[0]), &v); err != nil {
				t.Fatalf("%s: %v", col, err)
			}
			b, _ := json.Marshal(map[string]any{"subject": l.Findings[2].Subject, "facts": l.Findings[2].Facts}[col])
			json.Unmarshal(b, &w)
			if fmt.Sprint(v) != fmt.Sprint(w) {
				t.Errorf("%s: %v, want %v", col, v, w)
			}
		}
		rows = query(t, db, "SELECT seq, path, format, kind, node, layout, records, skipped FROM inputs WHERE bundle = $1 ORDER BY seq", l.Bundle)
		var wantI []string
		for i, in := range l.InputList {
			wantI = append(wantI, fmt.Sprintf("%d|%s|%s|%s|%s|%s|%d|", i, in.Path, in.Format, in.Kind, in.Node, in.Layout, in.Records))
		}
		if !slices.Equal(rows, wantI) {
			t.Errorf("inputs rows:\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(wantI, "\n"))
		}
	})
}

// TestRewrite checks that a line written again replaces the rows of its
// bundle: written twice, nothing is duplicated; written with a finding and
// an input fewer, their rows go.
func TestRewrite(t *testing.T) {
	eachDialect(t, func(t *testing.T, target string) {
		db := open(t, target)
		ctx := context.Background()
		other := testLine("other", 2)
		l := testLine("b", 3)
		for _, l := range []*results.Line{other, l, l} {
			if err := db.Write(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		counts := func() []string {
			return query(t, db, "SELECT b.bundle, (SELECT count(*) FROM findings f WHERE f.bundle = b.bundle), "+
				"(SELECT count(*) FROM inputs i WHERE i.bundle = b.bundle) FROM bundles b ORDER BY b.bundle")
		}
		if got, want := counts(), []string{"b|3|3", "other|2|2"}; !slices.Equal(got, want) {
			t.Errorf("written twice: %q, want %q", got, want)
		}
		fewer := testLine("b", 3)
		fewer.Findings = slices.Delete(fewer.Findings, 1, 2) // fp1 goes
		fewer.Findings[0].Title = "a new title"
		fewer.InputList = fewer.InputList[:2]
		fewer.Status, fewer.Error = results.StatusUnreadable, "1 capture could not be read"
		if err := db.Write(ctx, fewer); err != nil {
			t.Fatal(err)
		}
		if got, want := counts(), []string{"b|2|2", "other|2|2"}; !slices.Equal(got, want) {
			t.Errorf("with one finding and one input fewer: %q, want %q", got, want)
		}
		if got, want := query(t, db, "SELECT fingerprint, title FROM findings WHERE bundle = 'b' ORDER BY fingerprint"),
			[]string{"fp0|a new title", "fp2|" + fewer.Findings[1].Title}; !slices.Equal(got, want) {
			t.Errorf("findings %q, want %q", got, want)
		}
		if got, want := query(t, db, "SELECT status, error FROM bundles WHERE bundle = 'b'"),
			[]string{"unreadable|1 capture could not be read"}; !slices.Equal(got, want) {
			t.Errorf("bundle %q, want %q", got, want)
		}
		none := testLine("b", 0)
		if err := db.Write(ctx, none); err != nil {
			t.Fatal(err)
		}
		if got, want := counts(), []string{"b|0|0", "other|2|2"}; !slices.Equal(got, want) {
			t.Errorf("with no finding: %q, want %q", got, want)
		}
	})
}

// TestConcurrentWriters checks that writers writing the same bundles at
// once, goroutines of one process and two processes, all succeed and
// leave one row per bundle and per finding.
func TestConcurrentWriters(t *testing.T) {
	eachDialect(t, func(t *testing.T, target string) {
		db := open(t, target)
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		wg.Add(1)
		go func() {
			defer wg.Done()
			helper(t, 2, "write", target)
		}()
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, l := range concurrentLines() {
					if err := db.Write(ctx, l); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		var want []string
		for _, l := range concurrentLines() {
			want = append(want, fmt.Sprintf("%s|%d", l.Bundle, len(l.Findings)))
		}
		got := query(t, db, "SELECT b.bundle, (SELECT count(*) FROM findings f WHERE f.bundle = b.bundle) FROM bundles b ORDER BY b.bundle")
		if !slices.Equal(got, want) {
			t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if got := query(t, db, "SELECT count(*) FROM findings"); !slices.Equal(got, []string{"40"}) {
			t.Errorf("%s findings, want 40", got)
		}
	})
}

// TestDone checks that Done holds the bundles written but those canceled.
func TestDone(t *testing.T) {
	eachDialect(t, func(t *testing.T, target string) {
		db := open(t, target)
		ctx := context.Background()
		done, err := db.Done(ctx)
		if err != nil || len(done) != 0 {
			t.Fatalf("empty database: %v, %v", done, err)
		}
		for b, status := range map[string]string{"ok": results.StatusOK, "timeout": results.StatusTimeout,
			"refused": results.StatusRefused, "canceled": results.StatusCanceled} {
			l := testLine(b, 1)
			l.Status = status
			if err := db.Write(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		done, err = db.Done(ctx)
		if err != nil || len(done) != 3 || !done["ok"] || !done["timeout"] || !done["refused"] {
			t.Errorf("done %v, %v; want ok, timeout and refused", done, err)
		}
	})
}

// TestWriteErrors checks that a write to a closed database, or under a
// canceled context, is an error that names the database and the bundle,
// and writes nothing.
func TestWriteErrors(t *testing.T) {
	eachDialect(t, func(t *testing.T, target string) {
		db := open(t, target)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := db.Write(ctx, testLine("canceled", 1))
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "bundle canceled") {
			t.Errorf("canceled context: %v", err)
		}
		if _, err := db.Done(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Done, canceled context: %v", err)
		}
		if got := query(t, db, "SELECT count(*) FROM bundles"); !slices.Equal(got, []string{"0"}) {
			t.Errorf("%s bundles written under a canceled context", got)
		}
		db.Close()
		err = db.Write(context.Background(), testLine("closed", 1))
		if err == nil || !strings.Contains(err.Error(), "closed") || !strings.Contains(err.Error(), db.Name()) {
			t.Errorf("closed database: %v", err)
		}
		if _, err := db.Done(context.Background()); err == nil {
			t.Error("Done on a closed database: no error")
		}
	})
}
