//go:build fleet

package source

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// tree writes files (path -> content) under a new directory and returns
// it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func names(as []Attrs) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name)
	}
	return out
}

var listed = map[string]string{
	"tickets/2024/a.tar.gz":       "a",
	"tickets/2024/b.zip":          "bb",
	"tickets/2025/x/c.tar.gz":     "ccc",
	"tickets/2025/.hidden.tar.gz": "h",
	"tickets/.cache/d.tar.gz":     "d",
	"tickets/e.tar.gz":            "e",
	"tickets/notes.txt":           "n",
	"other/f.tar.gz":              "f",
	"tickets-old/g.tar.gz":        "g",
}

// TestListMatchesLocalGlobs lists patterns over file:// and checks that
// they match the objects a local glob of the same pattern matches.
func TestListMatchesLocalGlobs(t *testing.T) {
	dir := tree(t, listed)
	s := New()
	defer s.Close()
	for _, pat := range []string{"tickets/**/*.tar.gz", "tickets/*/*", "tickets/{2024,2025}/**", "tickets/*.tar.gz",
		"tickets*/**/*.tar.gz", "**/*.zip", "tickets/202?/[ab].*"} {
		local, err := doublestar.FilepathGlob(filepath.Join(dir, pat), doublestar.WithNoHidden(), doublestar.WithNoFollow(), doublestar.WithFilesOnly())
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, l := range local {
			want = append(want, "file://"+filepath.ToSlash(l))
		}
		slices.Sort(want)
		got, err := s.List(t.Context(), "file://"+dir+"/"+pat)
		if err != nil {
			t.Errorf("%s: %v", pat, err)
			continue
		}
		if len(want) == 0 || !slices.Equal(names(got), want) {
			t.Errorf("%s: listed\n%v\nwant (as the local glob)\n%v", pat, names(got), want)
		}
	}
}

func TestListPrefixKeyAndNoMatch(t *testing.T) {
	dir := tree(t, listed)
	s := New()
	defer s.Close()
	got, err := s.List(t.Context(), "file://"+dir+"/tickets/2024/")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"file://" + dir + "/tickets/2024/a.tar.gz", "file://" + dir + "/tickets/2024/b.zip"}
	if !slices.Equal(names(got), want) || got[1].Size != 2 || got[1].ModTime.IsZero() {
		t.Errorf("prefix: %+v, want %v of sizes 1 and 2 with their times", got, want)
	}
	got, err = s.List(t.Context(), "file://"+dir+"/tickets/e.tar.gz")
	if err != nil || len(got) != 1 || got[0].Size != 1 {
		t.Errorf("key: %+v, %v", got, err)
	}
	_, err = s.List(t.Context(), "file://"+dir+"/tickets/**/*.7z")
	if !errors.Is(err, ErrNoMatch) || !strings.Contains(err.Error(), "tickets/**/*.7z") {
		t.Errorf("no match: %v, want ErrNoMatch naming the pattern", err)
	}
	_, err = s.List(t.Context(), "file://"+dir+"/tickets/none.tar.gz")
	if err == nil || !strings.Contains(err.Error(), "no such object") {
		t.Errorf("missing key: %v", err)
	}
	_, err = s.List(t.Context(), "file://"+dir+"/tickets/2024")
	if err == nil || !strings.Contains(err.Error(), "no such object") || !strings.Contains(err.Error(), "file://"+dir+"/tickets/2024/ (with its /)") {
		t.Errorf("a prefix without its /: %v, want the error to name the prefix", err)
	}
	_, err = s.List(t.Context(), "file://"+dir+"/tickets/[a.tar.gz")
	if !errors.Is(err, ErrURL) {
		t.Errorf("bad pattern: %v, want ErrURL", err)
	}
}

// TestListCanceled: a listing whose context ends returns its error,
// naming the pattern, and no panic, whether or not its bucket was
// opened before.
func TestListCanceled(t *testing.T) {
	dir := tree(t, listed)
	s := New()
	s.pageSize = 1
	defer s.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// Before the bucket is opened, and after: fileblob lists without
	// looking at its context.
	for _, opened := range []bool{false, true} {
		if opened {
			if _, err := s.List(t.Context(), "file://"+dir+"/tickets/**"); err != nil {
				t.Fatal(err)
			}
		}
		_, err := s.List(ctx, "file://"+dir+"/tickets/**")
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "tickets/**") {
			t.Errorf("canceled listing (bucket opened before: %v): %v, want context.Canceled naming the pattern", opened, err)
		}
	}
}

// TestBucketOptionsConflict: a bucket is opened with the options of the
// first URL naming it; another URL giving other options is refused.
func TestBucketOptionsConflict(t *testing.T) {
	s := New()
	defer s.Close()
	if _, err := s.bucket(t.Context(), Location{Scheme: "s3", Bucket: "b", Query: "region=us-east-1"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.bucket(t.Context(), Location{Scheme: "s3", Bucket: "b", Query: "region=eu-west-1"})
	if err == nil || !strings.Contains(err.Error(), "same options") {
		t.Errorf("conflicting options: %v", err)
	}
	if _, err := s.bucket(t.Context(), Location{Scheme: "s3", Bucket: "b"}); err != nil {
		t.Errorf("no options: %v, want the bucket opened before", err)
	}
}

// TestNoCredentials: gs:// and azblob:// without credentials fail with an
// error saying which variables to set, within seconds. There is no server
// for them here: the lookups meet no metadata server, or time out.
func TestNoCredentials(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []string{"GOOGLE_APPLICATION_CREDENTIALS", "AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY",
		"AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_CLIENT_ID"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	for _, c := range []struct{ url, hint string }{
		{"gs://netmortem-none/t/**/*.tar.gz", "GOOGLE_APPLICATION_CREDENTIALS"},
		{"azblob://none/t/*.zip", "AZURE_STORAGE_ACCOUNT"},
	} {
		s := New()
		s.CredentialTimeout = 5 * time.Second
		start := time.Now()
		_, err := s.List(t.Context(), c.url)
		s.Close()
		if err == nil || !strings.Contains(err.Error(), c.hint) {
			t.Errorf("%s: %v, want an error naming %s", c.url, err, c.hint)
		}
		if d := time.Since(start); d > 8*time.Second {
			t.Errorf("%s: failed after %s", c.url, d)
		}
	}
}

// TestServerNotAnswering: a listing from a server that never answers ends
// within the credential timeout, with an error saying so.
func TestServerNotAnswering(t *testing.T) {
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hung.Close()
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us-east-1",
		"AWS_ENDPOINT_URL_S3": hung.URL, "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull} {
		t.Setenv(k, v)
	}
	s := New()
	s.CredentialTimeout = 2 * time.Second
	defer s.Close()
	start := time.Now()
	_, err := s.List(t.Context(), "s3://b/t/**")
	if err == nil || !strings.Contains(err.Error(), "no answer within 2s") || !strings.Contains(err.Error(), "s3://b/t/**") {
		t.Errorf("hung server: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("hung server: failed after %s", d)
	}
}

// TestNoCredentialsQuietStdout: without Google credentials, opening a
// gs:// bucket writes nothing to stdout (gcsblob prints a warning there,
// which would be mixed into batch's JSON Lines), and the error says why.
func TestNoCredentialsQuietStdout(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	os.Unsetenv("GOOGLE_APPLICATION_CREDENTIALS")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	var errs []error
	for _, u := range []string{"gs://netmortem-none/t/**", "gs://netmortem-none-anon/t/**?anonymous=true"} {
		s := New()
		s.CredentialTimeout = 5 * time.Second
		_, err := s.List(t.Context(), u)
		s.Close()
		errs = append(errs, err)
	}
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	if len(out) > 0 {
		t.Errorf("stdout: %q, want nothing", out)
	}
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "GOOGLE_APPLICATION_CREDENTIALS") || !strings.Contains(errs[0].Error(), "credentials") {
		t.Errorf("no credentials: %v, want the error saying so", errs[0])
	}
}
