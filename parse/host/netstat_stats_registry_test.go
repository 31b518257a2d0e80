package host_test

import (
	"testing"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/host"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// netstat -s, whole or cut with grep, is read as counters; nstat's
// listings and netstat's socket tables are not netstat -s.
func TestSniffNetstatStats(t *testing.T) {
	own := []string{"parse/testdata/nstat/netstat-s.txt", "fixtures/incidents/listen-queue-overflow/netstat-s.txt"}
	others := []string{"parse/testdata/nstat/nstat.txt", "parse/testdata/nstat/nstat-az.txt", "parse/testdata/sockets/ss-counts.txt",
		"parse/testdata/sysctl/sysctl-a.txt", "parse/testdata/neigh/neigh-count.txt", "fixtures/incidents/listen-queue-overflow/ss-lnt.txt"}
	parsetest.CheckSniff(t, parse.Formats(), host.NetstatStatsFormat, own, others)
}
