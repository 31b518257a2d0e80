//go:build fleet

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil/servers"
	"github.com/netmortem/netmortem/results"
)

// TestBatchReadMayPass: a bundle whose object the store fails to give (an
// HTTP 503 on every read, after the client's own retries) gets no line and
// makes batch exit 3; --resume, once the store gives it, reads it and only
// it. A line with its error would have kept it out of every resume.
func TestBatchReadMayPass(t *testing.T) {
	s3 := servers.MinIO(t)
	s3.Setenv(t)
	s3.MakeBucket(t, "flaky")
	dir := ticketsDir(t)
	for _, inc := range []string{"connection-skew", "conntrack-stale-udp"} {
		b, _ := os.ReadFile(filepath.Join(dir, "tickets", "2024", inc+".tar.gz"))
		s3.Put(t, "flaky", "t/"+inc+".tar.gz", b)
	}
	target, _ := url.Parse(s3.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	var failing atomic.Bool
	failing.Store(true)
	var refused atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/conntrack-stale-udp.tar.gz") {
			refused.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	t.Setenv("AWS_ENDPOINT_URL_S3", proxy.URL)
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, stderr := runCLI(t, "batch", "--out", out, "s3://flaky/t/*.tar.gz")
	lines := readBatchOut(t, out)
	if code != exitUnreadable || len(lines) != 1 || lines[0].Bundle != "s3://flaky/t/connection-skew.tar.gz" || refused.Load() == 0 ||
		!strings.Contains(stderr, "1 bundle could not be read from storage for now") || !strings.Contains(stderr, "--resume reads it again") {
		t.Fatalf("exit %d, lines %+v, %d reads refused; stderr:\n%s", code, lines, refused.Load(), stderr)
	}
	failing.Store(false)
	code, _, stderr = runCLI(t, "batch", "--resume", "--out", out, "s3://flaky/t/*.tar.gz")
	lines = readBatchOut(t, out)
	if code == exitUnreadable || code == exitUsage || len(lines) != 2 || lines[1].Bundle != "s3://flaky/t/conntrack-stale-udp.tar.gz" ||
		lines[1].Status != statusOK || len(lines[1].Findings) == 0 || !strings.Contains(stderr, "1 analyzed now, 1 already done") {
		t.Fatalf("resumed: exit %d, lines %+v; stderr:\n%s", code, lines, stderr)
	}
}

// readBatchOut reads the lines of a batch's --out file, in order.
func readBatchOut(t *testing.T, path string) []results.Line {
	t.Helper()
	var out []results.Line
	for _, l := range readLines(t, path) {
		var r results.Line
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%s: %v: %s", path, err, l)
		}
		out = append(out, r)
	}
	return out
}
