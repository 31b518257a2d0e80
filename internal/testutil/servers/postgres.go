package servers

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// PG is a PostgreSQL cluster on loopback, trusting its one role.
type PG struct {
	// Host and Port are where it listens (127.0.0.1).
	Host string
	Port int
	// User is the role tests connect as: "netmortem", a superuser.
	User string
	bin  string // its binaries' directory
	cred *syscall.Credential
}

var pg struct {
	once sync.Once
	pg   *PG
	err  error
	n    atomic.Int64
}

// Postgres returns the PostgreSQL cluster of this test binary, started on
// 127.0.0.1 at the first call (with fsync off: it holds test data only).
// It runs as the postgres user when the tests run as root, since
// PostgreSQL refuses root. Its process ends with the test binary; its data
// directory is a temporary one, removed by the next test binary that starts
// a cluster. It skips t (or fails it on CI) when PostgreSQL is not
// installed.
func Postgres(t testing.TB) *PG {
	t.Helper()
	pg.once.Do(func() { pg.pg, pg.err = startPostgres() })
	if pg.err != nil {
		var nf notInstalled
		if errors.As(pg.err, &nf) {
			unavailable(t, "PostgreSQL", pg.err)
		}
		t.Fatalf("PostgreSQL: %v", pg.err)
	}
	return pg.pg
}

// notInstalled says that PostgreSQL's binaries were not found.
type notInstalled struct{ error }

// Database creates a fresh, empty database for t and returns its URL
// ("postgres://netmortem@127.0.0.1:PORT/NAME?sslmode=disable"). It is
// dropped when t ends.
func (p *PG) Database(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), pg.n.Add(1))
	if out, err := p.command("createdb", name).CombinedOutput(); err != nil {
		t.Fatalf("createdb %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() { p.command("dropdb", "--force", "--if-exists", name).Run() })
	return p.URL(name)
}

// URL is the connection URL of database name.
func (p *PG) URL(name string) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", p.User, p.Host, p.Port, name)
}

// command runs one of the cluster's client programs against it.
func (p *PG) command(name string, args ...string) *exec.Cmd {
	args = append([]string{"-h", p.Host, "-p", strconv.Itoa(p.Port), "-U", p.User}, args...)
	return exec.Command(filepath.Join(p.bin, name), args...)
}

// pgBin finds the newest installed PostgreSQL's binaries: pg_config's
// directory, else Debian's /usr/lib/postgresql/N/bin.
func pgBin() (string, error) {
	var dirs []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, string(trimSpace(out)))
	}
	deb, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(deb, func(i, j int) bool { return versionOf(deb[i]) > versionOf(deb[j]) })
	dirs = append(dirs, deb...)
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", notInstalled{fmt.Errorf("no initdb in pg_config --bindir nor /usr/lib/postgresql/*/bin")}
}

func versionOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

// startPostgres makes a cluster in a new temporary directory and starts
// it.
func startPostgres() (*PG, error) {
	bin, err := pgBin()
	if err != nil {
		return nil, err
	}
	removeStale()
	dir, err := os.MkdirTemp("", "netmortem-pg-")
	if err != nil {
		return nil, err
	}
	p := &PG{Host: "127.0.0.1", User: "netmortem", bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, notInstalled{fmt.Errorf("running as root, and PostgreSQL refuses root: no postgres user to run it as: %w", err)}
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", p.User, "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	for tries := 0; ; tries++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		p.Port = port
		cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-h", p.Host, "-p", strconv.Itoa(port), "-k", dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
		var out syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := startKept(cmd); err != nil {
			return nil, err
		}
		err = waitFor(cmd, &out, 60*time.Second, func() bool {
			c, err := net.DialTimeout("tcp", net.JoinHostPort(p.Host, strconv.Itoa(port)), time.Second)
			if err != nil {
				return false
			}
			c.Close()
			return p.command("pg_isready", "-q").Run() == nil
		})
		if err == nil {
			return p, nil
		}
		if tries == 2 {
			return nil, err
		}
	}
}

// removeStale removes the data directories of clusters whose test binary
// has ended (their postmaster.pid names a process that is gone).
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "netmortem-pg-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid"))
		if err == nil {
			var pid int
			fmt.Sscan(string(b), &pid)
			if pid > 0 && syscall.Kill(pid, 0) == nil {
				continue // still running
			}
		} else if fi, err := os.Stat(d); err != nil || time.Since(fi.ModTime()) < time.Hour {
			continue // being made now, perhaps
		}
		os.RemoveAll(d)
	}
}

// Query runs sql in the database of url (from Database) with psql and
// returns its unaligned output, rows on lines, fields separated by '|'.
func (p *PG) Query(t testing.TB, url, sql string) string {
	t.Helper()
	out, err := p.TryQuery(url, sql)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TryQuery is Query returning its error (a table not made yet, say)
// rather than failing the test.
func (p *PG) TryQuery(url, sql string) (string, error) {
	out, err := p.command("psql", "-d", url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("psql %q: %w: %s", sql, err, out)
	}
	return string(trimSpace(out)), nil
}
