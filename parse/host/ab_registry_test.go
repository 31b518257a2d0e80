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
