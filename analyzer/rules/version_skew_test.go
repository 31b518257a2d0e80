package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestVersionSkewScenarios(t *testing.T) {
	analyzertest.Run(t, rules.VersionSkew, "testdata/version-skew")
}
