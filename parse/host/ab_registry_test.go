package host_test

import (
	"testing"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/host"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// ApacheBench's report is read as one; other host outputs are not.
func TestSniffAB(t *testing.T) {
	own := []string{"fixtures/field/ipvs-conn-reuse-delay--k8s-pr-71114/ab.txt"}
	others := append([]string{"parse/testdata/probes/nc-traditional-count.txt", "parse/testdata/sysctl/sysctl-a.txt"},
		parsetest.OtherHostOutputs...)
	parsetest.CheckSniff(t, parse.Formats(), host.ABFormat, own, others)
}

// lsmod's listings, grepped or not, are read as such; other host outputs
// are not.
func TestSniffLsmod(t *testing.T) {
	own := []string{"fixtures/field/nat-reply-untranslated--nemoclaw-2418/lsmod.txt"}
	others := append([]string{"parse/testdata/sysctl/sysctl-a.txt", "fixtures/field/ipvs-conn-reuse-delay--k8s-pr-71114/ab.txt"},
		parsetest.OtherHostOutputs...)
	parsetest.CheckSniff(t, parse.Formats(), host.LsmodFormat, own, others)
}
