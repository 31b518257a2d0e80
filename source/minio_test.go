//go:build fleet

package source

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil/servers"
	"github.com/netmortem/netmortem/parse"
)

// countingProxy is a proxy in front of an S3 server that counts the
// object reads (GET of a key) and listings (GET of the bucket) it passes.
type countingProxy struct {
	url            string
	gets, listings atomic.Int64
	// failAfter, when above 0, refuses listings after that many.
	failAfter int64
}

func newCountingProxy(t *testing.T, endpoint string) *countingProxy {
	target, _ := url.Parse(endpoint)
	p := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// Path-style: /bucket is a listing, /bucket/key a read.
			if strings.Contains(strings.TrimPrefix(r.URL.Path, "/"), "/") {
				p.gets.Add(1)
			} else if n := p.listings.Add(1); p.failAfter > 0 && n > p.failAfter {
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>`)
				return
			}
		}
		rp.ServeHTTP(w, r) // the Host stays the proxy's, which the request was signed for
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// TestMinIO reads bundles from a real S3 server: a listing of 1,200 keys
// over two pages, tar.gz and zip bundles giving the findings of the same
// files read from disk in two and three GETs, the endpoint given by
// AWS_ENDPOINT_URL_S3 and by the URL's options, wrong credentials and a
// missing bucket.
func TestMinIO(t *testing.T) {
	s3 := servers.MinIO(t)
	s3.MakeBucket(t, "tickets")
	var wg sync.WaitGroup
	errs := make(chan error, 1200)
	for i := range 1200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s3.PutObject("tickets", fmt.Sprintf("many/%02d/t-%04d.tar.gz", i%7, i), []byte("x"))
		}()
		if i%16 == 15 {
			wg.Wait()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s3.Put(t, "tickets", "many/02/", nil) // a "directory": skipped
	files := bundleFiles(t, "connection-skew")
	bundles := map[string][]byte{"b/skew.tar.gz": tarGz(t, files), "b/skew.zip": zipOf(t, files)}
	dir := t.TempDir()
	for k, data := range bundles {
		s3.Put(t, "tickets", k, data)
		os.WriteFile(filepath.Join(dir, filepath.Base(k)), data, 0o644)
	}

	t.Run("env", func(t *testing.T) {
		s3.Setenv(t)
		s := New()
		defer s.Close()
		got, err := s.List(t.Context(), "s3://tickets/many/**/*.tar.gz")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1200 || got[0].Name != "s3://tickets/many/00/t-0000.tar.gz" || got[0].Size != 1 {
			t.Errorf("listed %d objects, first %+v; want 1200", len(got), got[0])
		}
		got, err = s.List(t.Context(), "s3://tickets/many/02/")
		if err != nil || len(got) != 172 {
			t.Errorf("prefix: %d objects, %v; want 172 and no directory", len(got), err)
		}
	})

	t.Run("query", func(t *testing.T) {
		s3.Setenv(t)
		os.Unsetenv("AWS_ENDPOINT_URL_S3")
		os.Unsetenv("AWS_REGION")
		proxy := newCountingProxy(t, s3.Endpoint)
		s := New()
		s.pageSize = 500
		defer s.Close()
		q := "?endpoint=" + url.QueryEscape(proxy.url) + "&use_path_style=true&region=" + s3.Region
		got, err := s.List(t.Context(), "s3://tickets/many/**"+q)
		if err != nil || len(got) != 1200 {
			t.Fatalf("listed %d, %v; want 1200", len(got), err)
		}
		if n := proxy.listings.Load(); n != 3 {
			t.Errorf("%d listing requests, want 3 pages of 500", n)
		}
		for _, c := range []struct {
			key  string
			gets int64
		}{{"b/skew.tar.gz", 2}, {"b/skew.zip", 3}} {
			before := proxy.gets.Load()
			r, err := s.Open(t.Context(), "s3://tickets/"+c.key)
			if err != nil {
				t.Fatal(err)
			}
			remote, _, err := parse.OpenReaderAt(t.Context(), "s3://tickets/"+c.key, r, r.Size(), nil)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if n := proxy.gets.Load() - before; n != c.gets { // the attributes are asked with HEAD
				t.Errorf("%s: %d GETs, want %d", c.key, n, c.gets)
			}
			if r.Requests() != int(c.gets) {
				t.Errorf("%s: %d range requests, want %d", c.key, r.Requests(), c.gets)
			}
			local, _, err := parse.Open(t.Context(), filepath.Join(dir, filepath.Base(c.key)), nil)
			if err != nil {
				t.Fatal(err)
			}
			want, got := findingsOf(t, local), findingsOf(t, remote)
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("%s: findings %v, want %v as read from disk", c.key, got, want)
			}
		}
	})

	t.Run("cut short", func(t *testing.T) {
		s3.Setenv(t)
		proxy := newCountingProxy(t, s3.Endpoint)
		proxy.failAfter = 1
		t.Setenv("AWS_ENDPOINT_URL_S3", proxy.url)
		s := New()
		s.pageSize = 500
		defer s.Close()
		got, err := s.List(t.Context(), "s3://tickets/many/**")
		// 499: the first page holds the "directory" many/02/, skipped.
		if len(got) != 499 || err == nil || !strings.Contains(err.Error(), "listing s3://tickets/many/** cut short after 499 objects") {
			t.Errorf("listing refused at its second page: %d objects, %v", len(got), err)
		}
	})

	t.Run("wrong credentials", func(t *testing.T) {
		s3.Setenv(t)
		t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
		s := New()
		defer s.Close()
		_, err := s.List(t.Context(), "s3://tickets/many/**")
		if err == nil || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") || !strings.Contains(err.Error(), "s3://tickets/many/**") {
			t.Errorf("wrong key: %v, want an error naming the pattern and the variables", err)
		}
	})

	t.Run("missing bucket", func(t *testing.T) {
		s3.Setenv(t)
		s := New()
		defer s.Close()
		_, err := s.List(t.Context(), "s3://none/t/*.tar.gz")
		if err == nil || !strings.Contains(err.Error(), "no such object or bucket") {
			t.Errorf("missing bucket: %v", err)
		}
		_, err = s.Stat(t.Context(), "s3://tickets/b/none.tar.gz")
		if err == nil || !strings.Contains(err.Error(), "no such object or bucket") {
			t.Errorf("missing key: %v", err)
		}
	})
}
