package host_test

import (
	"testing"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/host"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// A count of a neighbor table's listing is read as a count, not as a
// table without entries; tables and other counts are not counts.
func TestSniffNeighCount(t *testing.T) {
	own := []string{"fixtures/field/neigh-table-overflow--imroc-guide-arp-cache/arp-an.txt", "parse/testdata/neigh/neigh-count.txt"}
	others := []string{"parse/testdata/neigh/ip-neigh.txt", "parse/testdata/neigh/arp-an.txt", "parse/testdata/neigh/arp-n.txt",
		"parse/testdata/sockets/ss-counts.txt", "parse/testdata/probes/nc-traditional-count.txt", "parse/testdata/sysctl/sysctl-a.txt",
		"parse/testdata/nstat/nstat.txt"}
	parsetest.CheckSniff(t, parse.Formats(), host.NeighCountFormat, own, others)
}
