//go:build !fleet

package source

import (
	"context"
	"fmt"
	"time"
)

// Cloud reports whether this build reads object storage (s3://, gs://,
// azblob://, file://): the fleet build (go build -tags fleet) does,
// through gocloud.dev/blob; this one, the laptop build, carries no
// object-storage client and refuses every URL with ErrNoCloud.
const Cloud = false

// Buckets would list and open objects by URL; in this build every call
// fails with ErrNoCloud (see Cloud).
type Buckets struct {
	// CredentialTimeout is kept for the fleet build's API; unused here.
	CredentialTimeout time.Duration
}

// New returns Buckets that refuse every URL (see Cloud).
func New() *Buckets { return &Buckets{} }

// Close does nothing.
func (s *Buckets) Close() error { return nil }

// Stat fails with ErrNoCloud.
func (s *Buckets) Stat(_ context.Context, u string) (Attrs, error) { return Attrs{}, noCloud(u) }

// List fails with ErrNoCloud.
func (s *Buckets) List(_ context.Context, u string) ([]Attrs, error) { return nil, noCloud(u) }

// Open fails with ErrNoCloud.
func (s *Buckets) Open(_ context.Context, u string) (*Reader, error) { return nil, noCloud(u) }

// OpenObject fails with ErrNoCloud.
func (s *Buckets) OpenObject(_ context.Context, a Attrs) (*Reader, error) {
	return nil, noCloud(a.Name)
}

// noCloud is ErrNoCloud for the URL u.
func noCloud(u string) error {
	name := u
	if loc, err := Parse(u); err == nil {
		name = loc.Name()
	}
	return fmt.Errorf("%s: %w", name, ErrNoCloud)
}

// Reader would read an object at any offset; in this build none is ever
// opened.
type Reader struct{ attrs Attrs }

// Size is the object's size.
func (r *Reader) Size() int64 { return r.attrs.Size }

// Attrs are the object's attributes.
func (r *Reader) Attrs() Attrs { return r.attrs }

// Requests is the number of range requests made: none.
func (r *Reader) Requests() int { return 0 }

// ReadAt fails with ErrNoCloud.
func (r *Reader) ReadAt([]byte, int64) (int, error) { return 0, noCloud(r.attrs.Name) }

// Err is nil: no request failed.
func (r *Reader) Err() error { return nil }

// Close does nothing.
func (r *Reader) Close() error { return nil }

// Transient reports whether err may pass when tried again: in this build
// no bucket error does.
func Transient(error) bool { return false }
