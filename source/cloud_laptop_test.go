//go:build !fleet

package source

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestLaptopBuildRefusesURLs checks that the laptop build says, for every
// scheme, that it does not read object storage and which build does.
func TestLaptopBuildRefusesURLs(t *testing.T) {
	s := New()
	defer s.Close()
	for _, u := range []string{"s3://tickets/a.tar.gz", "gs://b/x/", "azblob://c/**/*.tgz", "file:///tmp/b/"} {
		_, err := s.List(context.Background(), u)
		if !errors.Is(err, ErrNoCloud) {
			t.Errorf("List(%s) = %v, want ErrNoCloud", u, err)
			continue
		}
		for _, want := range []string{u[:strings.Index(u, "://")], "not object storage", "the fleet build does", "-tags fleet"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("List(%s): %q does not say %q", u, err, want)
			}
		}
	}
	if _, err := s.Open(context.Background(), "s3://tickets/a.tar.gz"); !errors.Is(err, ErrNoCloud) {
		t.Errorf("Open = %v, want ErrNoCloud", err)
	}
}
