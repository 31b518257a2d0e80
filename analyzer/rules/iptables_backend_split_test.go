package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestIPTablesBackendSplit(t *testing.T) {
	analyzertest.Run(t, rules.IPTablesBackendSplit, "testdata/iptables-backend-split")
}
