//go:build fleet

package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	// The driver of file:// URLs, registered with blob.OpenBucket; the
	// cloud drivers are in cloud_fleet.go.
	_ "gocloud.dev/blob/fileblob"
)

// Buckets lists and opens objects by URL, keeping each bucket it opened
// (with the options of the URL that first named it) for the objects named
// after it. It is safe for concurrent use; Close closes the buckets.
type Buckets struct {
	// CredentialTimeout bounds opening a bucket and its first request,
	// which is where an SDK looks its credentials up (a metadata server
	// in a closed network may never answer). Zero means 20 seconds.
	CredentialTimeout time.Duration
	// pageSize is how many keys a listing asks for at once (1000, the
	// most S3 returns); tests lower it.
	pageSize int

	mu      sync.Mutex
	buckets map[string]*bucket // by Location.bucketName
}

// bucket is an open bucket and the query it was opened with.
type bucket struct {
	b     *blob.Bucket
	query string
	// used is set once a request on it succeeded: its credentials work.
	used bool
}

// fileblobPageSize is the page size of file:// listings.
const fileblobPageSize = 1 << 16

// New returns a Buckets with no bucket open.
func New() *Buckets {
	return &Buckets{pageSize: 1000, buckets: map[string]*bucket{}}
}

// Close closes every bucket it opened.
func (s *Buckets) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for k, b := range s.buckets {
		errs = append(errs, b.b.Close())
		delete(s.buckets, k)
	}
	return errors.Join(errs...)
}

func (s *Buckets) credentialTimeout() time.Duration {
	if s.CredentialTimeout > 0 {
		return s.CredentialTimeout
	}
	return 20 * time.Second
}

// bucket returns the open bucket of loc, opening it the first time. A
// bucket is opened with the query of the first URL that names it; a later
// URL with another query is an error, since its objects would be read with
// the first one's options.
func (s *Buckets) bucket(ctx context.Context, loc Location) (*bucket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.buckets[loc.bucketName()]; ok {
		if loc.Query != "" && loc.Query != b.query {
			return nil, fmt.Errorf("%s: opened already with the options %q, named here with %q: give every URL of a bucket the same options",
				loc.bucketName(), b.query, loc.Query)
		}
		return b, nil
	}
	u := loc.bucketURL()
	if loc.Scheme == "s3" {
		u = s3URL(loc)
	}
	type opened struct {
		b   *blob.Bucket
		err error
	}
	done := make(chan opened, 1)
	octx, cancel := context.WithTimeout(ctx, s.credentialTimeout())
	defer cancel()
	go func() {
		b, err := openBucket(octx, loc.Scheme, u)
		done <- opened{b, err}
	}()
	var o opened
	select {
	case o = <-done:
	case <-octx.Done():
		// An opener that ignores its context is left behind.
		o.err = octx.Err()
	}
	if o.err != nil {
		return nil, cloudErr(loc, fmt.Errorf("open bucket %s: %w", loc.bucketName(), o.err), s.credentialTimeout())
	}
	b := &bucket{b: o.b, query: loc.Query}
	s.buckets[loc.bucketName()] = b
	return b, nil
}

// s3URL is the bucket URL of an s3 location: path-style addressing is
// turned on when an endpoint is set (in the query, or in
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL as the AWS SDK reads them) and
// the query does not say, since S3-compatible servers (MinIO) on an IP
// address or a host without wildcard DNS serve only path-style requests;
// responses are checked against checksums only when the server requires
// it (response_checksum_validation=when_required), unless the query says.
func s3URL(loc Location) string {
	q := loc.Query
	has := func(k string) bool {
		return slices.ContainsFunc(strings.Split(q, "&"), func(p string) bool { return strings.HasPrefix(p, k+"=") })
	}
	endpoint := has("endpoint") || os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
	add := func(kv string) {
		if q != "" {
			q += "&"
		}
		q += kv
	}
	if endpoint && !has("use_path_style") && !has("s3ForcePathStyle") {
		add("use_path_style=true")
	}
	if !has("response_checksum_validation") {
		// A range read cannot be checked against the whole object's
		// checksum; the SDK would warn of it on every read.
		add("response_checksum_validation=when_required")
	}
	u := "s3://" + loc.Bucket
	if q != "" {
		u += "?" + q
	}
	return u
}

// call runs one request on b. The first request on a bucket is bounded by
// the credential timeout as well as by ctx: it is the one that looks the
// credentials up.
func (s *Buckets) call(ctx context.Context, loc Location, b *bucket, f func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		// fileblob answers from local disk without looking at its
		// context: a call its caller has ended stops here.
		return cloudErr(loc, err, 0)
	}
	s.mu.Lock()
	used := b.used
	s.mu.Unlock()
	if used {
		return cloudErr(loc, f(ctx), 0)
	}
	cctx, cancel := context.WithTimeout(ctx, s.credentialTimeout())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f(cctx) }()
	var err error
	select {
	case err = <-done:
	case <-cctx.Done():
		err = cctx.Err()
	}
	if err == nil {
		s.mu.Lock()
		b.used = true
		s.mu.Unlock()
	}
	if ctx.Err() != nil {
		return cloudErr(loc, err, 0) // the caller's deadline, not the lookup's
	}
	return cloudErr(loc, err, s.credentialTimeout())
}

// Stat returns the attributes of the object named by u (a plain key).
func (s *Buckets) Stat(ctx context.Context, u string) (Attrs, error) {
	loc, err := Parse(u)
	if err != nil {
		return Attrs{}, err
	}
	b, err := s.bucket(ctx, loc)
	if err != nil {
		return Attrs{}, err
	}
	var a *blob.Attributes
	err = s.call(ctx, loc, b, func(ctx context.Context) error {
		var err error
		a, err = b.b.Attributes(ctx, loc.Key)
		return err
	})
	if err != nil {
		return Attrs{}, err
	}
	return Attrs{Name: loc.Name(), Size: a.Size, ModTime: a.ModTime}, nil
}

// List returns the objects u names, sorted by name: every object under a
// prefix (a key ending in "/"), the objects whose keys match a pattern,
// listed from the key before the pattern's first glob character, or the
// one object of a plain key (checked with Stat). Keys ending in "/"
// ("directories") are left out. A listing that fails returns the objects
// listed until then with the error; a pattern or prefix matching nothing
// returns an error wrapping ErrNoMatch.
func (s *Buckets) List(ctx context.Context, u string) ([]Attrs, error) {
	loc, err := Parse(u)
	if err != nil {
		return nil, err
	}
	if loc.Kind() == Object {
		a, err := s.Stat(ctx, u)
		if err != nil {
			return nil, s.prefixHint(ctx, loc, err)
		}
		return []Attrs{a}, nil
	}
	if loc.Kind() == Pattern {
		if _, err := doublestar.Match(loc.Key, ""); err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrURL, u, err)
		}
	}
	b, err := s.bucket(ctx, loc)
	if err != nil {
		return nil, err
	}
	prefix := loc.ListPrefix()
	pageSize := s.pageSize
	if loc.Scheme == "file" {
		// fileblob pages in the order it walks directories, which is
		// not the order of keys ("a/b" before "a-c/d"), and resumes
		// after the last key: pages as large as a directory tree of
		// bundles is. (blob allocates a page's slice up front.)
		pageSize = fileblobPageSize
	}
	var objs []*blob.ListObject
	token := blob.FirstPageToken
	for len(token) > 0 {
		var page []*blob.ListObject
		err := s.call(ctx, loc, b, func(ctx context.Context) error {
			var err error
			page, token, err = b.b.ListPage(ctx, token, pageSize, &blob.ListOptions{Prefix: prefix})
			return err
		})
		if err != nil {
			if len(objs) > 0 {
				err = fmt.Errorf("listing %s cut short after %d objects: %w", loc.Name(), len(objs), err)
			}
			return attrsOf(loc, match(loc, objs)), err
		}
		for _, o := range page {
			if !o.IsDir && !strings.HasSuffix(o.Key, "/") {
				objs = append(objs, o)
			}
		}
	}
	out := attrsOf(loc, match(loc, objs))
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", loc.Name(), ErrNoMatch)
	}
	return out, nil
}

// match keeps the objects whose keys match loc's pattern, as a local glob
// of the same pattern would match files of those names.
func match(loc Location, objs []*blob.ListObject) []*blob.ListObject {
	if loc.Kind() != Pattern {
		return objs
	}
	fsys := newKeyFS()
	byKey := map[string]*blob.ListObject{}
	for _, o := range objs {
		if fs.ValidPath(o.Key) {
			fsys.add(o.Key)
			byKey[o.Key] = o
		}
	}
	keys, err := doublestar.Glob(fsys, loc.Key, doublestar.WithNoHidden(), doublestar.WithFilesOnly())
	if err != nil {
		return nil // the pattern was validated before listing
	}
	out := make([]*blob.ListObject, 0, len(keys))
	for _, k := range keys {
		if o := byKey[k]; o != nil {
			out = append(out, o)
		}
	}
	return out
}

func attrsOf(loc Location, objs []*blob.ListObject) []Attrs {
	out := make([]Attrs, 0, len(objs))
	for _, o := range objs {
		l := loc
		l.Key = o.Key
		out = append(out, Attrs{Name: l.Name(), Size: o.Size, ModTime: o.ModTime})
	}
	slices.SortFunc(out, func(a, b Attrs) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Open opens the object named by u for reading at any offset: a
// *Reader of its size, reading through range requests (see Reader).
func (s *Buckets) Open(ctx context.Context, u string) (*Reader, error) {
	a, err := s.Stat(ctx, u)
	if err != nil {
		return nil, err
	}
	return s.OpenObject(ctx, a)
}

// OpenObject opens the object of a (from List or Stat) as Open does,
// trusting its size rather than asking for its attributes again.
func (s *Buckets) OpenObject(ctx context.Context, a Attrs) (*Reader, error) {
	loc, err := Parse(a.Name)
	if err != nil {
		return nil, err
	}
	b, err := s.bucket(ctx, loc)
	if err != nil {
		return nil, err
	}
	return &Reader{ctx: ctx, loc: loc, b: b.b, attrs: a}, nil
}

// cloudErr adds to err what to do about it: for a refusal or a missing
// bucket, which credentials the scheme's SDK reads. err is kept in the
// chain; nil stays nil.
func cloudErr(loc Location, err error, timeout time.Duration) error {
	if err == nil {
		return nil
	}
	code := httpCode(gcerrors.Code(err), err)
	switch {
	case code == gcerrors.NotFound:
		return fmt.Errorf("%s: no such object or bucket: %w", loc.Name(), err)
	case code == gcerrors.PermissionDenied:
		return fmt.Errorf("%s: access denied (%s): %w", loc.Name(), credentialHint(loc.Scheme), err)
	case timeout > 0 && errors.Is(err, context.DeadlineExceeded) && loc.Scheme != "file":
		return fmt.Errorf("%s: no answer within %s (from the server, or from a metadata server asked for "+
			"credentials: in a closed network, %s): %w", loc.Name(), timeout, credentialHint(loc.Scheme), err)
	case loc.Scheme != "file" && looksLikeCredentials(err):
		return fmt.Errorf("%s: %w (%s)", loc.Name(), err, credentialHint(loc.Scheme))
	}
	return fmt.Errorf("%s: %w", loc.Name(), err)
}

// httpCode corrects gocloud's code for err by the HTTP status an S3
// server answered with: gocloud's s3blob takes any operation error whose
// text holds "301" (its sign of a bucket in another region) for a missing
// bucket, and request IDs are random hex, so a refusal (403) can read as
// NotFound. A NotFound whose answer was neither a 404 nor a 301 is Unknown.
func httpCode(code gcerrors.ErrorCode, err error) gcerrors.ErrorCode {
	var resp interface{ HTTPStatusCode() int }
	if code == gcerrors.NotFound && errors.As(err, &resp) {
		if s := resp.HTTPStatusCode(); s != 404 && s != 301 {
			return gcerrors.Unknown
		}
	}
	return code
}

// looksLikeCredentials reports whether an SDK's error is about missing or
// refused credentials.
func looksLikeCredentials(err error) bool {
	m := strings.ToLower(err.Error())
	for _, s := range []string{"credential", "accessdenied", "access denied", "signaturedoesnotmatch", "invalidaccesskeyid",
		"unauthenticated", "authorization", "account", "token", "region"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// credentialHint says which environment variables a scheme's SDK reads.
func credentialHint(scheme string) string {
	switch scheme {
	case "s3":
		return "the AWS SDK reads AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, a web identity, " +
			"the instance's role), AWS_REGION, and AWS_ENDPOINT_URL_S3 for an S3-compatible server such as MinIO"
	case "gs":
		return "set GOOGLE_APPLICATION_CREDENTIALS to a service account's key file, or run " +
			"`gcloud auth application-default login`; on GCE and GKE the metadata server is asked"
	case "azblob":
		return "set AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN, or " +
			"AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with AZURE_CLIENT_ID, AZURE_TENANT_ID and " +
			"AZURE_CLIENT_SECRET"
	}
	return ""
}

// prefixHint adds to err, a missing object's, that its key is a prefix of
// objects, when it is: a prefix is named with its final "/".
func (s *Buckets) prefixHint(ctx context.Context, loc Location, err error) error {
	if gcerrors.Code(err) != gcerrors.NotFound {
		return err
	}
	b, berr := s.bucket(ctx, loc)
	if berr != nil {
		return err
	}
	var page []*blob.ListObject
	lerr := s.call(ctx, loc, b, func(ctx context.Context) error {
		var err error
		page, _, err = b.b.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: loc.Key + "/"})
		return err
	})
	if lerr != nil || len(page) == 0 {
		return err
	}
	return fmt.Errorf("%w; objects are stored under it: %s/ (with its /) names them", err, loc.Name())
}
