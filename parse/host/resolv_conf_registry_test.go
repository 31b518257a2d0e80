package host_test

import (
	"testing"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/host"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// A resolv.conf, bare or below its cat, is read as one; other host outputs
// are not.
func TestSniffResolvConf(t *testing.T) {
	own := []string{"fixtures/field/coredns-loop--k8s-issue-71705/resolv.conf", "parse/testdata/resolv/systemd-resolved-stub.txt"}
	others := []string{"parse/testdata/neigh/ip-neigh.txt", "parse/testdata/neigh/neigh-count.txt", "parse/testdata/sysctl/sysctl-a.txt",
		"parse/testdata/nstat/nstat.txt", "fixtures/field/coredns-loop--k8s-issue-71705/coredns.log", "parse/testdata/logs/coredns-1.11.1.log"}
	parsetest.CheckSniff(t, parse.Formats(), host.ResolvConfFormat, own, others)
}
