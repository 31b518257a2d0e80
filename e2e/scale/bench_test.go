package scale

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil/servers"
)

// BenchmarkIndexedJob measures the bundles per second the simulated Indexed
// Job clears with 1, 2 and 4 processes of one worker each (-j 1, as a pod of
// one CPU runs it), reading 1,000 bundles from MinIO and writing to
// PostgreSQL, and a local batch of one worker writing JSON Lines for
// comparison. MinIO and PostgreSQL share the machine with the processes.
func BenchmarkIndexedJob(b *testing.B) {
	const n = 1000
	s3 := servers.MinIO(b)
	pg := servers.Postgres(b)
	bin := netmortem(b)
	ts := tickets(b, n)
	store(b, s3, "bench", ts)
	local := b.TempDir()
	copyLocal(b, s3, "bench", local, ts)
	b.Run("local-jsonl/procs=1", func(b *testing.B) {
		var elapsed, cpu time.Duration
		for b.Loop() {
			t0 := time.Now()
			sh := startLocal(b, bin, local, filepath.Join(b.TempDir(), "out.jsonl"))
			sh.wait(b)
			elapsed += time.Since(t0)
			cpu += sh.cpu()
		}
		report(b, n, elapsed, cpu)
	})
	for _, procs := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("s3-postgres/procs=%d", procs), func(b *testing.B) {
			var elapsed, cpu time.Duration
			for b.Loop() {
				db := pg.Database(b)
				t0 := time.Now()
				shards := make([]*shard, procs)
				for i := range shards {
					shards[i] = start(b, bin, s3, i, procs, "-q", "-j", "1", "--db", db, "s3://bench/tickets/**/*.tar.gz")
				}
				for _, sh := range shards {
					sh.wait(b)
					cpu += sh.cpu()
				}
				elapsed += time.Since(t0)
			}
			report(b, n, elapsed, cpu)
		})
	}
}

// report gives the bundles per second of wall time, and the CPU time the
// netmortem processes spent per bundle (MinIO's and PostgreSQL's not
// counted).
func report(b *testing.B, n int, elapsed, cpu time.Duration) {
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "bundles/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n*b.N), "cpu-ms/bundle")
}
