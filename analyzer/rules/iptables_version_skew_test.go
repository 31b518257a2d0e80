package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestIPTablesVersionSkew(t *testing.T) {
	analyzertest.Run(t, rules.IPTablesVersionSkew, "testdata/iptables-version-skew")
}
