package source

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"
)

// Schemes are the URL schemes source reads, with the cloud each names.
var Schemes = []string{"s3", "gs", "azblob", "file"}

// ErrURL marks a bundle URL or pattern that cannot be parsed.
var ErrURL = errors.New("not a bundle URL")

// Location is a parsed bundle URL or pattern:
// SCHEME://BUCKET/KEY?QUERY, or file:///ABSOLUTE/PATH.
type Location struct {
	// Scheme is one of Schemes.
	Scheme string
	// Bucket is the bucket (s3, gs), the container (azblob), or for
	// file the directory (without its leading "/") above the key.
	Bucket string
	// Key is the object key, prefix or pattern, without a leading "/"
	// (for file, the path under Bucket).
	Key string
	// Query holds the options of the bucket (the part after "?"), as
	// given: they open the bucket and are not part of any name.
	Query string
}

// IsURL reports whether s starts with the scheme of one of Schemes
// followed by "://": whether it names objects rather than a local path.
func IsURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok {
		return false
	}
	for _, sc := range Schemes {
		if strings.EqualFold(scheme, sc) {
			return true
		}
	}
	return false
}

// Parse parses a bundle URL or pattern. A "?" starts the query only when
// a name and "=" follow it (so that "a?.tar.gz", a glob, stays in the
// key); the query must then be valid URL query syntax. The key is
// taken as written: it is not percent-decoded, and may hold glob characters.
func Parse(s string) (Location, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || !IsURL(s) {
		return Location{}, fmt.Errorf("%w: %q: want %s://BUCKET/KEY", ErrURL, s, strings.Join(Schemes, "://, "))
	}
	loc := Location{Scheme: strings.ToLower(scheme)}
	if i := queryIndex(rest); i >= 0 {
		loc.Query = rest[i+1:]
		rest = rest[:i]
		if _, err := url.ParseQuery(loc.Query); err != nil {
			return Location{}, fmt.Errorf("%w: %q: the options after \"?\": %w", ErrURL, s, err)
		}
	}
	if loc.Scheme == "file" {
		if !strings.HasPrefix(rest, "/") {
			return Location{}, fmt.Errorf("%w: %q: a file URL takes an absolute path, file:///dir/file", ErrURL, s)
		}
		loc.Key = rest[1:]
		k := strings.TrimSuffix(loc.Key, "/")
		if k == "" {
			return Location{}, fmt.Errorf("%w: %q: names the whole file system", ErrURL, s)
		}
		if k != path.Clean(k) {
			return Location{}, fmt.Errorf("%w: %q: the path is not clean (\"..\", \".\" or \"//\")", ErrURL, s)
		}
		// The bucket is the directory above the key's first glob
		// character (or its last name), so that the key never names
		// anything outside it.
		dir := loc.Key
		if i := metaIndex(dir); i >= 0 {
			dir = dir[:i]
		}
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			loc.Bucket, loc.Key = loc.Key[:i], loc.Key[i+1:]
		}
		return loc, validKey(s, loc.Key)
	}
	loc.Bucket, loc.Key, _ = strings.Cut(rest, "/")
	if loc.Bucket == "" {
		return Location{}, fmt.Errorf("%w: %q: no bucket: want %s://BUCKET/KEY", ErrURL, s, loc.Scheme)
	}
	if strings.ContainsAny(loc.Bucket, "*?[]{}\\") {
		return Location{}, fmt.Errorf("%w: %q: the bucket name holds glob characters; only keys may", ErrURL, s)
	}
	return loc, validKey(s, loc.Key)
}

// queryIndex is the index of the "?" that starts the query of s: the
// first one followed by a name and "=" (a name holds no "/"), -1 when none is.
func queryIndex(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] != '?' {
			continue
		}
		name, _, ok := strings.Cut(s[i+1:], "=")
		if ok && name != "" && !strings.ContainsAny(name, "/?") {
			return i
		}
	}
	return -1
}

// validKey refuses keys no object store accepts.
func validKey(s, key string) error {
	if strings.ContainsAny(key, "\x00\n\r") {
		return fmt.Errorf("%w: %q: the key holds a control character", ErrURL, s)
	}
	return nil
}

// String is the location as a URL, with its query.
func (l Location) String() string {
	s := l.Name()
	if l.Query != "" {
		s += "?" + l.Query
	}
	return s
}

// Name is the location without its query: what names a bundle (in
// positions, results and shards), SCHEME://BUCKET/KEY.
func (l Location) Name() string {
	if l.Scheme == "file" && l.Bucket == "" {
		return "file:///" + l.Key
	}
	if l.Scheme == "file" {
		return "file:///" + l.Bucket + "/" + l.Key
	}
	return l.Scheme + "://" + l.Bucket + "/" + l.Key
}

// Kind is what a location's key names.
type Kind int

const (
	// Object is a plain key: one bundle.
	Object Kind = iota
	// Prefix is a key ending in "/" (or empty): every object under it.
	Prefix
	// Pattern is a key holding glob characters, matched as local globs
	// are (doublestar: "**" for any depth, "{a,b}", no match of names
	// starting with a dot by wildcards).
	Pattern
)

// Kind says what the key names.
func (l Location) Kind() Kind {
	switch {
	case metaIndex(l.Key) >= 0:
		return Pattern
	case l.Key == "" || strings.HasSuffix(l.Key, "/"):
		return Prefix
	}
	return Object
}

// ListPrefix is the prefix listed for the location: the key up to its
// first glob character (or escaping backslash) for a pattern, the key
// itself otherwise.
func (l Location) ListPrefix() string {
	if i := metaIndex(l.Key); i >= 0 {
		return l.Key[:i]
	}
	return l.Key
}

// metaIndex is the index of the first glob character of key (or a
// backslash, which escapes one), -1 when there is none.
func metaIndex(key string) int {
	return strings.IndexAny(key, "*?[{\\")
}

// ErrNoMatch marks a pattern or prefix that lists no object.
var ErrNoMatch = errors.New("no object matches this pattern")

// Attrs are what a listing or Stat says of an object.
type Attrs struct {
	// Name is the object's URL without the bucket's query (Location.Name).
	Name    string
	Size    int64
	ModTime time.Time
}

// ErrNoCloud is the error of every URL in a build without the
// object-storage clients (Cloud is false).
var ErrNoCloud = errors.New("this build of netmortem (the laptop build) reads local paths, not object storage " +
	"(s3://, gs://, azblob://, file:// URLs); the fleet build does: " +
	"go install -tags fleet github.com/netmortem/netmortem/cmd/netmortem@latest, " +
	"or the container image ghcr.io/netmortem/netmortem (docs/scale.md)")
