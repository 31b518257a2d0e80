package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestIPVSStaleRealServer(t *testing.T) {
	analyzertest.Run(t, rules.IPVSStaleRealServer, "testdata/ipvs-stale-realserver")
}
