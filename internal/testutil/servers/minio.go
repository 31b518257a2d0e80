package servers

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"
)

// S3 is a MinIO server on loopback, with one set of credentials.
type S3 struct {
	// Endpoint is its URL: "http://127.0.0.1:PORT".
	Endpoint string
	// AccessKey and SecretKey are its root credentials, Region the
	// region it signs for.
	AccessKey, SecretKey, Region string
	// Dir is where it keeps the objects.
	Dir string
}

// MinIO starts a fresh MinIO server on 127.0.0.1 for t, with its own empty
// data directory, and stops it when t ends. It skips t (or fails it on CI)
// when the minio binary is in neither PATH nor GOBIN.
func MinIO(t testing.TB) *S3 {
	t.Helper()
	bin, err := lookBinary("minio", gobin())
	if err != nil {
		unavailable(t, "MinIO", err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	console, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &S3{Endpoint: "http://127.0.0.1:" + itoa(port), AccessKey: "netmortem", SecretKey: "netmortem-secret", Region: "us-east-1", Dir: t.TempDir()}
	cmd := exec.Command(bin, "server", "--quiet", "--address", "127.0.0.1:"+itoa(port), "--console-address", "127.0.0.1:"+itoa(console), s.Dir)
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+s.AccessKey, "MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_REGION="+s.Region, "MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := startKept(cmd); err != nil {
		unavailable(t, "MinIO", err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	err = waitFor(cmd, &out, 60*time.Second, func() bool {
		// Health answers before the object layer is up: a signed
		// listing of the buckets answers only after.
		return s.do(http.MethodGet, "/", nil) == nil
	})
	if err != nil {
		t.Fatalf("MinIO: %v", err)
	}
	return s
}

// Setenv sets, for t, the variables the AWS SDK reads to reach s:
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION and
// AWS_ENDPOINT_URL_S3. It clears AWS_PROFILE and points the SDK's shared
// files at nothing, so that no credentials of the machine are used.
func (s *S3) Setenv(t testing.TB) {
	for k, v := range s.Env() {
		t.Setenv(k, v)
	}
}

// Env is what Setenv sets, for a child process.
func (s *S3) Env() map[string]string {
	return map[string]string{
		"AWS_ACCESS_KEY_ID": s.AccessKey, "AWS_SECRET_ACCESS_KEY": s.SecretKey, "AWS_REGION": s.Region,
		"AWS_ENDPOINT_URL_S3": s.Endpoint, "AWS_PROFILE": "", "AWS_SESSION_TOKEN": "",
		"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_EC2_METADATA_DISABLED": "true",
	}
}

// MakeBucket creates a bucket.
func (s *S3) MakeBucket(t testing.TB, bucket string) {
	t.Helper()
	if err := s.do(http.MethodPut, "/"+bucket, nil); err != nil {
		t.Fatalf("make bucket %s: %v", bucket, err)
	}
}

// Put stores data as the object bucket/key.
func (s *S3) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	if err := s.PutObject(bucket, key, data); err != nil {
		t.Fatal(err)
	}
}

// PutObject stores data as the object bucket/key; safe to call from
// several goroutines.
func (s *S3) PutObject(bucket, key string, data []byte) error {
	if err := s.do(http.MethodPut, "/"+bucket+"/"+escapeKey(key), data); err != nil {
		return fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	return nil
}

// do sends one request signed with AWS Signature Version 4.
func (s *S3) do(method, path string, body []byte) error {
	req, err := http.NewRequest(method, s.Endpoint+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	s.sign(req, body, time.Now().UTC())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", resp.Status, msg)
	}
	return nil
}

// sign adds the Signature Version 4 headers to req.
func (s *S3) sign(req *http.Request, body []byte, now time.Time) {
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	amzDate := now.Format("20060102T150405Z")
	day := now.Format("20060102")
	req.Header.Set("x-amz-date", amzDate)
	req.Header.Set("x-amz-content-sha256", payload)
	signed := "host;x-amz-content-sha256;x-amz-date"
	canonical := req.Method + "\n" + req.URL.EscapedPath() + "\n" + req.URL.RawQuery + "\n" +
		"host:" + req.URL.Host + "\n" + "x-amz-content-sha256:" + payload + "\n" + "x-amz-date:" + amzDate + "\n\n" +
		signed + "\n" + payload
	scope := day + "/" + s.Region + "/s3/aws4_request"
	ch := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(ch[:])
	key := hmacSHA256([]byte("AWS4"+s.SecretKey), day)
	key = hmacSHA256(key, s.Region)
	key = hmacSHA256(key, "s3")
	key = hmacSHA256(key, "aws4_request")
	sig := hex.EncodeToString(hmacSHA256(key, toSign))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+s.AccessKey+"/"+scope+
		", SignedHeaders="+signed+", Signature="+sig)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// escapeKey escapes an object key for a request path as S3 expects:
// everything but unreserved characters and '/'.
func escapeKey(key string) string {
	var b []byte
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' {
			b = append(b, c)
		} else {
			b = append(b, fmt.Sprintf("%%%02X", c)...)
		}
	}
	return string(b)
}

// Modified is the modification time S3 gives the object bucket/key (to the
// second, as its Last-Modified header has it).
func (s *S3) Modified(bucket, key string) (time.Time, error) {
	req, err := http.NewRequest(http.MethodHead, s.Endpoint+"/"+bucket+"/"+escapeKey(key), nil)
	if err != nil {
		return time.Time{}, err
	}
	s.sign(req, nil, time.Now().UTC())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return time.Time{}, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return time.Time{}, fmt.Errorf("head %s/%s: %s", bucket, key, resp.Status)
	}
	return http.ParseTime(resp.Header.Get("Last-Modified"))
}
