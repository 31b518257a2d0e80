package source

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in                         string
		scheme, bucket, key, query string
		kind                       Kind
		prefix, name               string
	}{
		{"s3://b/tickets/a.tar.gz", "s3", "b", "tickets/a.tar.gz", "", Object, "tickets/a.tar.gz", "s3://b/tickets/a.tar.gz"},
		{"s3://b/tickets/**/*.tar.gz?endpoint=http://127.0.0.1:9000&use_path_style=true&region=us-east-1", "s3", "b",
			"tickets/**/*.tar.gz", "endpoint=http://127.0.0.1:9000&use_path_style=true&region=us-east-1", Pattern, "tickets/", "s3://b/tickets/**/*.tar.gz"},
		{"S3://b/tickets/", "s3", "b", "tickets/", "", Prefix, "tickets/", "s3://b/tickets/"},
		{"gs://b", "gs", "b", "", "", Prefix, "", "gs://b/"},
		{"azblob://c/t/2024-*.zip", "azblob", "c", "t/2024-*.zip", "", Pattern, "t/2024-", "azblob://c/t/2024-*.zip"},
		// A "?" followed by no "=" is a glob character, not a query.
		{"s3://b/t/a?.tar.gz", "s3", "b", "t/a?.tar.gz", "", Pattern, "t/a", "s3://b/t/a?.tar.gz"},
		{"s3://b/t/x\\*y", "s3", "b", "t/x\\*y", "", Pattern, "t/x", "s3://b/t/x\\*y"},
		{"file:///tmp/t/**/*.tar.gz", "file", "tmp/t", "**/*.tar.gz", "", Pattern, "", "file:///tmp/t/**/*.tar.gz"},
		{"file:///tmp/t/a.zip", "file", "tmp/t", "a.zip", "", Object, "a.zip", "file:///tmp/t/a.zip"},
		{"file:///tmp/t/", "file", "tmp/t", "", "", Prefix, "", "file:///tmp/t/"},
	}
	for _, c := range cases {
		l, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if l.Scheme != c.scheme || l.Bucket != c.bucket || l.Key != c.key || l.Query != c.query {
			t.Errorf("Parse(%q) = %+v, want %s %s %s %s", c.in, l, c.scheme, c.bucket, c.key, c.query)
		}
		if l.Kind() != c.kind || l.ListPrefix() != c.prefix || l.Name() != c.name {
			t.Errorf("Parse(%q): kind %d, prefix %q, name %q; want %d, %q, %q", c.in, l.Kind(), l.ListPrefix(), l.Name(), c.kind, c.prefix, c.name)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{
		"/tmp/a.tar.gz", "http://x/y", "s3://", "s3:///key", "s3://b*/k", "file://relative/a.zip", "file:///",
		"file:///tmp/../etc/x", "s3://b/k?endpoint=%zz", "s3://b/a\nb",
	} {
		if _, err := Parse(in); !errors.Is(err, ErrURL) {
			t.Errorf("Parse(%q) = %v, want ErrURL", in, err)
		}
	}
	if IsURL("tickets/a.tar.gz") || IsURL("c:/x") || !IsURL("gs://b/k") || !IsURL("FILE:///x") {
		t.Error("IsURL")
	}
}

// FuzzParse checks that parsing never panics and that a parsed location
// parses again to itself, by its URL (with the query) and by its name.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"s3://b/t/**/*.tar.gz?region=x", "file:///tmp/a/b?.zip", "gs://b/", "azblob://c/{a,b}/*", "s3://b/?=&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			return
		}
		_ = l.Kind()
		_ = l.ListPrefix()
		again, err := Parse(l.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %+v, but its String %q: %v", s, l, l.String(), err)
		}
		if again != l {
			t.Fatalf("Parse(%q) = %+v, Parse(%q) = %+v", s, l, l.String(), again)
		}
	})
}
