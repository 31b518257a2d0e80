//go:build fleet

package source

import (
	"context"
	"net/url"
	"os"
	"strconv"

	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcerrors"
	"gocloud.dev/gcp"

	// The cloud bucket drivers of Schemes, registered with blob.OpenBucket.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/s3blob"
)

// Cloud reports whether this build reads object storage (s3://, gs://,
// azblob://): the fleet build (go build -tags fleet) does; the laptop
// build reads file:// URLs only and refuses the others with ErrNoCloud.
const Cloud = true

// Transient reports whether err, from a bucket, is one that may pass
// when tried again: the server's error, throttling, or its deadline.
func Transient(err error) bool {
	switch gcerrors.Code(err) {
	case gcerrors.Internal, gcerrors.ResourceExhausted, gcerrors.DeadlineExceeded:
		return true
	}
	return false
}

// openBucket opens the bucket URL u of scheme.
func openBucket(ctx context.Context, scheme, u string) (*blob.Bucket, error) {
	if scheme == "gs" {
		return openGCS(ctx, u)
	}
	return blob.OpenBucket(ctx, u)
}

// openGCS opens the gs:// bucket URL u. gcsblob's default opener, when it
// finds no credentials, prints a warning to stdout (where batch writes its
// JSON Lines) and goes on with empty ones, whose requests then fail on a
// key that does not parse. Here the credentials are looked up first and
// their error returned; an anonymous bucket is opened without them.
func openGCS(ctx context.Context, u string) (*blob.Bucket, error) {
	pu, err := url.Parse(u)
	if err != nil || os.Getenv("STORAGE_EMULATOR_HOST") != "" {
		return blob.OpenBucket(ctx, u)
	}
	q := pu.Query()
	if anon, _ := strconv.ParseBool(q.Get("anonymous")); anon || q.Get("access_id") == "-" {
		return (&gcsblob.URLOpener{}).OpenBucketURL(ctx, pu)
	}
	if _, err := gcp.DefaultCredentials(ctx); err != nil {
		return nil, err
	}
	return blob.OpenBucket(ctx, u)
}
