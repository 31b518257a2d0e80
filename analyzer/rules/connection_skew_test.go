package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestConnectionSkewScenarios(t *testing.T) {
	analyzertest.Run(t, rules.ConnectionSkew, "testdata/connection-skew")
}
