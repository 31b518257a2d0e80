package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestLBProvisionFailed(t *testing.T) {
	analyzertest.Run(t, rules.LBProvisionFailed, "testdata/lb-provision-failed")
}
