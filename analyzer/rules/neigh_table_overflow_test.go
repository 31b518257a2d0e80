package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestNeighTableOverflow(t *testing.T) {
	analyzertest.Run(t, rules.NeighTableOverflow, "testdata/neigh-table-overflow")
}
