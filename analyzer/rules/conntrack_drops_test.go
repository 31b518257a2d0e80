package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestConntrackDropsScenarios(t *testing.T) {
	analyzertest.Run(t, rules.ConntrackDrops, "testdata/conntrack-drops")
}
