package source

import (
	"context"
	"net/url"
	"os"
	"strconv"

	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
)

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
