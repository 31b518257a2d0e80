package scale

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil/servers"
)

// TestIndexedJob runs the Indexed Job of deploy/kubernetes on one machine:
// four `netmortem batch --shard auto --resume --db postgres://...`
// processes, indices 0 to 3, over 2,000 bundles in a MinIO bucket. The
// process of index 1 is killed (SIGKILL, as a node loss does) once the
// database holds a quarter of the bundles, and started again, as the Job
// retries its index. The database must then hold every bundle exactly once,
// with the findings a local batch over the same bundles writes to JSON
// Lines, and every `netmortem query` must answer the same over both.
func TestIndexedJob(t *testing.T) {
	const (
		n      = 2000
		procs  = 4
		bucket = "support"
		killed = 1
	)
	s3 := servers.MinIO(t)
	pg := servers.Postgres(t)
	db := pg.Database(t)
	bin := netmortem(t)
	ts := tickets(t, n)
	store(t, s3, bucket, ts)
	local := t.TempDir()
	copyLocal(t, s3, bucket, local, ts)

	args := []string{"--resume", "-j", "2", "--db", db, "s3://" + bucket + "/tickets/**/*.tar.gz"}
	shards := make([]*shard, procs)
	for i := range shards {
		shards[i] = start(t, bin, s3, i, procs, args...)
	}
	// Kill index 1 midway: once a quarter of the bundles are in.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		// The table is there once the first process has migrated.
		out, _ := pg.TryQuery(db, "select count(*) from bundles")
		if rows, _ := strconv.Atoi(out); rows >= n/4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d bundles in the database after 5 minutes", n/4)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := shards[killed].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("shard %d had ended before it could be killed (%v): not a test of a kill midway", killed, err)
	}
	<-shards[killed].done
	if ws, ok := shards[killed].cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("shard %d ended with %v, not by the kill", killed, shards[killed].cmd.ProcessState)
	}
	first := shards[killed].stderr.String()
	shards[killed] = start(t, bin, s3, killed, procs, args...)
	for _, sh := range shards {
		sh.wait(t)
	}
	// The restarted process found some of its bundles done, and did not
	// do them again.
	m := regexp.MustCompile(`(\d+) bundles: (\d+) analyzed now, (\d+) already done`).FindStringSubmatch(shards[killed].stderr.String())
	if m == nil {
		t.Fatalf("restarted shard: no summary:\n%s", shards[killed].stderr.String())
	}
	if done, _ := strconv.Atoi(m[3]); done == 0 || !strings.Contains(first, "[") {
		t.Fatalf("restarted shard: %s, after a first run that printed:\n%.2000s", m[0], first)
	}

	// Every bundle once.
	var want []string
	for _, tk := range ts {
		want = append(want, "s3://"+bucket+"/"+tk.key)
	}
	sort.Strings(want)
	got := strings.Split(pg.Query(t, db, "select bundle from bundles order by bundle collate \"C\""), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the database holds %d bundles, want the %d stored, each once", len(got), len(want))
	}

	// The same findings as a local batch.
	out := filepath.Join(t.TempDir(), "local.jsonl")
	batch := startLocal(t, bin, local, out)
	batch.wait(t)
	lines := readLines(t, out)
	if len(lines) != n {
		t.Fatalf("local batch: %d lines, want %d", len(lines), n)
	}
	var findings int
	statuses := map[string]int{}
	for _, l := range lines {
		fps := map[string]bool{}
		for _, f := range l.Findings {
			fps[f.Fingerprint] = true
		}
		findings += len(fps)
		statuses[l.Status]++
	}
	if findings == 0 {
		t.Fatal("no findings in 2,000 incident bundles")
	}
	if got := pg.Query(t, db, "select count(*) from findings"); got != strconv.Itoa(findings) {
		t.Errorf("the database holds %s findings, the local batch %d", got, findings)
	}
	var st []string
	for s, c := range statuses {
		st = append(st, fmt.Sprintf("%s|%d", s, c))
	}
	sort.Strings(st)
	if got := pg.Query(t, db, "select status, count(*) from bundles group by status order by status"); got != strings.Join(st, "\n") {
		t.Errorf("statuses in the database:\n%s\nin the local batch:\n%s", got, strings.Join(st, "\n"))
	}

	// netmortem query answers the same over both.
	prefix := regexp.MustCompile(`"(s3://` + bucket + `/|` + regexp.QuoteMeta(local+string(filepath.Separator)) + `)`)
	for _, q := range [][]string{{"rules"}, {"weeks"}, {"versions"}, {"fingerprints"}, {"weeks", "--rule", "stale-dnat"}} {
		a := query(t, bin, append(q, "-o", "json", "--db", db)...)
		b := query(t, bin, append(q, "-o", "json", out)...)
		if a != b {
			t.Errorf("query %s: the database and the JSON Lines differ:\n%s\n%s", strings.Join(q, " "), a, b)
		}
		if q[0] == "fingerprints" {
			var fps []struct {
				Fingerprint string `json:"fingerprint"`
				Bundles     int    `json:"bundles"`
			}
			if err := json.Unmarshal([]byte(a), &fps); err != nil || len(fps) == 0 {
				t.Fatalf("query fingerprints: %v: %s", err, a)
			}
			a := prefix.ReplaceAllString(query(t, bin, "bundles", fps[0].Fingerprint, "-o", "json", "--db", db), `"`)
			b := prefix.ReplaceAllString(query(t, bin, "bundles", fps[0].Fingerprint, "-o", "json", out), `"`)
			if a != b || strings.Count(a, `"bundle"`) != fps[0].Bundles {
				t.Errorf("query bundles %s (%d bundles): the database and the JSON Lines differ:\n%.3000s\n%.3000s", fps[0].Fingerprint, fps[0].Bundles, a, b)
			}
		}
	}
}

// startLocal runs a batch over the local copies, writing JSON Lines.
func startLocal(t testing.TB, bin, dir, out string) *shard {
	t.Helper()
	sh := &shard{index: -1, done: make(chan error, 1)}
	sh.cmd = exec.Command(bin, "batch", "-q", "-j", "2", "--out", out, filepath.Join(dir, "tickets", "**", "*.tar.gz"))
	sh.cmd.Stderr = &sh.stderr
	if err := sh.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { sh.done <- sh.cmd.Wait() }()
	return sh
}

// line is what the test reads of a JSON line.
type line struct {
	Bundle   string `json:"bundle"`
	Status   string `json:"status"`
	Findings []struct {
		Fingerprint string `json:"fingerprint"`
	} `json:"findings"`
}

func readLines(t testing.TB, path string) []line {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []line
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, l)
	}
	return out
}
