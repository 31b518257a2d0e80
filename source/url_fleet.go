//go:build fleet

package source

// bucketURL is the URL gocloud opens the bucket with: the scheme, the
// bucket and the query.
func (l Location) bucketURL() string {
	u := l.Scheme + "://" + l.Bucket
	if l.Scheme == "file" {
		u = "file:///" + l.Bucket
	}
	if l.Query != "" {
		u += "?" + l.Query
	}
	return u
}

// bucketName names the bucket in messages and in the cache of open
// buckets: the URL without the query.
func (l Location) bucketName() string {
	if l.Scheme == "file" {
		return "file:///" + l.Bucket
	}
	return l.Scheme + "://" + l.Bucket
}
