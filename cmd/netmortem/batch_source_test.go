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
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/internal/testutil/servers"
	"github.com/netmortem/netmortem/results"
)

// urlBatchLines runs batch and returns its exit code, its lines by bundle
// and its stderr.
func urlBatchLines(t *testing.T, args ...string) (int, map[string]results.Line, string) {
	t.Helper()
	code, out, stderr := runCLI(t, append([]string{"batch", "-q"}, args...)...)
	lines := map[string]results.Line{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var r results.Line
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		lines[r.Bundle] = r
	}
	return code, lines, stderr
}

func lineRules(l results.Line) []string {
	var out []string
	for _, f := range l.Findings {
		out = append(out, f.Rule)
	}
	return out
}

// ticketsDir writes two incidents as tar.gz files under DIR/tickets/2024
// and returns DIR.
func ticketsDir(t *testing.T) string {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "tickets", "2024"), 0o755)
	for _, inc := range []string{"connection-skew", "conntrack-stale-udp"} {
		os.WriteFile(filepath.Join(dir, "tickets", "2024", inc+".tar.gz"), testutil.TarGzDir(t, fixture("incidents/"+inc)), 0o644)
	}
	return dir
}

// TestBatchFileURLs: bundles named by a file:// pattern, mixed with a
// local one, get the findings of the same files read as local paths,
// named by their URLs; the bundle time falls back to the object's time.
func TestBatchFileURLs(t *testing.T) {
	dir := ticketsDir(t)
	old := time.Date(2024, 3, 5, 10, 0, 0, 0, time.UTC)
	udp := filepath.Join(dir, "tickets", "2024", "conntrack-stale-udp.tar.gz")
	os.Chtimes(udp, old, old)
	code, lines, stderr := urlBatchLines(t, "file://"+dir+"/tickets/**/*.tar.gz", incident)
	if code != exitFindings || len(lines) != 3 {
		t.Fatalf("exit %d, %d lines; stderr:\n%s", code, len(lines), stderr)
	}
	_, local, _ := urlBatchLines(t, filepath.Join(dir, "tickets", "**", "*.tar.gz"))
	for p, want := range local {
		got, ok := lines["file://"+p]
		if !ok || got.Status != statusOK || len(want.Findings) == 0 || !slices.Equal(lineRules(got), lineRules(want)) {
			t.Errorf("file://%s: %+v, want the findings %v of the local path", p, got, lineRules(want))
		}
	}
	if got := lines["file://"+udp]; !got.BundleTime.Equal(old) || got.BundleTimeSource != "modified" {
		t.Errorf("bundle time %v (%s), want the object's time %v", got.BundleTime, got.BundleTimeSource, old)
	}
	if l, ok := lines[incident]; !ok || l.Status != statusOK {
		t.Errorf("local operand: %+v", l)
	}
}

// TestBatchURLErrors: a pattern matching nothing gets a line, an object
// over the size budget is not read, a malformed URL stops the batch.
func TestBatchURLErrors(t *testing.T) {
	dir := ticketsDir(t)
	pattern := "file://" + dir + "/tickets/**/*.zip"
	code, lines, stderr := urlBatchLines(t, "--max-bundle-bytes", "2000", pattern, "file://"+dir+"/tickets/2024/")
	if code != exitUnreadable {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUnreadable, stderr)
	}
	if l := lines[pattern]; l.Status != statusUnreadable || !strings.Contains(l.Error, "no object matches") {
		t.Errorf("unmatched pattern: %+v", l)
	}
	big := "file://" + dir + "/tickets/2024/connection-skew.tar.gz"
	if l := lines[big]; l.Status != statusOverBudget || !strings.Contains(l.Error, "in storage, over the 2000-byte budget") {
		t.Errorf("over budget: %+v", l)
	}
	code, _, stderr = runCLI(t, "batch", "-q", "file://"+dir+"/tickets/[.tar.gz")
	if code != exitUsage || !strings.Contains(stderr, "tickets/[.tar.gz") {
		t.Errorf("malformed pattern: exit %d, stderr %q", code, stderr)
	}
}

// TestAnalyzeURL: analyze reads one bundle by URL.
func TestAnalyzeURL(t *testing.T) {
	dir := ticketsDir(t)
	u := "file://" + dir + "/tickets/2024/connection-skew.tar.gz"
	code, out, stderr := runCLI(t, "analyze", "-o", "json", u)
	if code != exitFindings || !strings.Contains(out, `"rule": "connection-skew"`) || !strings.Contains(out, u+"!connection-skew/") {
		t.Errorf("exit %d; stderr:\n%s\nstdout:\n%.2000s", code, stderr, out)
	}
}

// TestBatchMinIO reads bundles from a real S3 server by pattern, with the
// endpoint in the environment: the findings of the same files read
// locally. A missing bucket or wrong credentials stop the batch (exit 2)
// with the error; a missing key gets a line.
func TestBatchMinIO(t *testing.T) {
	s3 := servers.MinIO(t)
	s3.Setenv(t)
	s3.MakeBucket(t, "nmb")
	dir := ticketsDir(t)
	for _, inc := range []string{"connection-skew", "conntrack-stale-udp"} {
		b, _ := os.ReadFile(filepath.Join(dir, "tickets", "2024", inc+".tar.gz"))
		s3.Put(t, "nmb", "tickets/2024/"+inc+".tar.gz", b)
	}
	code, lines, stderr := urlBatchLines(t, "s3://nmb/tickets/**/*.tar.gz", "s3://nmb/tickets/none.tar.gz")
	if code != exitUnreadable || len(lines) != 3 {
		t.Fatalf("exit %d, %d lines; stderr:\n%s", code, len(lines), stderr)
	}
	_, local, _ := urlBatchLines(t, filepath.Join(dir, "tickets", "2024", "*.tar.gz"))
	for p, want := range local {
		name := "s3://nmb/tickets/2024/" + filepath.Base(p)
		if got := lines[name]; got.Status != statusOK || len(want.Findings) == 0 || !slices.Equal(lineRules(got), lineRules(want)) {
			t.Errorf("%s: %+v, want the findings %v of the local file", name, got, lineRules(want))
		}
	}
	if l := lines["s3://nmb/tickets/none.tar.gz"]; l.Status != statusUnreadable || !strings.Contains(l.Error, "no such object") {
		t.Errorf("missing key: %+v", l)
	}
	code, _, stderr = runCLI(t, "batch", "-q", "s3://none/tickets/*.tar.gz")
	if code != exitUsage || !strings.Contains(stderr, "s3://none/tickets/*.tar.gz") || !strings.Contains(stderr, "no such object or bucket") {
		t.Errorf("missing bucket: exit %d, stderr %q", code, stderr)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	code, _, stderr = runCLI(t, "batch", "-q", "s3://nmb/tickets/**")
	if code != exitUsage || !strings.Contains(stderr, "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("wrong credentials: exit %d, stderr %q", code, stderr)
	}
}

// TestInspectURL: inspect reads one bundle by URL, and names its folders
// by their URLs.
func TestInspectURL(t *testing.T) {
	dir := ticketsDir(t)
	u := "file://" + dir + "/tickets/2024/connection-skew.tar.gz"
	code, out, stderr := runCLI(t, "inspect", u)
	if code != exitOK || !strings.Contains(out, "folder "+u+"!connection-skew/") || !strings.Contains(out, "capture.pcap") {
		t.Errorf("exit %d; stderr:\n%s\nstdout:\n%.2000s", code, stderr, out)
	}
}

// TestBatchListingCutShort: a listing refused at its second page gives the
// bundles of its first page and a line for the pattern with the error.
func TestBatchListingCutShort(t *testing.T) {
	s3 := servers.MinIO(t)
	s3.Setenv(t)
	s3.MakeBucket(t, "cut")
	dir := ticketsDir(t)
	b, _ := os.ReadFile(filepath.Join(dir, "tickets", "2024", "connection-skew.tar.gz"))
	s3.Put(t, "cut", "t/0000/a.tar.gz", b)
	for i := range 1000 {
		if err := s3.PutObject("cut", fmt.Sprintf("t/k%04d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	target, _ := url.Parse(s3.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	var listings atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/cut" && listings.Add(1) > 1 {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>`)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	t.Setenv("AWS_ENDPOINT_URL_S3", proxy.URL)
	code, lines, stderr := urlBatchLines(t, "s3://cut/t/*/a.tar.gz")
	if code != exitUnreadable || len(lines) != 2 {
		t.Fatalf("exit %d, %d lines; stderr:\n%s", code, len(lines), stderr)
	}
	if l := lines["s3://cut/t/0000/a.tar.gz"]; l.Status != statusOK || len(l.Findings) == 0 {
		t.Errorf("bundle of the first page: %+v", l)
	}
	if l := lines["s3://cut/t/*/a.tar.gz"]; l.Status != statusUnreadable || !strings.Contains(l.Error, "cut short after 1000 objects") ||
		!strings.Contains(l.Error, "access denied") {
		t.Errorf("pattern: %+v", l)
	}
}

// TestBatchListingTimeout: --timeout bounds the listing of a pattern from
// a server that does not answer: batch stops with the error, exit 3 (a
// retry may pass, where exit 2, a usage error, fails a Job's index at once).
func TestBatchListingTimeout(t *testing.T) {
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hung.Close()
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us-east-1",
		"AWS_ENDPOINT_URL_S3": hung.URL, "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull} {
		t.Setenv(k, v)
	}
	start := time.Now()
	code, _, stderr := runCLI(t, "batch", "-q", "--timeout", "1s", "s3://hung/t/**")
	if code != exitUnreadable || !strings.Contains(stderr, "s3://hung/t/**") || !strings.Contains(stderr, "over the --timeout budget of 1s") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ended after %s", d)
	}
}

// TestBatchListingRefused: a listing whose server refuses the connection
// stops batch with exit 3, not 2: the server may be back for a retry.
func TestBatchListingRefused(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us-east-1",
		"AWS_ENDPOINT_URL_S3": gone.URL, "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull} {
		t.Setenv(k, v)
	}
	code, _, stderr := runCLI(t, "batch", "-q", "s3://gone/t/**")
	if code != exitUnreadable || !strings.Contains(stderr, "s3://gone/t/**") || !strings.Contains(stderr, "connection refused") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
