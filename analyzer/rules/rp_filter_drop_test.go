package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestRPFilterDrop(t *testing.T) {
	analyzertest.Run(t, rules.RPFilterDrop, "testdata/rp-filter-drop")
}
