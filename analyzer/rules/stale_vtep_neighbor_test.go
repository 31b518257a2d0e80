package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestStaleVTEPNeighbor(t *testing.T) {
	analyzertest.Run(t, rules.StaleVTEPNeighbor, "testdata/stale-vtep-neighbor")
}
