package results

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func jsonlLine(bundle, status string) *Line {
	return &Line{Bundle: bundle, Status: status}
}

// TestJSONLResume checks OpenJSONLSink: without resume the file is emptied;
// with it, the bundles done are those of whole lines not canceled, a cut
// last line is dropped, and new lines follow the old ones.
func TestJSONLResume(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.jsonl")
	old := `{"bundle":"a","status":"ok"}` + "\n" + `{"bundle":"b","status":"canceled"}` + "\n" + `{"bundle":"c","status":"ok"}`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJSONLSink(path, true)
	if err != nil {
		t.Fatal(err)
	}
	done, err := j.Done(ctx)
	if err != nil || len(done) != 1 || !done["a"] {
		t.Errorf("done %v, %v; want a alone (b canceled, c cut)", done, err)
	}
	for _, l := range []*Line{jsonlLine("c", StatusOK), jsonlLine("d", StatusCanceled)} {
		if err := j.Write(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if done, _ := j.Done(ctx); len(done) != 2 || !done["a"] || !done["c"] {
		t.Errorf("done after writes %v, want a and c", done)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Errorf("closed again: %v", err)
	}
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[2], `{"schema_version":"","tool":`) || !strings.Contains(lines[2], `"bundle":"c"`) {
		t.Errorf("file:\n%s", b)
	}
	var l Line
	if err := json.Unmarshal([]byte(lines[3]), &l); err != nil || l.Bundle != "d" {
		t.Errorf("last line %q: %v", lines[3], err)
	}

	j, err = OpenJSONLSink(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if done, _ := j.Done(ctx); len(done) != 0 {
		t.Errorf("without resume: done %v", done)
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("without resume, the file holds %q", b)
	}
}

// TestJSONLLock checks that a file a JSONL holds cannot be opened by
// another until it is closed.
func TestJSONLLock(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("flock is checked on Linux")
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	j, err := OpenJSONLSink(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenJSONLSink(path, true); !errors.Is(err, ErrLocked) || !strings.HasPrefix(err.Error(), path+": locked") {
		t.Errorf("second open: %v", err)
	}
	j.Close()
	j, err = OpenJSONLSink(path, true)
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	j.Close()
}

// TestJSONLWriteError checks that the first write error is kept: Write
// returns it, writes nothing more, and Close returns it.
func TestJSONLWriteError(t *testing.T) {
	ctx := context.Background()
	j := NewJSONL(failingWriter{})
	err := j.Write(ctx, jsonlLine("a", StatusOK))
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("write: %v", err)
	}
	if err2 := j.Write(ctx, jsonlLine("b", StatusOK)); err2 != err {
		t.Errorf("second write: %v, want the first error", err2)
	}
	if done, _ := j.Done(ctx); len(done) != 0 {
		t.Errorf("done %v after failed writes", done)
	}
	if err2 := j.Close(); err2 != err {
		t.Errorf("close: %v, want the first error", err2)
	}

	var buf bytes.Buffer
	j = NewJSONL(&buf)
	if err := j.Write(ctx, jsonlLine("c", StatusOK)); err != nil || !strings.HasSuffix(buf.String(), `"suppressed_count":0}`+"\n") {
		t.Errorf("write to a buffer: %v, %q", err, buf.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
