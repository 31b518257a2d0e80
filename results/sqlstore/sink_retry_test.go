package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestRetry checks which errors are run again, and that retry stops at
// success, at an error of another kind, and when its context ends.
func TestRetry(t *testing.T) {
	for err, want := range map[error]bool{
		&pgconn.PgError{Code: "40001"}:                      true,
		fmt.Errorf("x: %w", &pgconn.PgError{Code: "40P01"}): true,
		&pgconn.PgError{Code: "23505"}:                      false, // unique_violation
		errors.New("database is locked (5) (SQLITE_BUSY)"):  false, // only the driver's error type is trusted
		context.Canceled:                                    false,
	} {
		if got := retryable(err); got != want {
			t.Errorf("retryable(%v) = %v, want %v", err, got, want)
		}
	}
	d := &DB{}
	n := 0
	err := d.retry(context.Background(), func() error {
		if n++; n < 3 {
			return &pgconn.PgError{Code: "40001"}
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Errorf("two serialization failures, then success: %v after %d runs", err, n)
	}
	n = 0
	other := &pgconn.PgError{Code: "23505"}
	if err := d.retry(context.Background(), func() error { n++; return other }); err != other || n != 1 {
		t.Errorf("another error: %v after %d runs, want it after one", err, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = d.retry(ctx, func() error { return &pgconn.PgError{Code: "40P01"} })
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("contention until the context ends: %v after %s", err, time.Since(start))
	}

	// A real SQLITE_BUSY: a second writer that does not wait.
	path := filepath.Join(t.TempDir(), "busy.db")
	holder, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	tx, err := holder.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	second, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	_, err = second.Begin()
	if err == nil || !retryable(err) {
		t.Errorf("a second writer of SQLite: %v, want SQLITE_BUSY, retryable", err)
	}
}
