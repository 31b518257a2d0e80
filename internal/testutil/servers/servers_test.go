package servers

import (
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMinIO starts MinIO, makes a bucket, stores an object and reads it
// back anonymously-denied and signed.
func TestMinIO(t *testing.T) {
	s := MinIO(t)
	s.MakeBucket(t, "tickets")
	s.Put(t, "tickets", "a b/c+d.txt", []byte("hello"))
	if err := s.PutObject("nobucket", "x", nil); err == nil || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Fatalf("put into a missing bucket: %v, want NoSuchBucket", err)
	}
	// Unsigned: refused (the server checks credentials).
	resp, err := http.Get(s.Endpoint + "/tickets/" + escapeKey("a b/c+d.txt"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("anonymous GET: %s, want 403", resp.Status)
	}
	req, _ := http.NewRequest(http.MethodGet, s.Endpoint+"/tickets/"+escapeKey("a b/c+d.txt"), nil)
	s.sign(req, nil, time.Now().UTC())
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "hello" {
		t.Fatalf("signed GET: %s %q, want 200 hello", resp.Status, b)
	}
}

// TestPostgres creates two databases and runs SQL in one.
func TestPostgres(t *testing.T) {
	p := Postgres(t)
	a, b := p.Database(t), p.Database(t)
	if a == b {
		t.Fatalf("two databases with one URL %s", a)
	}
	name := a[strings.LastIndex(a, "/")+1 : strings.Index(a, "?")]
	out, err := exec.Command(filepath.Join(p.bin, "psql"), "-h", p.Host, "-p", itoa(p.Port), "-U", p.User, "-d", name,
		"-Atc", "create table t(x int); insert into t values (41),(1); select sum(x) from t").CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || lines[len(lines)-1] != "42" {
		t.Fatalf("psql: %v: %q, want 42", err, out)
	}
}

// TestGobinFromGoEnv checks where gobin looks when GOBIN is not in the
// environment: go env's GOBIN when the go env file sets it, else GOPATH/bin
// (go env then prints GOBIN as an empty first line).
func TestGobinFromGoEnv(t *testing.T) {
	gopath := t.TempDir()
	t.Setenv("GOBIN", "")
	t.Setenv("GOPATH", gopath)
	t.Setenv("GOENV", filepath.Join(t.TempDir(), "goenv"))
	if got, want := gobin(), filepath.Join(gopath, "bin"); got != want {
		t.Errorf("gobin() = %q with GOBIN unset, want GOPATH/bin %q", got, want)
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "env", "-w", "GOBIN="+bin).CombinedOutput(); err != nil {
		t.Fatalf("go env -w GOBIN: %v: %s", err, out)
	}
	if got := gobin(); got != bin {
		t.Errorf("gobin() = %q with GOBIN in the go env file, want %q", got, bin)
	}
}
