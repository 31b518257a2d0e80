//go:build fleet

package source

import (
	"fmt"
	"net/http"
	"testing"

	smithy "github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"gocloud.dev/gcerrors"
)

// gocloud's s3blob reads "301" anywhere in an operation error as a bucket
// in another region, NotFound; the random request IDs of a 403 can hold
// it. A NotFound is kept only for a 404 or a 301.
func TestHTTPCode(t *testing.T) {
	answer := func(status int, code string) error {
		return fmt.Errorf("blob: %w", &smithy.OperationError{ServiceID: "S3", OperationName: "ListObjectsV2",
			Err: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
				Err: &smithy.GenericAPIError{Code: code, Message: "HostID: 3d5bb836301a80c6"}}})
	}
	for _, c := range []struct {
		code gcerrors.ErrorCode
		err  error
		want gcerrors.ErrorCode
	}{
		{gcerrors.NotFound, answer(403, "SignatureDoesNotMatch"), gcerrors.Unknown},
		{gcerrors.NotFound, answer(404, "NoSuchBucket"), gcerrors.NotFound},
		{gcerrors.NotFound, answer(301, "PermanentRedirect"), gcerrors.NotFound},
		{gcerrors.NotFound, fmt.Errorf("no HTTP answer"), gcerrors.NotFound},
		{gcerrors.PermissionDenied, answer(403, "AccessDenied"), gcerrors.PermissionDenied},
	} {
		if got := httpCode(c.code, c.err); got != c.want {
			t.Errorf("%v, %v: %v, want %v", c.code, c.err, got, c.want)
		}
	}
}
